package query

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/normalize"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// normalizeName is THE normalization (pkg/normalize), the one the grapher writes with.
func normalizeName(s string) string { return normalize.Name(s) }

// linkedEntity is an entity of the graph that the query refers to.
type linkedEntity struct {
	key    string
	score  float64 // 1 for an exact name match, the cosine similarity for an embedding link
	by     string  // exact, embedding, llm, proper_noun
	chunks int     // how many chunks mention it (specificity)
}

const maxGram = 6

// link finds the graph entities the query refers to:
//  1. every word n-gram of the query, normalized, that names an entity (exact match, the
//     longest non-overlapping ones win);
//  2. entities whose description embedding is similar to the query (top-k, minimum
//     similarity);
//  3. if both found nothing: the LLM lists the query's entities (when configured), then
//     capitalized phrases (proper nouns) are tried.
//
// Every candidate is checked against the graph through the same normalization the grapher
// writes with.
func (e *Engine) link(ctx context.Context, corpus, query string, qvec []float32) ([]linkedEntity, error) {
	found := map[string]*linkedEntity{}
	add := func(key string, score float64, by string) {
		if key == "" {
			return
		}
		if l, ok := found[key]; ok {
			if score > l.score {
				l.score, l.by = score, by
			}
			return
		}
		found[key] = &linkedEntity{key: key, score: score, by: by}
	}

	// 1. exact n-grams.
	words := queryWords(query)
	var cands []string
	type span struct{ i, j int }
	spanOf := map[string]span{}
	for n := min(maxGram, len(words)); n >= 1; n-- {
		for i := 0; i+n <= len(words); i++ {
			// An n-gram with a stopword at an edge normalizes to the shorter one
			// without it, enumerated anyway; its wider span would make it overlap (and
			// so shut out) the name next to it: "King Vidor and Géza von Cziffra".
			if n > 1 && (normalize.IsEdgeStopword(normalizeName(words[i])) || normalize.IsEdgeStopword(normalizeName(words[i+n-1]))) {
				continue
			}
			k := normalizeName(strings.Join(words[i:i+n], " "))
			if k == "" || isQueryStopword(k) {
				continue
			}
			if _, ok := spanOf[k]; !ok {
				spanOf[k] = span{i, i + n}
				cands = append(cands, k)
			}
		}
	}
	ents, err := e.deps.Graph.Entities(ctx, corpus, cands)
	if err != nil {
		return nil, fmt.Errorf("linking query entities: %w", err)
	}
	exists := map[string]int{}
	for _, en := range ents {
		exists[en.Key] = len(en.ChunkIDs)
	}
	covered := make([]bool, len(words))
	for _, k := range cands { // longest first
		if _, ok := exists[k]; !ok {
			continue
		}
		sp := spanOf[k]
		overlap := false
		for i := sp.i; i < sp.j; i++ {
			overlap = overlap || covered[i]
		}
		if overlap {
			continue
		}
		for i := sp.i; i < sp.j; i++ {
			covered[i] = true
		}
		add(k, 1, "exact")
	}

	// 2. embedding similarity over entity descriptions.
	hits, err := e.deps.Vectors.Search(ctx, schema.Collection(corpus, schema.Entities), qvec, e.cfg.EntityTopK, vectorstore.Filter{})
	if err != nil && !errors.Is(err, vectorstore.ErrNotFound) {
		return nil, fmt.Errorf("searching entities: %w", err)
	}
	var embedded []string
	best := 0.0
	for _, h := range hits {
		best = max(best, h.Score)
	}
	for _, h := range hits {
		if h.Score >= e.cfg.EntityMinSim && h.Score >= best-e.cfg.EntityMargin {
			embedded = append(embedded, h.ID)
		}
	}
	if err := e.verify(ctx, corpus, embedded, func(k string, n int) { add(k, scoreOf(hits, k), "embedding"); exists[k] = n }); err != nil {
		return nil, err
	}

	// 3. fallbacks.
	if len(found) == 0 && e.deps.LLM != nil {
		names, err := e.llmEntities(ctx, query)
		if err != nil {
			e.log.WarnContext(ctx, "LLM entity extraction failed; falling back to proper nouns", "err", err)
		}
		if err := e.verify(ctx, corpus, normalizeAll(names), func(k string, n int) { add(k, 0.9, "llm"); exists[k] = n }); err != nil {
			return nil, err
		}
	}
	if len(found) == 0 {
		if err := e.verify(ctx, corpus, normalizeAll(ProperNouns(query)), func(k string, n int) { add(k, 0.8, "proper_noun"); exists[k] = n }); err != nil {
			return nil, err
		}
	}

	out := make([]linkedEntity, 0, len(found))
	for _, l := range found {
		l.chunks = exists[l.key]
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].key < out[j].key
	})
	return out, nil
}

func scoreOf(hits []vectorstore.Hit, id string) float64 {
	for _, h := range hits {
		if h.ID == id {
			return h.Score
		}
	}
	return 0
}

// verify calls ok for each key that exists in the graph.
func (e *Engine) verify(ctx context.Context, corpus string, keys []string, ok func(key string, chunks int)) error {
	if len(keys) == 0 {
		return nil
	}
	ents, err := e.deps.Graph.Entities(ctx, corpus, keys)
	if err != nil {
		return fmt.Errorf("checking linked entities against the graph: %w", err)
	}
	for _, en := range ents {
		ok(en.Key, len(en.ChunkIDs))
	}
	return nil
}

func normalizeAll(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if k := normalizeName(n); k != "" {
			out = append(out, k)
		}
	}
	return out
}

// queryWords splits a query into words, keeping inner apostrophes and hyphens.
func queryWords(q string) []string {
	return strings.FieldsFunc(q, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '-' || r == '.' || r == '&')
	})
}

var queryStop = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`what which who whom whose when where why how is are was were be been being do does did
		the a an of and or in on at to for from by with about as into than then that this these those it its
		there their they them he she his her him i you we our your my me not no yes both either neither same
		same one first also many much more most other such can could would should will shall may might
		between among during before after since until while name named called known`) {
		queryStop[w] = true
	}
}

// isQueryStopword is true for n-grams made only of question words and stopwords.
func isQueryStopword(k string) bool {
	for _, w := range strings.Fields(k) {
		if !queryStop[w] {
			return false
		}
	}
	return true
}

var properNounRE = regexp.MustCompile(`\b\p{Lu}[\p{L}\p{M}'’-]*(?:\s+(?:of|the|de|da|van|von|del|la|le|du|and|&)?\s*\p{Lu}[\p{L}\p{M}'’-]*)*`)

// ProperNouns returns the capitalized phrases of a text (the last-resort linking
// fallback): "What did Sapolsky say about stress?" → ["What", "Sapolsky"]; the caller
// checks them against the graph, which drops the noise.
func ProperNouns(s string) []string {
	var out []string
	for _, m := range properNounRE.FindAllString(s, -1) {
		out = append(out, strings.TrimSpace(m))
	}
	return out
}

var queryEntitiesSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"entities": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
	},
	"required":             []string{"entities"},
	"additionalProperties": false,
}

func (e *Engine) llmEntities(ctx context.Context, query string) ([]string, error) {
	out, _, err := llm.ChatJSON[struct {
		Entities []string `json:"entities"`
	}](ctx, e.deps.LLM, llm.ChatRequest{
		Stage:      "query",
		System:     "List the named entities and key concepts mentioned in the user's question, as they are written. Return JSON only.",
		User:       query,
		MaxTokens:  200,
		JSONSchema: &llm.Schema{Name: "query_entities", Schema: queryEntitiesSchema, Strict: true},
	})
	return out.Entities, err
}
