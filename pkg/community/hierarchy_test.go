package community

import (
	"reflect"
	"slices"
	"testing"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

func TestHierarchy(t *testing.T) {
	snap := graphstore.Snapshot{Keys: []string{"a", "b", "c", "d", "e", "f", "g"},
		Edges: []graphstore.Edge{{Source: 0, Target: 1, Weight: 1}, {Source: 1, Target: 2, Weight: 1}, {Source: 3, Target: 4, Weight: 1},
			{Source: 4, Target: 5, Weight: 1}, {Source: 2, Target: 3, Weight: 1}}}
	levels := [][]int{
		{0, 0, 0, 1, 1, 1, 2}, // level 0: {a,b,c} {d,e,f} {g}
		{0, 0, 0, 0, 0, 0, 1}, // level 1: {a..f} {g}
	}
	cs := Hierarchy(snap, levels, 3)
	if len(cs) != 3 {
		t.Fatalf("communities %+v (g is below the minimum size at both levels)", cs)
	}
	abc, def, top := cs[0], cs[1], cs[2]
	if abc.Level != 0 || top.Level != 1 || !reflect.DeepEqual(top.Members, []string{"a", "b", "c", "d", "e", "f"}) {
		t.Fatalf("levels/members: %+v", cs)
	}
	children := []string{abc.ID, def.ID}
	slices.Sort(children)
	if abc.ParentID != top.ID || def.ParentID != top.ID || !reflect.DeepEqual(top.ChildIDs, children) {
		t.Fatalf("parent links: %+v", cs)
	}
	if abc.RelationshipCount != 2 || top.RelationshipCount != 5 {
		t.Fatalf("relationship counts: %d, %d", abc.RelationshipCount, top.RelationshipCount)
	}
	// Ids derive from level and membership: the same partition numbered differently
	// gives the same ids.
	again := Hierarchy(snap, [][]int{{5, 5, 5, 3, 3, 3, 9}, {7, 7, 7, 7, 7, 7, 1}}, 3)
	if !reflect.DeepEqual(ids(cs), ids(again)) {
		t.Fatalf("ids depend on numbering: %v vs %v", ids(cs), ids(again))
	}
	if ID(0, abc.Members) == ID(1, abc.Members) {
		t.Fatal("the level is not part of the id")
	}
	all := Hierarchy(snap, levels, 1)
	g0, g1 := ID(0, []string{"g"}), ID(1, []string{"g"})
	i := slices.IndexFunc(all, func(c graphstore.Community) bool { return c.ID == g0 })
	if len(all) != 5 || i < 0 || all[i].ParentID != g1 {
		t.Fatalf("minimum size 1 keeps every community, {g} under {g}: %+v", all)
	}
}

func ids(cs []graphstore.Community) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}
