package main

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/graphrag/graphrag/pkg/offlinextract"
)

// answer is the fake model's answer to one request.
type answer struct {
	content string
	// text is the chunk text an extraction was asked about; full says that the
	// extraction reached both of the prompt's caps.
	text string
	full bool
}

// reply is the fake model's answer to a request of the kind.
func reply(kind string, req *openai.ChatCompletionRequest) answer {
	last := lastMessage(req)
	switch kind {
	case kindExtraction:
		c, text, full := extraction(last)
		return answer{content: c, text: text, full: full}
	case kindGleaning:
		return answer{content: `{"entities":[],"relationships":[]}`}
	case kindDescription:
		return answer{content: description(last)}
	case kindReport:
		return answer{content: report(last)}
	}
	if rf := req.ResponseFormat; rf != nil && rf.JSONSchema != nil {
		return answer{content: "{}"}
	}
	return answer{content: "The passages do not say [1]."}
}

type entityJSON struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
}

type relationshipJSON struct {
	Source      string `json:"source"`
	Target      string `json:"target"`
	Type        string `json:"type"`
	Description string `json:"description"`
	Strength    int    `json:"strength"`
}

// extraction answers the extractor's prompt (services/extractor/llm.go) with what the
// offline extractor finds in its text, within the caps the prompt states, each
// description cut to its first sentence as the prompt asks; full says whether the answer
// reached both caps.
func extraction(prompt string) (content, text string, full bool) {
	head, text, _ := strings.Cut(prompt, "\nText:\n")
	maxEnt, maxRel := offlinextract.DefaultMaxEntities, offlinextract.DefaultMaxRelationships
	title := ""
	for line := range strings.SplitSeq(head, "\n") {
		if _, err := fmt.Sscanf(line, "Extract at most %d entities and %d relationships.", &maxEnt, &maxRel); err == nil {
			continue
		}
		if q, ok := strings.CutPrefix(line, "The text comes from the document titled "); ok {
			if t, err := strconv.Unquote(strings.TrimSuffix(q, ".")); err == nil {
				title = t
			}
		}
	}
	ents, rels := offlinextract.Extract(title, text, offlinextract.WithMaxEntities(maxEnt), offlinextract.WithMaxRelationships(maxRel))
	out := struct {
		Entities      []entityJSON       `json:"entities"`
		Relationships []relationshipJSON `json:"relationships"`
	}{Entities: []entityJSON{}, Relationships: []relationshipJSON{}}
	for _, e := range ents {
		out.Entities = append(out.Entities, entityJSON{Name: e.Name, Type: e.Type, Description: firstSentence(e.Description)})
	}
	for _, r := range rels {
		s := int(math.Ceil(r.Strength * 10))
		out.Relationships = append(out.Relationships, relationshipJSON{Source: r.Source, Target: r.Target, Type: r.Type,
			Description: firstSentence(r.Description), Strength: min(max(s, 1), 10)})
	}
	b, _ := json.Marshal(out) // strings and ints: cannot fail
	return string(b), text, len(ents) >= maxEnt && len(rels) >= maxRel
}

// description answers the grapher's prompt ("Entity: …\nDescriptions:\n- …") with the
// first sentences of its first three descriptions.
func description(prompt string) string {
	_, list, _ := strings.Cut(prompt, "\nDescriptions:\n")
	var out []string
	for d := range strings.SplitSeq(list, "\n") {
		d = strings.TrimSpace(strings.TrimPrefix(d, "- "))
		if d == "" {
			continue
		}
		out = append(out, firstSentence(d))
		if len(out) == 3 {
			break
		}
	}
	return strings.Join(out, " ")
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// report answers the summarizer's prompt (services/summarizer/report.go: "## Entities"
// lines "- name (type) [PR:…] - description", "## Relationships" lines "- a --[type]--> b:
// description") as its extractive reports are written: the title names the three most
// central entities, the summary gives their descriptions' first sentences, and the
// findings are the five strongest relationships with their evidence.
func report(prompt string) string {
	var names, summary []string
	type finding struct {
		Summary     string `json:"summary"`
		Explanation string `json:"explanation"`
	}
	findings := []finding{}
	section := ""
	for line := range strings.SplitSeq(prompt, "\n") {
		if s, ok := strings.CutPrefix(line, "## "); ok {
			section = s
			continue
		}
		item, ok := strings.CutPrefix(line, "- ")
		if !ok {
			continue
		}
		switch section {
		case "Entities":
			if len(names) == 3 {
				continue
			}
			name, rest, _ := strings.Cut(item, " (")
			names = append(names, name)
			if _, d, ok := strings.Cut(rest, "] - "); ok && d != "" {
				summary = append(summary, firstSentence(d))
			}
		case "Relationships":
			if len(findings) == 5 {
				continue
			}
			rel, evidence, _ := strings.Cut(item, ": ")
			findings = append(findings, finding{Summary: rel, Explanation: evidence})
		}
	}
	b, _ := json.Marshal(map[string]any{
		"title": strings.Join(names, ", "), "summary": strings.Join(summary, " "), "findings": findings,
		"rating": min(10, 1+len(findings)), "rating_explanation": fmt.Sprintf("%d relationships among its central entities.", len(findings)),
	})
	return string(b)
}
