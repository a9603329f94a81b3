package bench

import (
	"fmt"
	"testing"

	"github.com/graphrag/graphrag/pkg/community"
	"github.com/graphrag/graphrag/pkg/graphstore"
)

func members(prefix string, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("%s%02d", prefix, i))
	}
	return out
}

func comm(level int, ms ...[]string) graphstore.Community {
	var all []string
	for _, m := range ms {
		all = append(all, m...)
	}
	return graphstore.Community{ID: community.ID(level, all), Level: level, Members: all}
}

// Each way an old id is retired is counted once, under its cause; kept ids are not.
func TestRewriteBreakdown(t *testing.T) {
	a, b, c, d, e, f := members("a", 0, 3), members("b", 0, 5), members("c", 0, 4), members("d", 0, 6), members("e", 0, 4), members("f", 0, 10)
	kept := comm(0, members("k", 0, 4))
	prev := []graphstore.Community{comm(0, a), comm(0, b), comm(0, c), comm(0, d), comm(0, e), comm(0, f), kept}
	grown := comm(0, a, members("x", 0, 2))
	twin := comm(1, a, members("x", 0, 2))
	twin.ChildIDs = []string{grown.ID}
	renamed := comm(0, f, members("y", 0, 1))
	renamed.ID = "c0-renamed" // as if its size since its report had renamed it
	next := []graphstore.Community{grown, comm(0, b, c), comm(0, d[:3]), comm(0, d[3:]), renamed, kept, twin}

	br := newRewriteBreakdown()
	br.add(prev, next)
	want := map[string]int{causeGrew: 1, causeMerged: 2, causeSplit: 1, causeDissolved: 1, causeRenamed: 1}
	for _, cause := range retireCauses {
		if got := br.byLevel[0][cause]; got != want[cause] {
			t.Errorf("%s: %d, want %d", cause, got, want[cause])
		}
	}
	if br.newIDs != 6 || br.twins != 1 {
		t.Errorf("new ids %d, twins %d; want 6 and 1", br.newIDs, br.twins)
	}
	if got := br.grew[[2]int{2, 3}]; got != 1 {
		t.Errorf("grew by 2 of 3: %d, want 1 (%v)", got, br.grew)
	}
}
