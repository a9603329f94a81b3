package engine

import (
	"strings"
	"testing"
)

// A drift answer's passages: the first half from the question's own search, then the
// follow-ups' fused (a passage two follow-ups found first), then the rest of the
// question's, each once, at most topK.
func TestDriftPassages(t *testing.T) {
	chunks := func(ids ...string) []Chunk {
		out := make([]Chunk, len(ids))
		for i, id := range ids {
			out[i] = Chunk{ID: id}
		}
		return out
	}
	ids := func(cs []Chunk) string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return strings.Join(out, " ")
	}
	q := chunks("a", "b", "c", "d")
	fu := [][]Chunk{chunks("x", "y"), chunks("y", "b", "z")}
	for _, tc := range []struct {
		topK int
		want string
	}{
		{5, "a b c y x"},
		{8, "a b c d y x z"},
		{1, "a"},
	} {
		if got := ids(driftPassages(60, tc.topK, q, fu)); got != tc.want {
			t.Errorf("topK %d: %q, want %q", tc.topK, got, tc.want)
		}
	}
	if got := ids(driftPassages(60, 3, q, nil)); got != "a b c" {
		t.Errorf("without follow-ups: %q, want the question's", got)
	}
}
