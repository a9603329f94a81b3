package engine

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/graphrag/graphrag/pkg/telemetry/calltrace/calltracetest"
	"github.com/graphrag/graphrag/services/query/internal/phase"
)

// Retrieval runs its independent searches concurrently; what it returns must not depend
// on which finished first. Many retrievals at once (under -race) return the same thing.
func TestRetrieveIsDeterministic(t *testing.T) {
	e, _ := newBridgeEngine(t)
	req := Request{Corpus: "demo", Query: "Who made the film shot in Leland, North Carolina in 1986?", Weights: &Weights{Dense: 1, Lexical: 1, Graph: 1, Subject: 1}}
	want, _, err := contextOf(e.Retrieve(t.Context(), req))
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Chunks) == 0 || len(want.Entities) == 0 {
		t.Fatalf("retrieved %d chunks and %d entities: the fixture must exercise every list", len(want.Chunks), len(want.Entities))
	}
	wantJSON, _ := json.Marshal(want)
	var wg sync.WaitGroup
	got := make([][]byte, 16)
	for i := range got {
		wg.Go(func() {
			r, _, err := contextOf(e.Retrieve(t.Context(), req))
			if err != nil {
				t.Error(err)
				return
			}
			got[i], _ = json.Marshal(r)
		})
	}
	wg.Wait()
	for i, g := range got {
		if string(g) != string(wantJSON) {
			t.Fatalf("retrieval %d differs:\n got %s\nwant %s", i, g, wantJSON)
		}
	}
}

// The timings name the same phases whether the searches run one after another or side by
// side (timings_ms is part of the API's responses); a list turned off has no phase.
func TestRetrieveTimingPhases(t *testing.T) {
	e, _ := newBridgeEngine(t)
	for _, tc := range []struct {
		weights *Weights
		want    []string
	}{
		{nil, []string{"communities", "embed", "evidence", "fuse", "graph", "lexical", "link", "subject", "total"}},
		{&Weights{Dense: 1, Lexical: 1, Graph: 1, Subject: 1}, []string{"communities", "dense", "embed", "evidence", "fuse", "graph", "lexical", "link", "subject", "total"}},
		{&Weights{Lexical: 1}, []string{"communities", "embed", "evidence", "fuse", "lexical", "link", "total"}},
	} {
		_, tm, err := contextOf(e.Retrieve(t.Context(), Request{Corpus: "demo", Query: "Leland film 1986", Weights: tc.weights}))
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Sorted(maps.Keys(tm)); !slices.Equal(got, tc.want) {
			t.Errorf("weights %+v: phases %v, want %v", tc.weights, got, tc.want)
		}
	}
}

// Every phase is a span named after it, a child of the caller's span, whose duration is
// the phase's timing: both come from one measurement. The store calls made in a phase
// are its children.
func TestRetrievePhaseSpans(t *testing.T) {
	// The providers first: the stores take their tracer when they open.
	p := calltracetest.Install(t)
	e, _ := newBridgeEngine(t)
	ctx, parent := otel.Tracer("test").Start(t.Context(), "request")
	_, tm, err := contextOf(e.Retrieve(ctx, Request{Corpus: "demo", Query: "Leland film 1986", Weights: &Weights{Dense: 1, Lexical: 1, Graph: 1, Subject: 1}}))
	parent.End()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]tracetest.SpanStub{}
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for _, sp := range p.Spans.GetSpans() {
		byName[sp.Name] = sp
		byID[sp.SpanContext.SpanID()] = sp
	}
	for name, took := range tm {
		if name == "total" {
			continue
		}
		sp, ok := byName[phase.SpanPrefix+name]
		if !ok {
			t.Errorf("no span for the phase %q", name)
			continue
		}
		if sp.Parent.SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("span %s is not a child of the request's", sp.Name)
		}
		if d := phase.MS(sp.EndTime.Sub(sp.StartTime)); d != took {
			t.Errorf("span %s lasted %v ms, the timing says %v", sp.Name, d, took)
		}
	}
	// Store calls nest under the phase that made them: the dense search under "dense".
	// Other phases search too (the local context's communities read the entities
	// nearest the question), and the phases run concurrently, so every search is
	// checked, not the last to end.
	var parents []string
	for _, sp := range p.Spans.GetSpans() {
		if sp.Name != "vectorstore.Search" {
			continue
		}
		parent := byID[sp.Parent.SpanID()].Name
		if !strings.HasPrefix(parent, phase.SpanPrefix) {
			t.Errorf("vectorstore.Search is a child of %q, not of a phase", parent)
		}
		parents = append(parents, parent)
	}
	if !slices.Contains(parents, phase.SpanPrefix+"dense") {
		t.Errorf("the vectorstore.Search spans are children of %v, none of %q", parents, phase.SpanPrefix+"dense")
	}
}
