package engine

import (
	"testing"

	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// A question of stop words only embeds to the zero vector with the offline embedder.
// No store accepts it (cosine is undefined), so the engine must not send it: the
// question's context is retrieved from what remains, its reports by rating (package ask
// answers it in every mode).
func TestStopWordQuestionIsRetrieved(t *testing.T) {
	const q = "What is this about?"
	v, err := hashembed.New(querytest.Dim).Embed(t.Context(), []string{q})
	if err != nil || hasDirection(v[0]) {
		t.Fatalf("the fixture needs a question that embeds to the zero vector (err %v)", err)
	}
	st := querytest.DemoWithReports(t)
	// Dense on, so that every dense search (chunks, entities, reports, evidence) is tried.
	e, err := New(Config{Weights: Weights{Dense: 1, Lexical: 1, Graph: 1, Subject: 1}}, Deps{Graph: st.Graph, Vectors: st.Vectors,
		Embedder: st.Embedder, Logger: querytest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Retrieve(t.Context(), Request{Corpus: "demo", Query: q}); err != nil {
		t.Fatalf("retrieve: %v", err)
	}
	res, err := e.Reports(t.Context(), Request{Corpus: "demo", Query: q}, false)
	if err != nil {
		t.Fatalf("reports: %v", err)
	}
	if len(res.Context.Communities) == 0 {
		t.Error("no report selected: the reports of the level were not read")
	}
}
