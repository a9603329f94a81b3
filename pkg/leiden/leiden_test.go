package leiden_test

import (
	"context"
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/graphrag/graphrag/pkg/leiden"
	"github.com/graphrag/graphrag/pkg/wgraph"
	"github.com/graphrag/graphrag/pkg/wgraph/wgraphtest"
)

func mustRun(t testing.TB, g *wgraph.Graph, opts ...leiden.Option) leiden.Result {
	t.Helper()
	res, err := leiden.Run(context.Background(), g, opts...)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkResult(t, g, res)
	return res
}

// checkResult asserts the structural guarantees of every result: valid dense
// ids numbered by smallest node, connected communities, strictly coarser
// nested levels with consistent parent links.
func checkResult(t testing.TB, g *wgraph.Graph, res leiden.Result) {
	t.Helper()
	if len(res.Levels) == 0 || len(res.Modularity) != len(res.Levels) {
		t.Fatalf("%d levels, %d modularities", len(res.Levels), len(res.Modularity))
	}
	for l, lv := range res.Levels {
		if len(lv.Membership) != g.N() || len(lv.Parent) != lv.Count {
			t.Fatalf("level %d: %d members, %d parents, count %d, n %d", l, len(lv.Membership), len(lv.Parent), lv.Count, g.N())
		}
		next := 0 // ids must appear in increasing order of first member
		for u, c := range lv.Membership {
			if c > next || c < 0 {
				t.Fatalf("level %d: node %d has id %d, expected at most %d", l, u, c, next)
			}
			if c == next {
				next++
			}
		}
		if next != lv.Count {
			t.Fatalf("level %d: %d ids used, count %d", l, next, lv.Count)
		}
		if err := wgraph.CheckConnected(g, lv.Membership); err != nil {
			t.Fatalf("level %d: %v", l, err)
		}
		if l == len(res.Levels)-1 {
			for c, p := range lv.Parent {
				if p != -1 {
					t.Fatalf("top level community %d has parent %d", c, p)
				}
			}
			continue
		}
		up := res.Levels[l+1]
		if up.Count >= lv.Count {
			t.Fatalf("level %d has %d communities, level %d has %d: not coarser", l, lv.Count, l+1, up.Count)
		}
		for u, c := range lv.Membership {
			if lv.Parent[c] != up.Membership[u] {
				t.Fatalf("level %d: node %d in %d with parent %d, but in %d one level up", l, u, c, lv.Parent[c], up.Membership[u])
			}
		}
	}
}

func top(res leiden.Result) leiden.Level { return res.Levels[len(res.Levels)-1] }

func TestKarate(t *testing.T) {
	g := wgraphtest.Karate()
	for seed := range uint64(10) {
		t.Run("seed", func(t *testing.T) {
			res := mustRun(t, g, leiden.WithSeed(seed), leiden.WithMaxLevels(10))
			if q := res.Modularity[len(res.Modularity)-1]; q < 0.41 {
				t.Errorf("seed %d: modularity %.4f < 0.41", seed, q)
			}
			if c := top(res).Count; c < 3 || c > 5 {
				t.Errorf("seed %d: %d communities, want 3..5", seed, c)
			}
			for l, lv := range res.Levels {
				if q := wgraph.Modularity(g, lv.Membership, 1); q != res.Modularity[l] {
					t.Errorf("level %d: reported modularity %v, recomputed %v", l, res.Modularity[l], q)
				}
			}
			for l := 1; l < len(res.Modularity); l++ {
				if res.Modularity[l] < res.Modularity[l-1] {
					t.Errorf("seed %d: modularity drops from %v to %v at level %d", seed, res.Modularity[l-1], res.Modularity[l], l)
				}
			}
		})
	}
}

// nmi is the normalised mutual information 2·I(a;b)/(H(a)+H(b)).
func nmi(a, b []int) float64 {
	n := float64(len(a))
	joint := map[[2]int]float64{}
	pa, pb := map[int]float64{}, map[int]float64{}
	for i := range a {
		joint[[2]int{a[i], b[i]}]++
		pa[a[i]]++
		pb[b[i]]++
	}
	var mi, ha, hb float64
	for k, c := range joint {
		mi += c / n * math.Log(c*n/(pa[k[0]]*pb[k[1]]))
	}
	for _, c := range pa {
		ha -= c / n * math.Log(c/n)
	}
	for _, c := range pb {
		hb -= c / n * math.Log(c/n)
	}
	if ha+hb == 0 {
		return 1
	}
	return 2 * mi / (ha + hb)
}

func TestPlantedPartition(t *testing.T) {
	tests := []struct {
		name         string
		groups, size int
		pIn, pOut    float64
		seed         uint64
		exact        bool
		minNMI       float64
		opts         []leiden.Option
	}{
		{name: "8x30", groups: 8, size: 30, pIn: 0.3, pOut: 0.01, seed: 1, exact: true, minNMI: 1},
		{name: "8x30 other draw", groups: 8, size: 30, pIn: 0.3, pOut: 0.01, seed: 7, exact: true, minNMI: 1},
		{name: "16x20 noisier", groups: 16, size: 20, pIn: 0.4, pOut: 0.02, seed: 3, minNMI: 0.95},
		{name: "8x30 cpm", groups: 8, size: 30, pIn: 0.3, pOut: 0.01, seed: 1, minNMI: 0.95,
			opts: []leiden.Option{leiden.WithQuality(leiden.CPM), leiden.WithResolution(0.1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, truth := wgraphtest.PlantedPartition(tt.groups, tt.size, tt.pIn, tt.pOut, tt.seed)
			res := mustRun(t, g, tt.opts...)
			got := top(res).Membership
			if tt.exact && !slices.Equal(got, truth) {
				t.Errorf("planted groups not recovered: %d communities", top(res).Count)
			}
			if v := nmi(got, truth); v < tt.minNMI {
				t.Errorf("NMI %.4f < %.2f", v, tt.minNMI)
			}
		})
	}
}

// bridgeGraph is two 6-cliques each tied to a hub node that is also tied to a
// third, larger clique: Louvain may move the hub to the large clique and leave
// the two small cliques in one community held together by nothing.
func bridgeGraph() *wgraph.Graph {
	var edges []wgraph.Edge
	clique := func(lo, hi int) {
		for u := lo; u < hi; u++ {
			for v := u + 1; v < hi; v++ {
				edges = append(edges, wgraph.Edge{U: u, V: v, W: 1})
			}
		}
	}
	clique(0, 6)
	clique(6, 12)
	clique(13, 25)
	hub := 12
	for _, u := range []int{0, 1, 6, 7} {
		edges = append(edges, wgraph.Edge{U: hub, V: u, W: 1})
	}
	for u := 13; u < 19; u++ {
		edges = append(edges, wgraph.Edge{U: hub, V: u, W: 1})
	}
	g, err := wgraph.FromEdges(25, edges)
	if err != nil {
		panic(err)
	}
	return g
}

func TestConnectedCommunities(t *testing.T) {
	sparse, _ := wgraphtest.Sparse(3000, 6, 25, 0.4, 5)
	tests := []struct {
		name  string
		g     *wgraph.Graph
		seeds uint64
	}{
		{"bridge", bridgeGraph(), 30},
		{"karate", wgraphtest.Karate(), 30},
		{"sparse noisy", sparse, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for seed := range tt.seeds {
				for _, gamma := range []float64{0.5, 1, 2} {
					mustRun(t, tt.g, leiden.WithSeed(seed), leiden.WithResolution(gamma), leiden.WithMaxLevels(8))
				}
			}
		})
	}
}

func TestDeterminism(t *testing.T) {
	g, _ := wgraphtest.Sparse(5000, 8, 40, 0.3, 11)
	for _, seed := range []uint64{0, 42, 1 << 60} {
		a := mustRun(t, g, leiden.WithSeed(seed), leiden.WithMaxLevels(10))
		b := mustRun(t, g, leiden.WithSeed(seed), leiden.WithMaxLevels(10))
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("seed %d: two runs differ", seed)
		}
	}
}

func TestMaxLevels(t *testing.T) {
	g, _ := wgraphtest.Sparse(5000, 8, 40, 0.3, 11)
	full := mustRun(t, g, leiden.WithMaxLevels(100))
	if len(full.Levels) < 3 {
		t.Fatalf("only %d levels; the test needs a deeper hierarchy", len(full.Levels))
	}
	for _, capN := range []int{1, 2, 3} {
		t.Run("cap", func(t *testing.T) {
			res := mustRun(t, g, leiden.WithMaxLevels(capN))
			if len(res.Levels) != capN {
				t.Fatalf("%d levels, want %d", len(res.Levels), capN)
			}
			// The cap selects levels; it never changes the final partition.
			if !reflect.DeepEqual(top(res).Membership, top(full).Membership) {
				t.Errorf("top level differs from the uncapped run")
			}
			if capN > 1 && !reflect.DeepEqual(res.Levels[0].Membership, full.Levels[0].Membership) {
				t.Errorf("finest level differs from the uncapped run")
			}
		})
	}
}

func TestEdgeCases(t *testing.T) {
	tests := []struct {
		name      string
		n         int
		edges     []wgraph.Edge
		want      []int // top-level membership
		wantLevel int
	}{
		{name: "empty graph", n: 0, want: []int{}, wantLevel: 1},
		{name: "isolated nodes", n: 4, want: []int{0, 1, 2, 3}, wantLevel: 1},
		{name: "single edge", n: 2, edges: []wgraph.Edge{{U: 0, V: 1, W: 1}}, want: []int{0, 0}, wantLevel: 1},
		{name: "single edge and isolated", n: 3, edges: []wgraph.Edge{{U: 2, V: 1, W: 1}}, want: []int{0, 1, 1}, wantLevel: 1},
		{name: "self loops only", n: 3, edges: []wgraph.Edge{{U: 0, V: 0, W: 1}, {U: 2, V: 2, W: 3}}, want: []int{0, 1, 2}, wantLevel: 1},
		// Heavy loops make each node its own best community despite the edge.
		{name: "loops outweigh edge", n: 2, edges: []wgraph.Edge{{U: 0, V: 0, W: 10}, {U: 1, V: 1, W: 10}, {U: 0, V: 1, W: 1}},
			want: []int{0, 1}, wantLevel: 1},
		{name: "two triangles", n: 6, edges: []wgraph.Edge{{U: 0, V: 1, W: 1}, {U: 1, V: 2, W: 1}, {U: 0, V: 2, W: 1}, {U: 3, V: 4, W: 1}, {U: 4, V: 5, W: 1}, {U: 3, V: 5, W: 1}, {U: 2, V: 3, W: 1}},
			want: []int{0, 0, 0, 1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := wgraph.FromEdges(tt.n, tt.edges)
			if err != nil {
				t.Fatal(err)
			}
			res := mustRun(t, g)
			if got := top(res).Membership; !slices.Equal(got, tt.want) {
				t.Errorf("membership %v, want %v", got, tt.want)
			}
			if tt.wantLevel > 0 && len(res.Levels) != tt.wantLevel {
				t.Errorf("%d levels, want %d", len(res.Levels), tt.wantLevel)
			}
		})
	}
}

func TestCPM(t *testing.T) {
	var edges []wgraph.Edge
	for _, lo := range []int{0, 5} {
		for u := lo; u < lo+5; u++ {
			for v := u + 1; v < lo+5; v++ {
				edges = append(edges, wgraph.Edge{U: u, V: v, W: 1})
			}
		}
	}
	edges = append(edges, wgraph.Edge{U: 4, V: 5, W: 1})
	g, err := wgraph.FromEdges(10, edges)
	if err != nil {
		t.Fatal(err)
	}
	// Merging the cliques gains 1 edge and costs γ·(10²−2·5²)/2 = 25γ.
	tests := []struct {
		gamma float64
		want  int
	}{{0.5, 2}, {0.05, 2}, {0.03, 1}, {0.001, 1}}
	for _, tt := range tests {
		t.Run("gamma", func(t *testing.T) {
			res := mustRun(t, g, leiden.WithQuality(leiden.CPM), leiden.WithResolution(tt.gamma))
			if c := top(res).Count; c != tt.want {
				t.Errorf("γ=%v: %d communities, want %d", tt.gamma, c, tt.want)
			}
		})
	}
}

func TestOptionsAndErrors(t *testing.T) {
	g := wgraphtest.Karate()
	bad := map[string]leiden.Option{
		"negative resolution": leiden.WithResolution(-1),
		"NaN resolution":      leiden.WithResolution(math.NaN()),
		"zero levels":         leiden.WithMaxLevels(0),
		"negative iterations": leiden.WithMaxIterations(-1),
		"negative randomness": leiden.WithRandomness(-0.1),
		"unknown quality":     leiden.WithQuality(leiden.Quality(9)),
		"negative tolerance":  leiden.WithTolerance(-1),
	}
	for name, opt := range bad {
		t.Run(name, func(t *testing.T) {
			if _, err := leiden.Run(context.Background(), g, opt); !errors.Is(err, leiden.ErrInvalidOption) {
				t.Errorf("error %v, want ErrInvalidOption", err)
			}
		})
	}
	t.Run("cancelled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := leiden.Run(ctx, g); !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
	})
	t.Run("one iteration", func(t *testing.T) {
		res := mustRun(t, g, leiden.WithMaxIterations(1))
		if res.Iterations != 1 {
			t.Errorf("%d iterations, want 1", res.Iterations)
		}
	})
	t.Run("tolerance stops early", func(t *testing.T) {
		g, _ := wgraphtest.Sparse(5000, 8, 40, 0.3, 11)
		if res := mustRun(t, g); res.Iterations < 2 {
			t.Fatalf("default run took %d iterations; the test needs more", res.Iterations)
		}
		if res := mustRun(t, g, leiden.WithTolerance(2)); res.Iterations != 1 {
			t.Errorf("%d iterations with tolerance 2 (above any modularity rise), want 1", res.Iterations)
		}
	})
	t.Run("greedy refinement", func(t *testing.T) {
		res := mustRun(t, g, leiden.WithRandomness(0))
		if q := res.Modularity[len(res.Modularity)-1]; q < 0.41 {
			t.Errorf("modularity %v < 0.41", q)
		}
	})
	t.Run("quality names", func(t *testing.T) {
		if leiden.Modularity.String() != "modularity" || leiden.CPM.String() != "cpm" {
			t.Errorf("names %q %q", leiden.Modularity, leiden.CPM)
		}
	})
}
