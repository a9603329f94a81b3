package engine

import (
	"fmt"
	"slices"
	"testing"

	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// reverseFixture is a bridge seen from the other side: the question describes the
// cricketer (the first hop); the answer is in a passage that mentions him without
// being about him, and shares one word with the question. Distractors share the
// question's other words.
func newReverseEngine(t testing.TB, reverse bool, extraMentions int) *Engine {
	t.Helper()
	s := querytest.Open(t)
	chunks := []bridgeChunk{
		{"stokes", "Ben Stokes", "Ben Stokes is an English cricketer born in Christchurch, New Zealand.",
			[]string{"Ben Stokes", "Christchurch", "New Zealand"}},
		{"record", "Hello Friends", "Hello Friends is a compilation album DJed by Jack Dangers with tracks produced by Ben Stokes.",
			[]string{"Hello Friends", "Jack Dangers", "Ben Stokes"}},
		// Mentions the cricketer, says nothing the question asks: no hop.
		{"fans", "Cricket supporters", "Supporters cheered Ben Stokes at every match.",
			[]string{"Cricket supporters", "Ben Stokes"}},
	}
	for i := range 8 {
		chunks = append(chunks, bridgeChunk{fmt.Sprintf("cricket%d", i), fmt.Sprintf("Club %d", i),
			fmt.Sprintf("An English cricketer born in Christchurch plays for club %d.", i), []string{"Christchurch"}})
	}
	for i := range extraMentions {
		chunks = append(chunks, bridgeChunk{fmt.Sprintf("mention%d", i), fmt.Sprintf("Match report %d", i),
			fmt.Sprintf("In match %d Ben Stokes took three wickets. The crowd sang about an album of club songs.", i),
			[]string{fmt.Sprintf("Match report %d", i), "Ben Stokes"}})
	}
	for i := range 4 {
		chunks = append(chunks, bridgeChunk{fmt.Sprintf("compilation%d", i), fmt.Sprintf("Volume %d", i),
			fmt.Sprintf("A compilation album partially produced in London, volume %d.", i), []string{"London"}})
	}
	cfg := DefaultConfig()
	cfg.Pool = 5
	cfg.ReverseHops = reverse
	return newChunkEngine(t, s, chunks, cfg)
}

// The passage that mentions the first hop's subject and holds what the first hop
// leaves unexplained ("album") reaches the top 5 only through the reverse hop; the
// passage that mentions him and matches nothing else does not join the subject list.
func TestReverseHopFindsTheMentioningPassage(t *testing.T) {
	q := "Who was the DJ of the compilation album partially produced by an English cricketer born in Christchurch, New Zealand?"
	off, _, err := contextOf(newReverseEngine(t, false, 0).Retrieve(t.Context(), Request{Corpus: "demo", Query: q, TopK: 10}))
	if err != nil {
		t.Fatal(err)
	}
	if r := rankOf(off, "record"); r >= 1 && r <= 5 {
		t.Fatalf("without reverse hops the answer passage ranks %d: the fixture does not need them; ranking %v", r, chunkIDs(off))
	}
	got, _, err := contextOf(newReverseEngine(t, true, 0).Retrieve(t.Context(), Request{Corpus: "demo", Query: q, TopK: 10}))
	if err != nil {
		t.Fatal(err)
	}
	r := rankOf(got, "record")
	if r < 1 || r > 5 {
		t.Fatalf("answer passage ranked %d, want 1..5; ranking %v", r, chunkIDs(got))
	}
	if want := []string{"ben stokes", "hello friends"}; !slices.Equal(got.Chunks[r-1].GraphPath, want) {
		t.Errorf("reverse hop path %v, want %v (the first hop's subject, then the passage's)", got.Chunks[r-1].GraphPath, want)
	}
	for _, c := range got.Chunks {
		if c.ID == "fans" && slices.ContainsFunc(c.Lists, func(h ListHit) bool { return h.List == "subject" }) {
			t.Errorf("a passage that mentions the cricketer and nothing the question asks is in the subject list: %+v", c.Lists)
		}
	}
}

// BenchmarkReverseHops measures what reverse hops add to a question whose first hop is
// about an entity 128 other passages mention (the most maxSubjectChunksPerEntity reads):
// compare on with off in one run.
func BenchmarkReverseHops(b *testing.B) {
	q := "Who was the DJ of the compilation album partially produced by an English cricketer born in Christchurch, New Zealand?"
	for _, on := range []bool{false, true} {
		e := newReverseEngine(b, on, maxSubjectChunksPerEntity)
		b.Run(fmt.Sprintf("reverse=%v", on), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := contextOf(e.Retrieve(b.Context(), Request{Corpus: "demo", Query: q, TopK: 10})); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
