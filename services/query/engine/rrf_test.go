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

// A weak list must not pull a strong one down: the dense list is sure of "a" (far above
// its other hits), the lexical list barely prefers "b", "c" and "d" over "a". RRF with equal weights
// cannot tell the two apart and ranks "b" first; fusing the text lists by standard scores
// keeps "a" first.
func TestFuseTextKeepsAConfidentLead(t *testing.T) {
	dense := RankedList{Name: "dense", Weight: 1, IDs: []string{"a", "b", "c", "d", "e"}, Scores: []float64{0.95, 0.50, 0.49, 0.48, 0.47}}
	lexical := RankedList{Name: "lexical", Weight: 1, IDs: []string{"b", "c", "d", "a", "f"}, Scores: []float64{10.2, 10.1, 10.0, 9.9, 9.8}}
	if got := RRF(60, dense, lexical); got[0].ID != "b" {
		t.Fatalf("RRF ranks %s first: the fixture does not show the weak list pulling", got[0].ID)
	}
	got := FuseText(60, []RankedList{dense, lexical})
	if got[0].ID != "a" {
		t.Fatalf("FuseText ranks %v, want a first", ids(got))
	}
	// The hits are those of the original lists, not of the combined one.
	if h := got[0].Hits; len(h) != 2 || h[0].List != "dense" || h[0].Rank != 1 || h[1].List != "lexical" || h[1].Rank != 4 {
		t.Fatalf("hits of a = %+v, want dense#1 and lexical#4", h)
	}
}

// The structural lists still vote by rank: a passage the graph and subject lists both
// rank first, and the text lists rank second, comes first.
func TestFuseTextStructureVotesByRank(t *testing.T) {
	dense := RankedList{Name: "dense", Weight: 1, IDs: []string{"a", "b", "c"}, Scores: []float64{0.9, 0.8, 0.1}}
	lexical := RankedList{Name: "lexical", Weight: 1, IDs: []string{"a", "b", "c"}, Scores: []float64{9, 8, 1}}
	graph := RankedList{Name: "graph", Weight: 1, IDs: []string{"b"}}
	subject := RankedList{Name: "subject", Weight: 1, IDs: []string{"b"}}
	got := FuseText(60, []RankedList{dense, lexical}, graph, subject)
	if got[0].ID != "b" {
		t.Fatalf("FuseText ranks %v, want b first", ids(got))
	}
	if n := len(got[0].Hits); n != 4 {
		t.Fatalf("hits of b = %+v, want one per list", got[0].Hits)
	}
	// The combined text list weighs as much as the two text lists: b's score is
	// 2/(60+2) + 1/61 + 1/61.
	if want := 2.0/62 + 2.0/61; math.Abs(got[0].Score-want) > 1e-12 {
		t.Fatalf("score of b = %v, want %v", got[0].Score, want)
	}
}

// With one text list there is nothing to combine: FuseText is RRF.
func TestFuseTextOneTextListIsRRF(t *testing.T) {
	lexical := RankedList{Name: "lexical", Weight: 1, IDs: []string{"a", "b"}, Scores: []float64{2, 1}}
	dense := RankedList{Name: "dense", Weight: 0, IDs: []string{"b"}, Scores: []float64{1}}
	graph := RankedList{Name: "graph", Weight: 1, IDs: []string{"b", "c"}}
	got, want := FuseText(60, []RankedList{dense, lexical}, graph), RRF(60, dense, lexical, graph)
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", ids(got), ids(want))
	}
	for i := range got {
		if got[i].ID != want[i].ID || got[i].Score != want[i].Score {
			t.Fatalf("got %+v, want %+v", got, want)
		}
	}
}
