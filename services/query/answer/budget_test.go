package answer_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/services/query/answer"
	"github.com/graphrag/graphrag/services/query/ask"
	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// Irrelevant partial answers never reach the reduce prompt, so their reservation is given
// back: with most reports irrelevant the budget maps more of them than reservations of a
// full answer each would allow, still within the budget, and the same reports on every run
// whatever order the calls complete in.
func TestGlobalBudgetCountsRealAnswers(t *testing.T) {
	st := querytest.Open(t)
	ctx := t.Context()
	st.WriteChunks(t, "demo", []querytest.Passage{{ID: "c1", Doc: "d1", Title: "Lighthouse", Text: "The lighthouse keeper kept the light."}})
	const n = 200
	var comms []graphstore.Community
	var recs []vectorstore.Record
	body := strings.Repeat("The lighthouse keeper kept the light through the storm. ", 10)
	for i := range n {
		id := fmt.Sprintf("c%03d", i)
		comms = append(comms, graphstore.Community{ID: id, Level: 0, Members: []string{"keeper" + id}})
		vecs, err := st.Embedder.Embed(ctx, []string{strings.Repeat("lighthouse keeper light ", max(1, 60-i/4)) + strings.Repeat("harbour ", i/4)})
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
	// Every tenth report is relevant, with a long answer; the others are not.
	long := strings.Repeat("the keeper kept the light ", 40)
	srv := llmtest.NewServer(llmtest.WithLatency(time.Millisecond), llmtest.WithChatReply(func(r openai.ChatCompletionRequest) string {
		user := r.Messages[len(r.Messages)-1].Content
		var i int
		if _, err := fmt.Sscanf(user, "## Community report\nc%03d", &i); err == nil && i%10 == 0 {
			return `{"answer": "- ` + long + `", "score": 60}`
		}
		if strings.HasPrefix(user, "## Community report") {
			return `{"answer": "Not relevant", "score": 0}`
		}
		return "The keeper kept the light [1]."
	}))
	defer srv.Close()
	const budget = 20_000
	q := "What are the main themes of the lighthouse keeper light?"
	var first []string
	for run := range 3 {
		client, err := llm.New(llm.Config{BaseURL: srv.URL(), ChatModel: "m", MaxConcurrency: 8}, llm.WithLogger(querytest.Logger()))
		if err != nil {
			t.Fatal(err)
		}
		e, err := ask.New(engine.Config{MapTopK: 0}, ask.Config{MapConcurrency: 8, GlobalTokenBudget: budget}, engine.Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, Logger: querytest.Logger()}, client)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := e.Query(ctx, ask.Request{Corpus: "demo", Query: q, Mode: ask.ModeGlobal, Level: new(0)}, nil)
		sent := client.Usage().PromptTokens
		client.Close()
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range resp.Context.Communities {
			ids = append(ids, c.ID)
		}
		// What reservations of a full answer for every report would have mapped.
		reserved := answer.ReduceReservation(q)
		byReservation := 0
		for _, c := range resp.Context.Communities {
			reserved += answer.MapReservation(c, q, e.Config().MapMaxTokens)
			if reserved > budget {
				break
			}
			byReservation++
		}
		t.Logf("run %d: %d mapped (%d by reservations alone), %d prompt tokens sent, %d partial answers", run, len(ids), byReservation, sent, len(resp.Partials))
		if sent > budget {
			t.Errorf("%d prompt tokens sent, budget %d", sent, budget)
		}
		if len(ids) <= byReservation*3/2 {
			t.Errorf("%d reports mapped, reservations alone allow %d: irrelevant answers did not give theirs back", len(ids), byReservation)
		}
		if run == 0 {
			first = ids
		} else if !slices.Equal(ids, first) {
			t.Errorf("run %d mapped %v, run 0 mapped %v", run, ids, first)
		}
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
		budget int // ask.Config.GlobalTokenBudget
		bound  int // tokens the question may send; 0 = no bound: all but the pruned mapped
	}{
		{"default", 0, ask.DefaultConfig().GlobalTokenBudget},
		{"smaller", 20_000, 20_000},
		{"no bound", -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, err := llm.New(llm.Config{BaseURL: srv.URL(), ChatModel: "m", MaxConcurrency: 16}, llm.WithLogger(querytest.Logger()))
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			e, err := ask.New(engine.Config{MapTopK: 0}, ask.Config{MapConcurrency: 16, GlobalTokenBudget: tc.budget}, engine.Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, Logger: querytest.Logger()}, client)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := e.Query(ctx, ask.Request{Corpus: "demo", Query: "What are the main themes of the lighthouse keeper light?", Mode: ask.ModeGlobal, Level: new(0)}, nil)
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
