package engine

import (
	"fmt"
	"math"
	"slices"
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

// The structural lists still vote by rank on the passages the text lists are not
// confident of: a passage the graph and subject lists both rank first, and the text
// lists rank second, comes first.
func TestFuseTextStructureVotesByRank(t *testing.T) {
	dense := RankedList{Name: "dense", Weight: 1, IDs: []string{"a", "b", "c"}, Scores: []float64{0.9, 0.8, 0.1}}
	lexical := RankedList{Name: "lexical", Weight: 1, IDs: []string{"a", "b", "c"}, Scores: []float64{9, 8, 1}}
	graph := RankedList{Name: "graph", Weight: 1, IDs: []string{"b"}}
	subject := RankedList{Name: "subject", Weight: 1, IDs: []string{"b"}}
	got := FuseText(60, []RankedList{dense, lexical}, graph, subject)
	if want := []string{"b", "a", "c"}; !slices.Equal(ids(got), want) {
		t.Fatalf("FuseText ranks %v, want %v", ids(got), want)
	}
	if n := len(got[0].Hits); n != 4 {
		t.Fatalf("hits of b = %+v, want one per list", got[0].Hits)
	}
	// Scores follow the fused ranks: the lists' total weight (4) / (k + rank).
	for i, f := range got {
		if want := 4 / (60 + float64(i+1)); math.Abs(f.Score-want) > 1e-12 {
			t.Fatalf("score of %s = %v, want %v", f.ID, f.Score, want)
		}
	}
}

// A weak list must not pull a strong one down: both text lists are sure of "a" and "b"
// (far above their other hits), the structural lists rank other passages first. RRF
// lets the structural votes decide ("x", in every list, comes first); FuseText keeps
// the passages the text lists are confident of first, in their fused order, and the
// structural votes order the rest.
func TestFuseTextWeakListDoesNotPullAStrongOneDown(t *testing.T) {
	dense := RankedList{Name: "dense", Weight: 1, IDs: []string{"a", "b"}, Scores: []float64{0.95, 0.94}}
	lexical := RankedList{Name: "lexical", Weight: 1, IDs: []string{"b", "a"}, Scores: []float64{30, 29}}
	for i := range 30 { // the lists' ordinary hits, "x" first
		id := fmt.Sprintf("n%02d", i)
		if i == 0 {
			id = "x"
		}
		dense.IDs, dense.Scores = append(dense.IDs, id), append(dense.Scores, 0.5-float64(i)/1000)
		lexical.IDs, lexical.Scores = append(lexical.IDs, id), append(lexical.Scores, 5-float64(i)/100)
	}
	graph := RankedList{Name: "graph", Weight: 1, IDs: []string{"x", "y"}}
	subject := RankedList{Name: "subject", Weight: 1, IDs: []string{"x", "y"}}
	if got := RRF(60, dense, lexical, graph, subject); got[0].ID != "x" {
		t.Fatalf("RRF ranks %v: the fixture does not show the structural votes pulling", ids(got))
	}
	got := FuseText(60, []RankedList{dense, lexical}, graph, subject)
	if want := []string{"b", "a", "x", "y", "n01"}; !slices.Equal(ids(got)[:5], want) {
		t.Fatalf("FuseText ranks %v, want %v first", ids(got), want)
	}
}

// Without structural lists (the hybrid strategy, the naive mode) the order is the text
// lists' fused order.
func TestFuseTextWithoutStructureIsTheTextOrder(t *testing.T) {
	dense := RankedList{Name: "dense", Weight: 1, IDs: []string{"a", "b", "c", "d"}, Scores: []float64{0.9, 0.5, 0.4, 0.3}}
	lexical := RankedList{Name: "lexical", Weight: 1, IDs: []string{"c", "b", "a", "e"}, Scores: []float64{9, 8, 7, 1}}
	text, _ := combineScores([]RankedList{dense, lexical})
	got := FuseText(60, []RankedList{dense, lexical}, RankedList{Name: "graph", Weight: 0, IDs: []string{"e"}})
	if !slices.Equal(ids(got), text.IDs) {
		t.Fatalf("FuseText ranks %v, want the text order %v", ids(got), text.IDs)
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
