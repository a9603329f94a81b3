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
		e, err := engine.New(engine.Config{MapTopK: 0, MapConcurrency: 8, GlobalTokenBudget: budget}, engine.Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, LLM: client, Logger: querytest.Logger()})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := e.Query(ctx, engine.Request{Corpus: "demo", Query: q, Mode: engine.ModeGlobal, Level: new(0)}, nil)
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
