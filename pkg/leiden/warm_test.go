package leiden_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/graphrag/graphrag/pkg/leiden"
	"github.com/graphrag/graphrag/pkg/wgraph"
	"github.com/graphrag/graphrag/pkg/wgraph/wgraphtest"
)

// noisyWarmGraph has weak planted groups (40 % of edges leave them), so runs
// with different seeds or on a slightly different graph end in different
// partitions: what a warm start must not do to a partition it is given.
func noisyWarmGraph() *wgraph.Graph {
	g, _ := wgraphtest.Sparse(6000, 6, 30, 0.4, 5)
	return g
}

// fixedPoint is a partition that a warm start from it returns unchanged: an
// until-stable run, warm-started from its own result until that holds.
func fixedPoint(t *testing.T, g *wgraph.Graph) []int {
	t.Helper()
	p := top(mustRun(t, g, leiden.WithMaxIterations(0))).Membership
	for range 10 {
		q := top(mustRun(t, g, leiden.WithInitialMembership(p), leiden.WithMaxIterations(0))).Membership
		if slices.Equal(p, q) {
			return p
		}
		p = q
	}
	t.Fatal("no fixed point after 10 warm starts")
	return nil
}

func TestWarmStartKeepsOptimum(t *testing.T) {
	g := noisyWarmGraph()
	p := fixedPoint(t, g)
	for seed := range uint64(5) {
		a := mustRun(t, g, leiden.WithInitialMembership(p), leiden.WithSeed(seed))
		if got := top(a).Membership; !slices.Equal(got, p) {
			t.Errorf("seed %d: warm start moved %d of %d nodes off the optimum", seed, moved(p, got), len(p))
		}
		b := mustRun(t, g, leiden.WithInitialMembership(p), leiden.WithSeed(seed))
		for l := range a.Levels {
			if !slices.Equal(a.Levels[l].Membership, b.Levels[l].Membership) {
				t.Fatalf("seed %d: two warm runs differ at level %d", seed, l)
			}
		}
	}
}

func TestWarmStartNewComponent(t *testing.T) {
	g := noisyWarmGraph()
	p := fixedPoint(t, g)
	// The same graph plus a 5-clique that touches none of it.
	n := g.N()
	var edges []wgraph.Edge
	for u := range n {
		nb, wt := g.Neighbors(u)
		for k, v := range nb {
			if u < int(v) {
				edges = append(edges, wgraph.Edge{U: u, V: int(v), W: wt[k]})
			}
		}
	}
	for u := n; u < n+5; u++ {
		for v := u + 1; v < n+5; v++ {
			edges = append(edges, wgraph.Edge{U: u, V: v, W: 1})
		}
	}
	grown, err := wgraph.FromEdges(n+5, edges)
	if err != nil {
		t.Fatal(err)
	}
	seed := append(slices.Clone(p), -1, -1, -1, -1, -1)
	got := top(mustRun(t, grown, leiden.WithInitialMembership(seed))).Membership
	if m := moved(p, got[:n]); m > 0 {
		t.Errorf("%d of %d old nodes changed community after a disconnected component was added", m, n)
	}
	if c := got[n]; c == got[0] || slices.ContainsFunc(got[n+1:], func(x int) bool { return x != c }) {
		t.Errorf("new clique split or merged: %v", got[n:])
	}
}

func TestWarmStartNeverWorse(t *testing.T) {
	g := noisyWarmGraph()
	good := fixedPoint(t, g)
	rng := rand.New(rand.NewPCG(3, 4))
	random := make([]int, g.N())
	for u := range random {
		random[u] = rng.IntN(50) - 1 // -1: a node of its own
	}
	seeds := map[string][]int{"fixed point": good, "random": random, "coarse": make([]int, g.N())}
	for name, seed := range seeds {
		t.Run(name, func(t *testing.T) {
			q0 := wgraph.Modularity(g, ownCommunities(seed), 1)
			for s := range uint64(4) {
				res := mustRun(t, g, leiden.WithInitialMembership(seed), leiden.WithSeed(s), leiden.WithMaxIterations(1))
				if q := res.Modularity[len(res.Modularity)-1]; q < q0-1e-12 {
					t.Errorf("seed %d: modularity %.6f below the initial partition's %.6f", s, q, q0)
				}
			}
		})
	}
}

func TestWarmStartBadLength(t *testing.T) {
	g := wgraphtest.Karate()
	_, err := leiden.Run(context.Background(), g, leiden.WithInitialMembership(make([]int, g.N()-1)))
	if !errors.Is(err, leiden.ErrInvalidOption) {
		t.Errorf("error %v, want ErrInvalidOption", err)
	}
}

// moved counts the nodes whose community differs between two partitions,
// after matching each community of a to the one of b holding most of it.
func moved(a, b []int) int {
	best := map[int]map[int]int{}
	for u, c := range a {
		if best[c] == nil {
			best[c] = map[int]int{}
		}
		best[c][b[u]]++
	}
	same := 0
	for _, m := range best {
		top := 0
		for _, k := range m {
			top = max(top, k)
		}
		same += top
	}
	return len(a) - same
}

// ownCommunities replaces negative ids by a community per node, as Run reads them.
func ownCommunities(m []int) []int {
	out := slices.Clone(m)
	next := slices.Max(m) + 1
	for u, c := range out {
		if c < 0 {
			out[u], next = next, next+1
		}
	}
	return out
}
