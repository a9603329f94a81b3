package engine

import (
	"fmt"
	"github.com/graphrag/graphrag/pkg/vectorstore"
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

// When the walk carries the text lists, they do not vote again: the second hop the walk
// and the subject list rank first ("hop", which the text lists rank last) comes right
// after the passage both text lists are confident of ("a"), where FuseText's text vote
// puts a passage the text lists rank second ("n00") above it. Nothing a list returned
// is lost.
func TestFuseWalkTextDoesNotVoteTwice(t *testing.T) {
	dense := RankedList{Name: "dense", Weight: 1, IDs: []string{"a"}, Scores: []float64{0.95}}
	lexical := RankedList{Name: "lexical", Weight: 1, IDs: []string{"a"}, Scores: []float64{30}}
	for i := range 30 {
		id := fmt.Sprintf("n%02d", i)
		dense.IDs, dense.Scores = append(dense.IDs, id), append(dense.Scores, 0.5-float64(i)/1000)
		lexical.IDs, lexical.Scores = append(lexical.IDs, id), append(lexical.Scores, 5-float64(i)/100)
	}
	dense.IDs, dense.Scores = append(dense.IDs, "hop"), append(dense.Scores, 0.3)
	walk := RankedList{Name: "graph", Weight: 1, IDs: []string{"hop", "x", "n00"}}
	subject := RankedList{Name: "subject", Weight: 1, IDs: []string{"hop", "n00"}}
	if got := FuseText(60, []RankedList{dense, lexical}, walk, subject); got[1].ID == "hop" {
		t.Fatalf("FuseText ranks %v: the fixture does not show the text voting twice", ids(got))
	}
	got := FuseWalk(60, []RankedList{dense, lexical}, walk, subject)
	if want := []string{"a", "hop", "n00", "x", "n01"}; !slices.Equal(ids(got)[:5], want) {
		t.Fatalf("FuseWalk ranks %v, want %v first", ids(got), want)
	}
	if len(got) != 33 {
		t.Fatalf("FuseWalk returned %d passages, want all 33 of the lists", len(got))
	}
	if h := got[1].Hits; len(h) != 3 || h[0].List != "dense" || h[1].List != "graph" || h[2].List != "subject" {
		t.Fatalf("hits of hop = %+v, want dense, graph, subject", h)
	}
}

// With one text list (the offline embedder) FuseWalk is FuseText: no head, every list votes.
func TestFuseWalkOneTextListIsFuseText(t *testing.T) {
	lexical := RankedList{Name: "lexical", Weight: 1, IDs: []string{"a", "b"}, Scores: []float64{2, 1}}
	dense := RankedList{Name: "dense", Weight: 0}
	graph := RankedList{Name: "graph", Weight: 1, IDs: []string{"b", "c"}}
	got, want := FuseWalk(60, []RankedList{dense, lexical}, graph), FuseText(60, []RankedList{dense, lexical}, graph)
	if !slices.Equal(ids(got), ids(want)) {
		t.Fatalf("FuseWalk ranks %v, want FuseText's %v", ids(got), ids(want))
	}
}

// The walk's text seeds are a softmax of the combined standard scores with their own
// spread as temperature: they sum to 1, follow the text order, and give the passage the
// text lists are sure of most of the mass whatever the scores' scale.
func TestTextSeedsFollowTheTextScores(t *testing.T) {
	e := &Engine{cfg: DefaultConfig()}
	hits := func(scores ...float64) []vectorstore.Hit {
		var hs []vectorstore.Hit
		for i, s := range scores {
			hs = append(hs, vectorstore.Hit{Record: vectorstore.Record{ID: fmt.Sprintf("p%d", i)}, Score: s})
		}
		return hs
	}
	w := Weights{Dense: 1, Lexical: 1}
	for _, scale := range []float64{1, 100} {
		d := hits(0.95*scale, 0.71*scale, 0.70*scale, 0.69*scale, 0.68*scale)
		l := hits(30, 9, 8, 7, 6)
		seeds := e.textSeeds(w, d, l, 50)
		if len(seeds) != 5 || seeds[0].id != "p0" {
			t.Fatalf("scale %v: seeds %+v, want the 5 passages, p0 first", scale, seeds)
		}
		sum := 0.0
		for i, s := range seeds {
			sum += s.weight
			if i > 0 && s.weight > seeds[i-1].weight {
				t.Fatalf("scale %v: seeds %+v not in the text order", scale, seeds)
			}
		}
		if math.Abs(sum-1) > 1e-9 || seeds[0].weight < 0.5 {
			t.Fatalf("scale %v: seeds %+v, want weights summing to 1, p0 above 0.5", scale, seeds)
		}
	}
	if got := e.textSeeds(w, hits(0.9, 0.8), hits(3, 2), 1); len(got) != 1 || got[0].weight != 1 {
		t.Fatalf("pool 1: seeds %+v, want p0 at 1", got)
	}
}
