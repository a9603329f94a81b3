package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
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

// Mapping every report of a level (-map-top-k 0) with a model sends at most the
// configured budget of prompt tokens per question, counted by the endpoint, and keeps
// the best-ranked reports; without a bound it maps them all.
func TestGlobalStaysWithinTokenBudget(t *testing.T) {
	st := querytest.Open(t)
	ctx := t.Context()
	st.WriteChunks(t, "demo", []querytest.Passage{{ID: "c1", Doc: "d1", Title: "Lighthouse", Text: "The lighthouse keeper kept the light."}})
	const n = 300 // about 800 tokens each with the partial answer: ~4.8× the budget
	var comms []graphstore.Community
	var recs []vectorstore.Record
	body := strings.Repeat("The lighthouse keeper kept the light through the storm. ", 40)
	for i := range n {
		id := fmt.Sprintf("c%03d", i)
		comms = append(comms, graphstore.Community{ID: id, Level: 0, Members: []string{"keeper" + id, "lighthouse" + id}})
		// Later reports say less about the question: the ranking is by id.
		text := strings.Repeat("lighthouse keeper light ", max(1, 60-i/5)) + strings.Repeat("harbour ", i/5)
		vecs, err := st.Embedder.Embed(ctx, []string{text})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, vectorstore.Record{ID: id, Vector: vecs[0], Text: id + "\n\n" + body,
			Attrs: map[string]string{schema.ReportLevel: "0", schema.ReportTitle: id, schema.ReportRating: "5"}})
	}
	if err := st.Graph.ReplaceCommunities(ctx, "demo", comms); err != nil {
		t.Fatal(err)
	}
	coll := schema.Collection("demo", schema.Communities)
	if err := st.Vectors.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: coll, Dim: querytest.Dim}); err != nil {
		t.Fatal(err)
	}
	if err := st.Vectors.Upsert(ctx, coll, recs); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(llmtest.WithChatReply(partialAnswer))
	defer srv.Close()
	for _, tc := range []struct {
		name   string
		budget int // Config.GlobalTokenBudget
		bound  int // tokens the question may send; 0 = no bound: all but the pruned mapped
	}{
		{"default", 0, DefaultConfig().GlobalTokenBudget},
		{"smaller", 20_000, 20_000},
		{"no bound", -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, err := llm.New(llm.Config{BaseURL: srv.URL(), ChatModel: "m", MaxConcurrency: 16}, llm.WithLogger(querytest.Logger()))
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			e, err := New(Config{MapTopK: 0, MapConcurrency: 16, GlobalTokenBudget: tc.budget}, Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, LLM: client, Logger: querytest.Logger()})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := e.Query(ctx, Request{Corpus: "demo", Query: "What are the main themes of the lighthouse keeper light?", Mode: ModeGlobal, Level: new(0)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			sent := client.Usage().PromptTokens
			mapped := len(resp.Context.Communities)
			t.Logf("%d of %d communities mapped, %d prompt tokens sent", mapped, n, sent)
			if tc.bound == 0 {
				// Only reports far less similar than the best one are pruned.
				if mapped < n*9/10 {
					t.Errorf("%d of %d communities mapped without a bound", mapped, n)
				}
				return
			}
			if sent > int64(tc.bound) {
				t.Errorf("%d prompt tokens sent for one global question, budget %d", sent, tc.bound)
			}
			if mapped < tc.bound/8000 {
				t.Errorf("only %d communities mapped: the budget holds far more", mapped)
			}
			for i, c := range resp.Context.Communities {
				if want := fmt.Sprintf("c%03d", i); c.ID != want && i < mapped/2 {
					t.Errorf("mapped community %d is %s, want the best-ranked %s", i, c.ID, want)
					break
				}
			}
		})
	}
}

// partialAnswer answers every chat request with a relevant partial answer (the reduce
// call takes any text). Generic so that the test needs no import of the client library.
func partialAnswer[Request any](Request) string {
	return `{"answer": "- The keeper kept the light.", "score": 50}`
}
