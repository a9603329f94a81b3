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
	// Unranked, as offline global search maps them: every report of the level.
	res, err := e.Reports(ctx, Request{Corpus: "demo", Query: "What are the main themes of the lighthouse keeper light?", Level: new(0)}, false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range res.Context.Communities {
		got = append(got, c.ID)
	}
	if len(got) != 1 || got[0] != "current" {
		t.Errorf("mapped communities %v, want only [current]", got)
	}
}

// Reports are selected by their members' entity vectors, not by vectors of their own
// (the summarizer embeds no report by default): here each report's record holds the
// vector of the other community's topic, and the question about the lighthouse keeper
// still gets the lighthouse community's report, in global search and in the local
// context.
func TestReportsSelectedByTheirMembers(t *testing.T) {
	st := querytest.Open(t)
	ctx := t.Context()
	st.WriteChunks(t, "demo", []querytest.Passage{
		{ID: "c1", Doc: "d1", Title: "Lighthouse", Text: "The lighthouse keeper kept the light."},
		{ID: "c2", Doc: "d2", Title: "Volcano", Text: "The geologist measured the volcano."}})
	mentions := []graphstore.EntityMention{querytest.Mention("Lighthouse", "PLACE", "A light."), querytest.Mention("Keeper", "PERSON", "Keeps it."),
		querytest.Mention("Volcano", "PLACE", "A mountain."), querytest.Mention("Geologist", "PERSON", "Studies rocks.")}
	if err := st.Graph.Merge(ctx, "demo", []graphstore.ChunkExtraction{
		{ChunkID: "c1", DocumentID: "d1", Entities: mentions[:2]},
		{ChunkID: "c2", DocumentID: "d2", Entities: mentions[2:]}}); err != nil {
		t.Fatal(err)
	}
	st.WriteEntities(t, "demo", mentions)
	if err := st.Graph.ReplaceCommunities(ctx, "demo", []graphstore.Community{
		{ID: "sea", Level: 0, Members: []string{"keeper", "lighthouse"}},
		{ID: "rock", Level: 0, Members: []string{"geologist", "volcano"}}}); err != nil {
		t.Fatal(err)
	}
	coll := schema.Collection("demo", schema.Communities)
	if err := st.Vectors.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: coll, Dim: querytest.Dim}); err != nil {
		t.Fatal(err)
	}
	vecs, err := st.Embedder.Embed(ctx, []string{"volcano geologist", "lighthouse keeper"})
	if err != nil {
		t.Fatal(err)
	}
	report := func(id, title string, v []float32) vectorstore.Record {
		return vectorstore.Record{ID: id, Vector: v, Text: title + "\n\nA community.",
			Attrs: map[string]string{schema.ReportLevel: "0", schema.ReportTitle: title, schema.ReportRating: "5"}}
	}
	if err := st.Vectors.Upsert(ctx, coll, []vectorstore.Record{report("sea", "One", vecs[0]), report("rock", "Two", vecs[1])}); err != nil {
		t.Fatal(err)
	}
	e, err := New(Config{}, Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, Logger: querytest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Corpus: "demo", Query: "What did the lighthouse keeper keep?", Level: new(0)}
	for _, mode := range []string{"global", ModeLocal} {
		retrieve := func() (*Result, error) { return e.Retrieve(ctx, req) }
		if mode == "global" {
			retrieve = func() (*Result, error) { return e.Reports(ctx, req, true) }
		}
		res, err := retrieve()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range res.Context.Communities {
			got = append(got, c.ID)
		}
		if len(got) == 0 || got[0] != "sea" {
			t.Errorf("%s: reports %v, want sea first", mode, got)
		}
	}
}
