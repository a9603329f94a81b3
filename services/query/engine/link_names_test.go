package engine

import (
	"slices"
	"testing"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// An n-gram with a stopword at its edge must not shut out the name beside it: in "King
// Vidor and Géza von Cziffra", "king vidor and" normalizes to "king vidor" but its span
// overlapped "and Géza von Cziffra", so "King Vidor" went unlinked.
func TestLinkNamesJoinedByAnd(t *testing.T) {
	e, st := newBridgeEngine(t)
	ctx := t.Context()
	var exts []graphstore.ChunkExtraction
	for _, name := range []string{"King Vidor", "Géza von Cziffra", "King"} {
		exts = append(exts, graphstore.ChunkExtraction{ChunkID: "c-" + name, DocumentID: "d-" + name,
			Entities: []graphstore.EntityMention{querytest.Mention(name, "PERSON", name)}})
	}
	if err := st.Graph.Merge(ctx, "demo", exts); err != nil {
		t.Fatal(err)
	}
	linked, err := e.link(ctx, "demo", "Are King Vidor and Géza von Cziffra both American directors?", nil)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, l := range linked {
		keys = append(keys, l.key)
	}
	slices.Sort(keys)
	if want := []string{"géza von cziffra", "king vidor"}; !slices.Equal(keys, want) {
		t.Errorf("linked %v, want %v", keys, want)
	}
}

// The second hop from a first-hop passage goes first to the entity whose linking
// sentence matches the question.
func TestFactMatch(t *testing.T) {
	sents := normalizedSentences("Leland is a town in Brunswick County. The 1986 film Maximum Overdrive was shot in and around Leland.")
	terms := questionTerms("Who directed the film that was shot in or around Leland in 1986?")
	own := []string{"leland"}
	film, county := factMatch(terms, sents, "maximum overdrive", own), factMatch(terms, sents, "brunswick county", own)
	if film <= county {
		t.Errorf("fact match film %v, county %v: want the film's sentence to match the question better", film, county)
	}
}
