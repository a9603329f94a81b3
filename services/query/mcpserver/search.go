package mcpserver

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/graphrag/graphrag/services/query/ask"
	"github.com/graphrag/graphrag/services/query/engine"
)

// Detail levels of the search tool's result.
const (
	DetailConcise = "concise"
	DetailFull    = "full"
)

// snippetBytes bounds the text of a passage or theme in a concise result: enough for a
// model to judge and quote it, without the whole retrieval context (18-45 KB a call).
const snippetBytes = 320

// SearchResult is the search tool's output: the answer with its sources, concise by
// default; with detail "full", also the whole retrieval context and the map phase's
// partial answers.
type SearchResult struct {
	Answer string `json:"answer"`
	Mode   string `json:"mode"`
	// Passages are the retrieved passages, best first; a passage the answer cites
	// carries the marker it is cited with.
	Passages []Passage `json:"passages"`
	// Themes are the community reports a global, hybrid, mix or drift answer was drawn
	// from.
	Themes []Theme `json:"themes,omitempty"`
	// FollowUps are the follow-up questions a drift answer searched.
	FollowUps []string            `json:"follow_ups,omitempty"`
	Context   *engine.Retrieved   `json:"context,omitempty"`
	Partials  []ask.PartialAnswer `json:"partial_answers,omitempty"`
}

// Passage is a retrieved passage, in short.
type Passage struct {
	Marker     string `json:"marker,omitempty"`
	ID         string `json:"id"`
	DocumentID string `json:"document_id"`
	Title      string `json:"title,omitempty"`
	Text       string `json:"text"`
	Why        string `json:"why"`
}

// Theme is a community report, in short.
type Theme struct {
	Marker  string `json:"marker,omitempty"`
	ID      string `json:"id"`
	Level   int    `json:"level"`
	Title   string `json:"title"`
	Summary string `json:"summary"`
}

// searchResult shapes an engine response for the tool.
func searchResult(resp *ask.Response, detail string) SearchResult {
	out := SearchResult{Answer: resp.Answer, Mode: resp.Mode, Passages: []Passage{}, FollowUps: resp.FollowUps}
	chunkMarker, communityMarker := map[string]string{}, map[string]string{}
	for _, c := range resp.Citations {
		if c.ChunkID != "" {
			chunkMarker[c.ChunkID] = c.Marker
		} else if c.Community != "" {
			communityMarker[c.Community] = c.Marker
		}
	}
	for _, ch := range resp.Context.Chunks {
		title := ch.Title
		if title == "" {
			title = ch.Subject
		}
		out.Passages = append(out.Passages, Passage{Marker: chunkMarker[ch.ID], ID: ch.ID, DocumentID: ch.DocumentID,
			Title: title, Text: snippet(ch.Text), Why: why(ch)})
	}
	// A global answer cites partial answers by community; hybrid, mix and drift add
	// the reports global search ranks first to their context. A local one does not cite
	// the reports of its context, which the full detail carries.
	switch resp.Mode {
	case ask.ModeGlobal, ask.ModeHybrid, ask.ModeMix, ask.ModeDrift:
		for _, c := range resp.Context.Communities {
			out.Themes = append(out.Themes, Theme{Marker: communityMarker[c.ID], ID: c.ID, Level: c.Level, Title: c.Title, Summary: snippet(c.Summary)})
		}
	}
	if detail == DetailFull {
		ctx := resp.Context
		out.Context = &ctx
		out.Partials = resp.Partials
	}
	return out
}

// why says which retrieval lists found a passage and at which rank, and the chain of
// entities that led the graph to it.
func why(ch engine.Chunk) string {
	parts := make([]string, 0, len(ch.Lists))
	for _, l := range ch.Lists {
		p := fmt.Sprintf("%s #%d", l.List, l.Rank)
		if l.List == "graph" && len(ch.GraphPath) > 0 {
			p += " (" + strings.Join(ch.GraphPath, " → ") + ")"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return "fused rank"
	}
	return strings.Join(parts, ", ")
}

// snippet is the start of s on one line, cut at a word within snippetBytes.
func snippet(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= snippetBytes {
		return s
	}
	cut := snippetBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if i := strings.LastIndexByte(s[:cut], ' '); i > snippetBytes/2 {
		cut = i
	}
	return s[:cut] + "…"
}
