package community

import (
	"fmt"
	"sort"
	"testing"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

func keys(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%03d", prefix, i)
	}
	sort.Strings(out)
	return out
}

// com is a community with a content-derived id.
func com(level int, members []string) graphstore.Community {
	m := append([]string(nil), members...)
	sort.Strings(m)
	return graphstore.Community{ID: ID(level, m), Level: level, Members: m}
}

func TestStabilize(t *testing.T) {
	a, b := keys("a", 10), keys("b", 10)
	old0a, old0b := com(0, a), com(0, b)
	old1 := com(1, append(append([]string{}, a...), b...))
	old0a.ParentID, old0b.ParentID = old1.ID, old1.ID
	old1.ChildIDs = []string{old0a.ID, old0b.ID}
	sort.Strings(old1.ChildIDs)
	prev := []graphstore.Community{old0a, old0b, old1}

	// a loses one member and gains another (Jaccard 9/11); b gains 5 (10/15).
	a2 := append(append([]string{}, a[1:]...), "a999")
	b2 := append(append([]string{}, b...), keys("c", 5)...)
	new0a, new0b := com(0, a2), com(0, b2)
	new1 := com(1, append(append([]string{}, a2...), b2...)) // 24 of 25 old (Jaccard 19/26 < 0.8)
	new0a.ParentID, new0b.ParentID = new1.ID, new1.ID
	new1.ChildIDs = []string{new0a.ID, new0b.ID}
	sort.Strings(new1.ChildIDs)
	next := []graphstore.Community{new0a, new0b, new1}

	got := Stabilize(prev, next, nil, DefaultMaxChange)
	byMembers := map[string]graphstore.Community{}
	for _, c := range got {
		byMembers[fmt.Sprint(c.Level, c.Members[0], len(c.Members))] = c
	}
	ga := byMembers[fmt.Sprint(0, a2[0], len(a2))]
	gb := byMembers[fmt.Sprint(0, b2[0], len(b2))]
	g1 := byMembers[fmt.Sprint(1, new1.Members[0], len(new1.Members))]
	if ga.ID != old0a.ID {
		t.Errorf("a changed by 2 of 11: id %s, want the old %s", ga.ID, old0a.ID)
	}
	if gb.ID != new0b.ID {
		t.Errorf("b grew by half: id %s, want its own %s", gb.ID, new0b.ID)
	}
	if g1.ID != new1.ID {
		t.Errorf("level 1 changed by 7 of 26: id %s, want its own %s", g1.ID, new1.ID)
	}
	if ga.ParentID != g1.ID || gb.ParentID != g1.ID {
		t.Errorf("parents %s %s, want %s", ga.ParentID, gb.ParentID, g1.ID)
	}
	want := []string{ga.ID, gb.ID}
	sort.Strings(want)
	if fmt.Sprint(g1.ChildIDs) != fmt.Sprint(want) {
		t.Errorf("children %v, want %v", g1.ChildIDs, want)
	}
	if _, err := graphstore.NormalizeCommunities(got); err != nil {
		t.Errorf("not a valid hierarchy: %v", err)
	}

	// The report of a was written when it had 7 members: 3 of the 10 now are not in it.
	got = Stabilize(prev, next, map[string]int{old0a.ID: 7}, DefaultMaxChange)
	for _, c := range got {
		if c.ID == old0a.ID {
			t.Errorf("a kept its id although it grew by 30%% of its size since its report")
		}
	}
	// Threshold 0: content ids only.
	if got := Stabilize(prev, next, nil, 0); fmt.Sprint(got) != fmt.Sprint(next) {
		t.Errorf("maxChange 0 renamed communities")
	}
}

// TestStabilizeAfterGrowth runs detection on a graph, then on the same graph with a
// new, separate part whose keys sort among the old ones (as new documents' entities
// do). Leiden visits the nodes in another order, and communities of the untouched part
// come out with other members, hence other content ids. Every new community whose
// members are within the threshold of an old community's gets that community's id.
func TestStabilizeAfterGrowth(t *testing.T) {
	snap := sparseSnapshot(3000, 5)
	before, err := OnSnapshot(t.Context(), snap, grapherDefaults)
	if err != nil {
		t.Fatal(err)
	}
	after, err := OnSnapshot(t.Context(), mergeSnapshots(snap, sparseSnapshot(1500, 6)), grapherDefaults)
	if err != nil {
		t.Fatal(err)
	}
	stable := Stabilize(before.Communities, after.Communities, nil, DefaultMaxChange)
	if len(stable) != len(after.Communities) {
		t.Fatalf("%d communities in, %d out", len(after.Communities), len(stable))
	}
	oldIDs := map[string]bool{}
	for _, c := range before.Communities {
		oldIDs[c.ID] = true
	}
	byContent, kept, within := 0, 0, 0
	for _, c := range after.Communities {
		if oldIDs[c.ID] {
			byContent++
		}
		if oldIDs[stable[indexOfMembers(stable, c)].ID] {
			kept++
		}
		if withinThreshold(c, before.Communities) {
			within++
		}
	}
	t.Logf("%d communities before, %d after: %d keep their id by content, %d within the threshold of an old one, %d kept by Stabilize",
		len(before.Communities), len(after.Communities), byContent, within, kept)
	if kept != within || kept <= byContent {
		t.Errorf("Stabilize kept %d ids; %d communities are within the threshold, %d kept by content alone", kept, within, byContent)
	}
	if _, err := graphstore.NormalizeCommunities(stable); err != nil {
		t.Errorf("not a valid hierarchy: %v", err)
	}
}

func indexOfMembers(cs []graphstore.Community, c graphstore.Community) int {
	for i, x := range cs {
		if x.Level == c.Level && fmt.Sprint(x.Members) == fmt.Sprint(c.Members) {
			return i
		}
	}
	return -1
}

// withinThreshold reports whether c differs from a community of prev at its level by
// a small change (SmallChange).
func withinThreshold(c graphstore.Community, prev []graphstore.Community) bool {
	set := map[string]bool{}
	for _, m := range c.Members {
		set[m] = true
	}
	for _, p := range prev {
		if p.Level != c.Level {
			continue
		}
		ov := 0
		for _, m := range p.Members {
			if set[m] {
				ov++
			}
		}
		if union := len(p.Members) + len(c.Members) - ov; ov > 0 && SmallChange(union-ov, union, DefaultMaxChange) {
			return true
		}
	}
	return false
}

// mergeSnapshots is the disjoint union of a and b, b's keys prefixed "j" (so they sort
// before a's and shift a's node indexes), with sorted keys as a store returns them.
func mergeSnapshots(a, b graphstore.Snapshot) graphstore.Snapshot {
	type edge struct {
		s, t string
		w    float64
	}
	var edges []edge
	for _, e := range a.Edges {
		edges = append(edges, edge{a.Keys[e.Source], a.Keys[e.Target], e.Weight})
	}
	for _, e := range b.Edges {
		edges = append(edges, edge{"j" + b.Keys[e.Source], "j" + b.Keys[e.Target], e.Weight})
	}
	var out graphstore.Snapshot
	out.Keys = append(out.Keys, a.Keys...)
	for _, k := range b.Keys {
		out.Keys = append(out.Keys, "j"+k)
	}
	sort.Strings(out.Keys)
	idx := map[string]int{}
	for i, k := range out.Keys {
		idx[k] = i
	}
	for _, e := range edges {
		s, t := idx[e.s], idx[e.t]
		if s > t {
			s, t = t, s
		}
		out.Edges = append(out.Edges, graphstore.Edge{Source: s, Target: t, Weight: e.w})
	}
	sort.Slice(out.Edges, func(i, j int) bool {
		if out.Edges[i].Source != out.Edges[j].Source {
			return out.Edges[i].Source < out.Edges[j].Source
		}
		return out.Edges[i].Target < out.Edges[j].Target
	})
	return out
}

// TestStabilizeTolerance checks where a change stops being small: one member more or
// less never makes a new community (TolerantMembers), and the size since the report is
// measured as the same share as the member change.
func TestStabilizeTolerance(t *testing.T) {
	a := keys("a", 30)
	for _, tc := range []struct {
		name          string
		before, after []string
		reported      int // members when its report was written; 0: unknown
		keep          bool
	}{
		{"3 plus 1 (Jaccard 0.75)", a[:3], a[:4], 0, true},
		{"4 plus 1, report of 4 (25 % larger)", a[:4], a[:5], 4, true},
		{"4 minus 1", a[:4], a[1:4], 4, true},
		{"3 plus 2", a[:3], a[:5], 0, false},
		{"4 with 1 replaced (2 of 5 changed)", a[:4], append(append([]string{}, a[1:4]...), a[20]), 0, false},
		{"24 plus 1, report of 20 (25 = 20 % not in it)", a[:24], a[:25], 20, true},
		{"25 plus 1, report of 20 (26 > 20 % not in it)", a[:25], a[:26], 20, false},
		{"10 plus 2", a[:10], a[:12], 10, true},
		{"10 plus 3 (Jaccard 0.77)", a[:10], a[:13], 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := com(0, tc.before)
			var reported map[string]int
			if tc.reported > 0 {
				reported = map[string]int{old.ID: tc.reported}
			}
			got := Stabilize([]graphstore.Community{old}, []graphstore.Community{com(0, tc.after)}, reported, DefaultMaxChange)
			if kept := got[0].ID == old.ID; kept != tc.keep {
				t.Errorf("kept the old id: %v, want %v", kept, tc.keep)
			}
		})
	}
}
