package engine

import (
	"testing"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// A report whose community the graph no longer holds (replaced by a later detection run,
// not yet cleaned up) is never mapped by a global question.
func TestGlobalMapsOnlyCurrentCommunities(t *testing.T) {
	st := querytest.Open(t)
	ctx := t.Context()
	st.WriteChunks(t, "demo", []querytest.Passage{{ID: "c1", Doc: "d1", Title: "Lighthouse", Text: "The lighthouse keeper kept the light."}})
	if err := st.Graph.Merge(ctx, "demo", []graphstore.ChunkExtraction{{ChunkID: "c1", DocumentID: "d1",
		Entities: []graphstore.EntityMention{querytest.Mention("Lighthouse", "PLACE", "A light."), querytest.Mention("Keeper", "PERSON", "Keeps it.")}}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Graph.ReplaceCommunities(ctx, "demo", []graphstore.Community{{ID: "current", Level: 0, Members: []string{"keeper", "lighthouse"}}}); err != nil {
		t.Fatal(err)
	}
	coll := schema.Collection("demo", schema.Communities)
	if err := st.Vectors.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: coll, Dim: querytest.Dim}); err != nil {
		t.Fatal(err)
	}
	vecs, err := st.Embedder.Embed(ctx, []string{"lighthouse keeper light", "lighthouse keeper light themes"})
	if err != nil {
		t.Fatal(err)
	}
	report := func(id string, v []float32) vectorstore.Record {
		return vectorstore.Record{ID: id, Vector: v, Text: "Lighthouse\n\nThe keeper kept the light.",
			Attrs: map[string]string{schema.ReportLevel: "0", schema.ReportTitle: id, schema.ReportRating: "5"}}
	}
	if err := st.Vectors.Upsert(ctx, coll, []vectorstore.Record{report("current", vecs[0]), report("replaced", vecs[1])}); err != nil {
		t.Fatal(err)
	}
	e, err := New(Config{}, Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, Logger: querytest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.Query(ctx, Request{Corpus: "demo", Query: "What are the main themes of the lighthouse keeper light?", Mode: ModeGlobal, Level: new(0)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range resp.Context.Communities {
		got = append(got, c.ID)
	}
	if len(got) != 1 || got[0] != "current" {
		t.Errorf("mapped communities %v, want only [current]", got)
	}
}
