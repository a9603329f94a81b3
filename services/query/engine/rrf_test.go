package engine

import (
	"math"
	"testing"
)

// Regression for defect 1 of seeds/002: fusion must be real RRF, not "boosted first".
func TestRRFIsRealFusion(t *testing.T) {
	dense := RankedList{Name: "dense", Weight: 1, IDs: []string{"c1", "c7", "c12", "c23", "c42", "c55"}}
	graph := RankedList{Name: "graph", Weight: 1, IDs: []string{"c42", "c12", "c100", "c150"}}
	got := RRF(60, dense, graph)
	// The seed's worked example: chunks in both lists rise to the top.
	want := map[string]float64{
		"c12": 1.0/63 + 1.0/62, "c42": 1.0/65 + 1.0/61, "c1": 1.0 / 61, "c7": 1.0 / 62,
		"c100": 1.0 / 63, "c150": 1.0 / 64, "c23": 1.0 / 64, "c55": 1.0 / 66,
	}
	for _, f := range got {
		if math.Abs(f.Score-want[f.ID]) > 1e-12 {
			t.Errorf("score(%s) = %v, want %v", f.ID, f.Score, want[f.ID])
		}
	}
	// c150 and c23 tie at 1/64; the tie breaks by best rank (both 4) then id.
	wantOrder := []string{"c12", "c42", "c1", "c7", "c100", "c150", "c23", "c55"}
	if len(got) != len(wantOrder) {
		t.Fatalf("got %d fused results, want %d", len(got), len(wantOrder))
	}
	for i, id := range wantOrder {
		if got[i].ID != id {
			t.Fatalf("rank %d = %s, want %s (full: %v)", i+1, got[i].ID, id, ids(got))
		}
	}
}

// A chunk in two lists outranks one found by a single list at the same rank.
func TestRRFAgreementOutranksSingleList(t *testing.T) {
	got := RRF(60,
		RankedList{Name: "dense", Weight: 1, IDs: []string{"a", "b"}},
		RankedList{Name: "lexical", Weight: 1, IDs: []string{"c", "b"}},
	)
	if got[0].ID != "b" {
		t.Fatalf("top = %s, want b (in both lists): %v", got[0].ID, ids(got))
	}
	if len(got[0].Hits) != 2 || got[0].Hits[0].List != "dense" || got[0].Hits[0].Rank != 2 || got[0].Hits[1].List != "lexical" {
		t.Fatalf("hits of b = %+v, want dense#2 and lexical#2", got[0].Hits)
	}
}

func TestRRFWeightsAndDuplicates(t *testing.T) {
	got := RRF(60,
		RankedList{Name: "dense", Weight: 1, IDs: []string{"a"}},
		RankedList{Name: "graph", Weight: 3, IDs: []string{"b", "b"}}, // duplicate counted once
		RankedList{Name: "lexical", Weight: 0, IDs: []string{"c"}},    // weight 0 = list off
	)
	if len(got) != 2 || got[0].ID != "b" || math.Abs(got[0].Score-3.0/61) > 1e-12 {
		t.Fatalf("got %+v", got)
	}
}

func ids(fs []Fused) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.ID
	}
	return out
}
