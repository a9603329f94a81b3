package engine

import (
	"fmt"
	"slices"
	"testing"

	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// newMentionEngine builds a composed two-hop question with opaque names: the question
// names the Ventral Review; its passage names the guild that publishes it; the answer
// is in a passage about something else that mentions the guild and its first president.
// No passage is about the guild, so the forward hop (to the passage about the bridge)
// has nowhere to go; distractors share more of the question's words than the answer
// does, and meetings other passages mention the guild without saying anything the
// question asks.
func newMentionEngine(t testing.TB, mention bool, meetings int) *Engine {
	t.Helper()
	s := querytest.Open(t)
	chunks := []bridgeChunk{
		{"review", "Ventral Review", "The Ventral Review is a quarterly journal published by the Orlin Guild.",
			[]string{"Ventral Review", "Orlin Guild"}},
		{"answer", "Quessa Fields", "Quessa Fields grew up near the coast. Mara Tessel, the first president of the Orlin Guild, taught her to sail.",
			[]string{"Quessa Fields", "Mara Tessel", "Orlin Guild"}},
	}
	for i := range meetings {
		chunks = append(chunks, bridgeChunk{fmt.Sprintf("meeting%d", i), fmt.Sprintf("Harbour notice %d", i),
			fmt.Sprintf("The Orlin Guild meets at harbour %d every spring.", i),
			[]string{fmt.Sprintf("Harbour notice %d", i), "Orlin Guild"}})
	}
	for i := range 8 {
		chunks = append(chunks, bridgeChunk{fmt.Sprintf("club%d", i), fmt.Sprintf("Rowing club %d", i),
			fmt.Sprintf("The first president of rowing club %d published a review of the guild's season.", i),
			[]string{fmt.Sprintf("Rowing club %d", i)}})
	}
	cfg := DefaultConfig()
	cfg.Pool = 5
	cfg.MentionHops = mention
	return newChunkEngine(t, s, chunks, cfg)
}

// The passage that mentions the bridge (the guild the first hop names) and holds what the
// first hop leaves unexplained ("first president") reaches the top 5 only through the
// mention hop; passages that mention the guild and nothing the question asks do not join
// the subject list.
func TestMentionHopFindsThePassageThatNamesTheBridge(t *testing.T) {
	q := "Who was the first president of the guild which published the Ventral Review?"
	off, _, err := contextOf(newMentionEngine(t, false, 6).Retrieve(t.Context(), Request{Corpus: "demo", Query: q, TopK: 10}))
	if err != nil {
		t.Fatal(err)
	}
	if r := rankOf(off, "answer"); r >= 1 && r <= 5 {
		t.Fatalf("without mention hops the answer passage ranks %d: the fixture does not need them; ranking %v", r, chunkIDs(off))
	}
	got, _, err := contextOf(newMentionEngine(t, true, 6).Retrieve(t.Context(), Request{Corpus: "demo", Query: q, TopK: 10}))
	if err != nil {
		t.Fatal(err)
	}
	r := rankOf(got, "answer")
	if r < 1 || r > 5 {
		t.Fatalf("answer passage ranked %d, want 1..5; ranking %v", r, chunkIDs(got))
	}
	if want := []string{"ventral review", "orlin guild"}; !slices.Equal(got.Chunks[r-1].GraphPath, want) {
		t.Errorf("mention hop path %v, want %v (the first hop's subject, then the bridge)", got.Chunks[r-1].GraphPath, want)
	}
	for _, c := range got.Chunks {
		if len(c.ID) > 7 && c.ID[:7] == "meeting" && slices.ContainsFunc(c.Lists, func(h ListHit) bool { return h.List == "subject" }) {
			t.Errorf("%s mentions the guild and nothing the question asks, yet is in the subject list: %+v", c.ID, c.Lists)
		}
	}
}

// BenchmarkMentionHops measures what mention hops add to a question whose first hop
// names an entity 128 other passages mention (the most maxSubjectChunksPerEntity reads):
// compare on with off in one run.
func BenchmarkMentionHops(b *testing.B) {
	q := "Who was the first president of the guild which published the Ventral Review?"
	for _, on := range []bool{false, true} {
		e := newMentionEngine(b, on, maxSubjectChunksPerEntity)
		b.Run(fmt.Sprintf("mention=%v", on), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := contextOf(e.Retrieve(b.Context(), Request{Corpus: "demo", Query: q, TopK: 10})); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
