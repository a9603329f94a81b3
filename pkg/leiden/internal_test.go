package leiden

import (
	"errors"
	"slices"
	"testing"

	"github.com/graphrag/graphrag/pkg/wgraph"
)

// TestBuildLevelsRepairs feeds the hierarchy builder a chain whose levels hold
// disconnected communities, the case the algorithm should never produce, and
// checks that the levels come out split, renumbered and still nested.
func TestBuildLevelsRepairs(t *testing.T) {
	// Path 0-1-2-3-4-5.
	g, err := wgraph.FromEdges(6, []wgraph.Edge{{U: 0, V: 1, W: 1}, {U: 1, V: 2, W: 1}, {U: 2, V: 3, W: 1}, {U: 3, V: 4, W: 1}, {U: 4, V: 5, W: 1}})
	if err != nil {
		t.Fatal(err)
	}
	chain := [][]int{
		{0, 1, 0, 2, 2, 3}, // community 0 = {0,2} is disconnected
		{0, 1, 0, 0, 0, 1}, // community 1 = {1,5} is disconnected
	}
	levels, err := buildLevels(g, chain, 5)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int{{0, 1, 2, 3, 3, 4}, {0, 1, 2, 2, 2, 3}}
	if len(levels) != len(want) {
		t.Fatalf("%d levels, want %d", len(levels), len(want))
	}
	for l, lv := range levels {
		if !slices.Equal(lv.Membership, want[l]) {
			t.Errorf("level %d: %v, want %v", l, lv.Membership, want[l])
		}
		if err := wgraph.CheckConnected(g, lv.Membership); err != nil {
			t.Errorf("level %d: %v", l, err)
		}
	}
	if !slices.Equal(levels[0].Parent, []int{0, 1, 2, 2, 3}) || !slices.Equal(levels[1].Parent, []int{-1, -1, -1, -1}) {
		t.Errorf("parents %v %v", levels[0].Parent, levels[1].Parent)
	}
}

func TestBuildLevelsRejectsUnnested(t *testing.T) {
	g, err := wgraph.FromEdges(4, []wgraph.Edge{{U: 0, V: 1, W: 1}, {U: 1, V: 2, W: 1}, {U: 2, V: 3, W: 1}})
	if err != nil {
		t.Fatal(err)
	}
	// {0,1},{2},{3} then {0},{1,2,3}: community {0,1} has two parents.
	if _, err := buildLevels(g, [][]int{{0, 0, 1, 2}, {0, 1, 1, 1}}, 5); !errors.Is(err, errNotNested) {
		t.Fatalf("error %v, want errNotNested", err)
	}
}
