package engine

import (
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"testing"
)

// Retrieval runs its independent searches concurrently; what it returns must not depend
// on which finished first. Many retrievals at once (under -race) return the same thing.
func TestRetrieveIsDeterministic(t *testing.T) {
	e, _ := newBridgeEngine(t)
	req := Request{Corpus: "demo", Query: "Who made the film shot in Leland, North Carolina in 1986?", Weights: &Weights{Dense: 1, Lexical: 1, Graph: 1, Subject: 1}}
	want, _, err := e.Retrieve(t.Context(), req)
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
			r, _, err := e.Retrieve(t.Context(), req)
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
		_, tm, err := e.Retrieve(t.Context(), Request{Corpus: "demo", Query: "Leland film 1986", Weights: tc.weights})
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Sorted(maps.Keys(tm)); !slices.Equal(got, tc.want) {
			t.Errorf("weights %+v: phases %v, want %v", tc.weights, got, tc.want)
		}
	}
}
