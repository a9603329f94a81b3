package ask

import (
	"slices"
	"testing"

	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// A question of stop words only embeds to the zero vector with the offline embedder.
// No store accepts it (cosine is undefined), so the engine must not send it: the
// question is answered from what remains, in every mode (issue 12, item 1).
func TestStopWordQuestionIsAnswered(t *testing.T) {
	const q = "What is this about?"
	v, err := hashembed.New(querytest.Dim).Embed(t.Context(), []string{q})
	if err != nil || slices.ContainsFunc(v[0], func(x float32) bool { return x != 0 }) {
		t.Fatalf("the fixture needs a question that embeds to the zero vector (err %v)", err)
	}
	st := querytest.DemoWithReports(t)
	// Dense on, so that every dense search (chunks, entities, reports, evidence) is tried.
	e, err := New(engine.Config{Weights: engine.Weights{Dense: 1, Lexical: 1, Graph: 1, Subject: 1}}, Config{}, engine.Deps{Graph: st.Graph, Vectors: st.Vectors,
		Embedder: st.Embedder, Logger: querytest.Logger()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{ModeAuto, ModeLocal, ModeGlobal} {
		t.Run(mode, func(t *testing.T) {
			resp, err := e.Query(t.Context(), Request{Corpus: "demo", Query: q, Mode: mode}, nil)
			if err != nil {
				t.Fatalf("query: %v", err)
			}
			if resp.Answer == "" {
				t.Error("empty answer")
			}
			if resp.Mode == ModeGlobal && len(resp.Partials) == 0 {
				t.Errorf("global answer without partial answers: the reports of the level were not mapped")
			}
		})
	}
	if _, _, err := e.Retrieve(t.Context(), Request{Corpus: "demo", Query: q}); err != nil {
		t.Errorf("retrieve: %v", err)
	}
}
