package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/normalize"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// newDemoEngine builds an engine with the default configuration over querytest.Demo.
func newDemoEngine(t *testing.T) *Engine {
	t.Helper()
	st := querytest.Demo(t)
	e, err := New(Config{}, Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, Logger: querytest.Logger()})
	if err != nil {
		t.Fatalf("building engine: %v", err)
	}
	return e
}

// Regression for defect 2 of seeds/002: a chunk that only the graph finds is fetched by
// id and returned with its text, not logged and dropped.
func TestGraphOnlyChunkIsFetched(t *testing.T) {
	st := querytest.Demo(t)
	ctx := t.Context()
	// Filler passages that match the question's words better than c3 does, so the dense
	// and lexical lists (5 deep) are full of them and never reach c3.
	emb := hashembed.New(384)
	var recs []vectorstore.Record
	for i := range 12 {
		text := fmt.Sprintf("Ada Lovelace Ada Lovelace biography note %d about Ada Lovelace.", i)
		v, _ := emb.Embed(ctx, []string{text})
		recs = append(recs, vectorstore.Record{ID: fmt.Sprintf("filler%02d", i), Vector: v[0], Text: text, Attrs: map[string]string{schema.ChunkDocumentID: "filler"}})
	}
	if err := st.Vectors.Upsert(ctx, schema.Collection("demo", schema.Chunks), recs); err != nil {
		t.Fatal(err)
	}
	e, err := New(Config{Pool: 5, Weights: Weights{Dense: 1, Lexical: 1, Graph: 3}}, Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: emb,
		Logger: querytest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := contextOf(e.Retrieve(ctx, Request{Corpus: "demo", Query: "Ada Lovelace", TopK: 6}))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(c.Chunks, func(ch Chunk) bool { return ch.ID == "c3" })
	if i < 0 {
		t.Fatalf("graph-only chunk c3 missing from %d chunks", len(c.Chunks))
	}
	got := c.Chunks[i]
	if len(got.Lists) != 1 || got.Lists[0].List != "graph" {
		t.Fatalf("c3 found by %+v, want the graph list only (the test must exercise the graph-only path)", got.Lists)
	}
	if !strings.Contains(got.Text, "Babbage designed the Analytical Engine") || got.DocumentID != "d2" {
		t.Fatalf("c3 returned without its record: %+v", got)
	}
	if len(got.GraphPath) == 0 {
		t.Fatalf("c3 has no graph path")
	}
}

// Regression for defect 3: the query side normalizes names with THE normalization the
// grapher writes with, so "The Analytical Engine," finds "analytical engine" (the
// console's reads are checked in package explore).
func TestQueryNormalizationMatchesWriteSide(t *testing.T) {
	e := newDemoEngine(t)
	for _, name := range []string{"The Analytical Engine", "the analytical engine,", "ANALYTICAL  ENGINE", "Ｔｈｅ Analytical Engine"} {
		if normalizeName(name) != normalize.Name(name) {
			t.Fatalf("query normalization differs from pkg/normalize on %q", name)
		}
	}
	// Linking from a question uses it.
	c, _, err := contextOf(e.Retrieve(t.Context(), Request{Corpus: "demo", Query: "What did the Analytical Engine compute?"}))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(c.Entities, func(en Entity) bool { return en.Key == "analytical engine" && en.Distance == 0 }) {
		t.Fatalf("analytical engine not linked: %+v", c.Entities)
	}
}

func TestRequestValidation(t *testing.T) {
	lvl := 40
	for _, r := range []Request{
		{Corpus: "demo", Query: ""},
		{Corpus: "demo", Query: "   "},
		{Corpus: "Demo", Query: "x"},
		{Corpus: "demo", Query: strings.Repeat("x", MaxQueryBytes+1)},
		{Corpus: "demo", Query: "x", Mode: "sideways"},
		{Corpus: "demo", Query: "x", TopK: -1},
		{Corpus: "demo", Query: "x", Level: &lvl},
		{Corpus: "demo", Query: "\xff"},
	} {
		if err := r.Validate(); err == nil {
			t.Errorf("accepted %+v", r)
		}
	}
}

// contextOf is what a retrieval found and its timings.
func contextOf(res *Result, err error) (Retrieved, map[string]float64, error) {
	if err != nil {
		return Retrieved{}, nil, err
	}
	return res.Context, res.Timings, nil
}
