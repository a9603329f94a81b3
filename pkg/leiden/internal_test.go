package leiden

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
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
	chain := [][]int32{
		{0, 1, 0, 2, 2, 3}, // community 0 = {0,2} is disconnected
		{0, 1, 0, 0, 0, 1}, // community 1 = {1,5} is disconnected
	}
	levels, err := newTestSolver(1).buildLevels(fromWGraph(g), chain, 5)
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
	if _, err := newTestSolver(1).buildLevels(fromWGraph(g), [][]int32{{0, 0, 1, 2}, {0, 1, 1, 1}}, 5); !errors.Is(err, errNotNested) {
		t.Fatalf("error %v, want errNotNested", err)
	}
}

// TestGainIsModularityRise checks the bookkeeping of the local moving: the
// gains summed over an iteration, divided by m, must equal the rise in
// modularity between its start and end partitions.
func TestGainIsModularityRise(t *testing.T) {
	g, err := wgraph.FromEdges(34, ringOfCliques())
	if err != nil {
		t.Fatal(err)
	}
	for _, gamma := range []float64{0.5, 1, 2} {
		s := newTestSolver(7)
		w, part := degreesAndSingletons(g)
		r := gamma / (2 * g.TotalWeight())
		for it := range 3 {
			before := wgraph.Modularity(g, toInt(part), gamma)
			_, final, gain, err := s.iterate(context.Background(), fromWGraph(g), w, r, part)
			if err != nil {
				t.Fatal(err)
			}
			rise := wgraph.Modularity(g, toInt(final), gamma) - before
			if math.Abs(gain/g.TotalWeight()-rise) > 1e-12 {
				t.Errorf("γ=%v iteration %d: gain/m %v, modularity rise %v", gamma, it, gain/g.TotalWeight(), rise)
			}
			part = slices.Clone(final)
		}
	}
}

// ringOfCliques is six sparse 5-node groups tied into a ring, plus a weighted
// path with a self loop and a light edge: structure for many moves.
func ringOfCliques() []wgraph.Edge {
	var edges []wgraph.Edge
	for c := range 6 {
		b := 5 * c
		for u := b; u < b+5; u++ {
			for v := u + 1; v < b+5; v++ {
				if (u+v)%3 != 0 {
					edges = append(edges, wgraph.Edge{U: u, V: v, W: 1})
				}
			}
		}
		edges = append(edges, wgraph.Edge{U: b, V: (b + 7) % 30, W: 1})
	}
	edges = append(edges, wgraph.Edge{U: 30, V: 31, W: 2}, wgraph.Edge{U: 31, V: 32, W: 1}, wgraph.Edge{U: 32, V: 32, W: 1}, wgraph.Edge{U: 33, V: 0, W: 0.5})
	return edges
}

// TestRawChainConnected checks the algorithm itself, before the safety-net
// split in buildLevels: every refined level and the final partition of every
// iteration must already be connected on noisy graphs, over many seeds.
func TestRawChainConnected(t *testing.T) {
	g := noisyGraph(t, 600, 2400, 11)
	for seed := range uint64(15) {
		for _, gamma := range []float64{0.3, 1, 3} {
			s := newTestSolver(seed)
			w, part := degreesAndSingletons(g)
			r := gamma / (2 * g.TotalWeight())
			for it := range 4 {
				chain, final, gain, err := s.iterate(context.Background(), fromWGraph(g), w, r, part)
				if err != nil {
					t.Fatal(err)
				}
				for l, m := range chain {
					if err := wgraph.CheckConnected(g, toInt(m)); err != nil {
						t.Fatalf("seed %d γ=%v iteration %d level %d: %v", seed, gamma, it, l, err)
					}
				}
				if err := wgraph.CheckConnected(g, toInt(final)); err != nil {
					t.Fatalf("seed %d γ=%v iteration %d final: %v", seed, gamma, it, err)
				}
				if gain <= 0 {
					break
				}
				part = slices.Clone(final)
			}
		}
	}
}

// noisyGraph draws m random edges with weights 1..3 on n nodes, biased to
// nearby ids so that there is some structure to find.
func noisyGraph(t *testing.T, n, m int, seed uint64) *wgraph.Graph {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0))
	b := wgraph.NewBuilder(n)
	for range m {
		u := rng.IntN(n)
		v := (u + 1 + rng.IntN(20)) % n
		if rng.IntN(4) == 0 {
			v = rng.IntN(n)
		}
		if err := b.AddEdge(u, v, float64(1+rng.IntN(3))); err != nil {
			t.Fatal(err)
		}
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func newTestSolver(seed uint64) *solver {
	return &solver{cfg: defaultConfig(), rng: rand.New(rand.NewPCG(seed, pcgStream))}
}

// degreesAndSingletons returns the modularity node weights of g and the
// partition into singletons.
func degreesAndSingletons(g *wgraph.Graph) ([]float64, []int32) {
	w := make([]float64, g.N())
	part := make([]int32, g.N())
	for u := range w {
		w[u] = g.Degree(u)
		part[u] = int32(u)
	}
	return w, part
}

func toInt(m []int32) []int {
	out := make([]int, len(m))
	for i, c := range m {
		out[i] = int(c)
	}
	return out
}
