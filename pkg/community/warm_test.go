package community

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/wgraph"
)

// settled is a hierarchy that a warm detection on snap returns unchanged.
func settled(t *testing.T, snap graphstore.Snapshot, o Options) []graphstore.Community {
	t.Helper()
	res, err := OnSnapshot(context.Background(), snap, o)
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		o.Previous = res.Communities
		next, err := OnSnapshot(context.Background(), snap, o)
		if err != nil {
			t.Fatal(err)
		}
		if slices.EqualFunc(res.Communities, next.Communities, sameMembers) {
			return next.Communities
		}
		res = next
	}
	t.Fatal("no settled hierarchy after 10 warm detections")
	return nil
}

func sameMembers(a, b graphstore.Community) bool {
	return a.Level == b.Level && slices.Equal(a.Members, b.Members)
}

// withClique adds a 5-clique of new keys, each sorting right after an old key, so
// that the old nodes' indexes shift as they do when entities are added.
func withClique(snap graphstore.Snapshot) graphstore.Snapshot {
	keys := slices.Clone(snap.Keys)
	var clique []string
	for i := range 5 {
		k := snap.Keys[(i+1)*len(snap.Keys)/7] + "x"
		keys, clique = append(keys, k), append(clique, k)
	}
	sort.Strings(keys)
	at := func(k string) int { i, _ := slices.BinarySearch(keys, k); return i }
	out := graphstore.Snapshot{Keys: keys}
	for _, e := range snap.Edges {
		out.Edges = append(out.Edges, graphstore.Edge{Source: at(snap.Keys[e.Source]), Target: at(snap.Keys[e.Target]), Weight: e.Weight})
	}
	for i, a := range clique {
		for _, b := range clique[i+1:] {
			out.Edges = append(out.Edges, graphstore.Edge{Source: at(a), Target: at(b), Weight: 1})
		}
	}
	sort.Slice(out.Edges, func(i, j int) bool {
		if out.Edges[i].Source != out.Edges[j].Source {
			return out.Edges[i].Source < out.Edges[j].Source
		}
		return out.Edges[i].Target < out.Edges[j].Target
	})
	return out
}

func TestWarmDetectionKeepsUntouchedCommunities(t *testing.T) {
	snap := sparseSnapshot(8000, 9)
	prev := settled(t, snap, grapherDefaults)
	grown := withClique(snap)
	o := grapherDefaults
	o.Previous = prev
	res, err := OnSnapshot(context.Background(), grown, o)
	if err != nil {
		t.Fatal(err)
	}
	checkNestedConnected(t, grown, res.Communities)
	ids := map[string]bool{}
	for _, c := range res.Communities {
		ids[c.ID] = true
	}
	lost := 0
	for _, c := range prev {
		if !ids[c.ID] { // ids are derived from level and members
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d communities changed after adding a disconnected clique", lost, len(prev))
	}
	if len(res.Communities) != len(prev)+res.Levels {
		t.Errorf("%d communities, want the %d before and the clique at each of %d levels", len(res.Communities), len(prev), res.Levels)
	}
}

// checkNestedConnected asserts that every community lies inside its parent and is
// connected in snap's graph.
func checkNestedConnected(t *testing.T, snap graphstore.Snapshot, cs []graphstore.Community) {
	t.Helper()
	g, err := Graph(snap)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]graphstore.Community{}
	for _, c := range cs {
		byID[c.ID] = c
	}
	for _, c := range cs {
		if c.ParentID != "" {
			p := byID[c.ParentID]
			for _, k := range c.Members {
				if _, ok := slices.BinarySearch(p.Members, k); !ok {
					t.Fatalf("%s: member %s not in parent %s", c.ID, k, p.ID)
				}
			}
		}
		mem := make([]int, len(snap.Keys)) // the community is 0, every other node alone
		for i := range mem {
			mem[i] = i + 1
		}
		for _, k := range c.Members {
			i, _ := slices.BinarySearch(snap.Keys, k)
			mem[i] = 0
		}
		if err := wgraph.CheckConnected(g, mem); err != nil {
			t.Fatalf("%s (level %d, %d members): %v", c.ID, c.Level, len(c.Members), err)
		}
	}
}

func TestWarmDetectionNewNodesJoin(t *testing.T) {
	snap := sparseSnapshot(8000, 9)
	prev := settled(t, snap, grapherDefaults)
	// A new key tied strongly to the members of one level-0 community joins it (or a
	// community holding it) rather than staying alone.
	var target graphstore.Community
	for _, c := range prev {
		if c.Level == 0 && len(c.Members) >= 3 {
			target = c
			break
		}
	}
	newKey := target.Members[0] + "n"
	keys := append(slices.Clone(snap.Keys), newKey)
	sort.Strings(keys)
	at := func(k string) int { i, _ := slices.BinarySearch(keys, k); return i }
	grown := graphstore.Snapshot{Keys: keys}
	for _, e := range snap.Edges {
		grown.Edges = append(grown.Edges, graphstore.Edge{Source: at(snap.Keys[e.Source]), Target: at(snap.Keys[e.Target]), Weight: e.Weight})
	}
	for _, k := range target.Members {
		s, d := at(k), at(newKey)
		grown.Edges = append(grown.Edges, graphstore.Edge{Source: min(s, d), Target: max(s, d), Weight: 5})
	}
	sort.Slice(grown.Edges, func(i, j int) bool {
		if grown.Edges[i].Source != grown.Edges[j].Source {
			return grown.Edges[i].Source < grown.Edges[j].Source
		}
		return grown.Edges[i].Target < grown.Edges[j].Target
	})
	o := grapherDefaults
	o.Previous = prev
	res, err := OnSnapshot(context.Background(), grown, o)
	if err != nil {
		t.Fatal(err)
	}
	checkNestedConnected(t, grown, res.Communities)
	want := slices.Clone(target.Members)
	want = append(want, newKey)
	sort.Strings(want)
	for _, c := range res.Communities {
		if c.Level == 0 && slices.Equal(c.Members, want) {
			return
		}
	}
	t.Errorf("no level-0 community is %v", fmt.Sprint(want))
}
