package engine

import (
	"slices"
	"testing"
)

// retrievedIDs runs one retrieval with the given option and weights and returns the
// chunk ids in rank order.
func retrievedIDs(t *testing.T, e *Engine, walkCarriesText bool, q string, w Weights) []string {
	t.Helper()
	e.cfg.WalkCarriesText = walkCarriesText
	got, _, err := contextOf(e.Retrieve(t.Context(), Request{Corpus: "demo", Query: q, TopK: 10, Weights: &w}))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range got.Chunks {
		ids = append(ids, c.ID)
	}
	return ids
}

// With two text lists and the walk as the only structural list, the second hop (the
// passage about the film the Leland passage names, which shares no word with the
// question) is found by the walk alone. When the text lists vote again beside the walk,
// the distractors they rank second to ninth keep it out of the top 5; when the walk
// carries them (ADR 0074), it comes right after the first hop.
func TestWalkCarriesTextLiftsTheSecondHop(t *testing.T) {
	e, _ := newBridgeEngine(t)
	q := "Who directed the film that was shot in or around Leland, North Carolina in 1986?"
	w := Weights{Dense: 1, Lexical: 1, Graph: 1}
	off := retrievedIDs(t, e, false, q, w)
	if r := slices.Index(off, "overdrive") + 1; r >= 1 && r <= 5 {
		t.Fatalf("the text lists voting beside the walk rank the second hop %d (%v): the fixture does not show them pulling it down", r, off)
	}
	on := retrievedIDs(t, e, true, q, w)
	if len(on) < 2 || on[0] != "leland" || on[1] != "overdrive" {
		t.Fatalf("with the walk carrying the text lists: %v, want leland then overdrive", on)
	}
}

// With one text list (the offline embedder's default: BM25 alone) there is no second list
// to agree on a confident head, so the option changes nothing.
func TestWalkCarriesTextNeedsTwoTextLists(t *testing.T) {
	e, _ := newBridgeEngine(t)
	q := "Who directed the film that was shot in or around Leland, North Carolina in 1986?"
	w := Weights{Lexical: 1, Graph: 1, Subject: 1}
	if off, on := retrievedIDs(t, e, false, q, w), retrievedIDs(t, e, true, q, w); !slices.Equal(off, on) {
		t.Fatalf("one text list: %v with the option, %v without", on, off)
	}
}
