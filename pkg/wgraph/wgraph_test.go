package wgraph_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/graphrag/graphrag/pkg/wgraph"
	"github.com/graphrag/graphrag/pkg/wgraph/wgraphtest"
)

func mustGraph(t testing.TB, n int, edges []wgraph.Edge) *wgraph.Graph {
	t.Helper()
	g, err := wgraph.FromEdges(n, edges)
	if err != nil {
		t.Fatalf("building graph: %v", err)
	}
	return g
}

func TestBuild(t *testing.T) {
	tests := []struct {
		name      string
		n         int
		edges     []wgraph.Edge
		wantEdges int
		wantTotal float64
		degrees   []float64
		loops     []float64
		neighbors [][]int32
		weights   [][]float64
	}{
		{name: "empty", n: 0},
		{name: "isolated nodes", n: 3, degrees: []float64{0, 0, 0}, loops: []float64{0, 0, 0},
			neighbors: [][]int32{{}, {}, {}}, weights: [][]float64{{}, {}, {}}},
		{name: "single edge", n: 2, edges: []wgraph.Edge{{U: 0, V: 1, W: 2}}, wantEdges: 1, wantTotal: 2,
			degrees: []float64{2, 2}, loops: []float64{0, 0},
			neighbors: [][]int32{{1}, {0}}, weights: [][]float64{{2}, {2}}},
		{name: "parallel edges summed both directions", n: 3,
			edges:     []wgraph.Edge{{U: 0, V: 1, W: 1}, {U: 1, V: 0, W: 2}, {U: 2, V: 0, W: 1}},
			wantEdges: 2, wantTotal: 4, degrees: []float64{4, 3, 1}, loops: []float64{0, 0, 0},
			neighbors: [][]int32{{1, 2}, {0}, {0}}, weights: [][]float64{{3, 1}, {3}, {1}}},
		{name: "self loops count twice in degree", n: 2,
			edges:     []wgraph.Edge{{U: 0, V: 0, W: 1.5}, {U: 0, V: 0, W: 0.5}, {U: 0, V: 1, W: 1}},
			wantEdges: 2, wantTotal: 3, degrees: []float64{5, 1}, loops: []float64{2, 0},
			neighbors: [][]int32{{1}, {0}}, weights: [][]float64{{1}, {1}}},
		{name: "zero weight edges dropped", n: 2, edges: []wgraph.Edge{{U: 0, V: 1, W: 0}},
			degrees: []float64{0, 0}, loops: []float64{0, 0},
			neighbors: [][]int32{{}, {}}, weights: [][]float64{{}, {}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := mustGraph(t, tt.n, tt.edges)
			if g.N() != tt.n || g.EdgeCount() != tt.wantEdges || g.TotalWeight() != tt.wantTotal {
				t.Fatalf("N=%d edges=%d total=%v, want %d %d %v", g.N(), g.EdgeCount(), g.TotalWeight(), tt.n, tt.wantEdges, tt.wantTotal)
			}
			for u := range tt.n {
				nb, wt := g.Neighbors(u)
				if !slices.Equal(nb, tt.neighbors[u]) || !slices.Equal(wt, tt.weights[u]) {
					t.Errorf("node %d neighbours %v %v, want %v %v", u, nb, wt, tt.neighbors[u], tt.weights[u])
				}
				if g.Degree(u) != tt.degrees[u] || g.SelfLoop(u) != tt.loops[u] || g.NodeWeight(u) != 1 {
					t.Errorf("node %d degree %v loop %v size %v, want %v %v 1", u, g.Degree(u), g.SelfLoop(u), g.NodeWeight(u), tt.degrees[u], tt.loops[u])
				}
			}
		})
	}
}

func TestZeroGraph(t *testing.T) {
	var g wgraph.Graph
	if g.N() != 0 || g.EdgeCount() != 0 || g.TotalWeight() != 0 {
		t.Fatalf("zero graph: N=%d edges=%d m=%v", g.N(), g.EdgeCount(), g.TotalWeight())
	}
	if q := wgraph.Modularity(&g, nil, 1); q != 0 {
		t.Errorf("modularity %v", q)
	}
	if _, k := wgraph.ConnectedComponents(&g); k != 0 {
		t.Errorf("%d components", k)
	}
	if err := wgraph.CheckConnected(&g, nil); err != nil {
		t.Errorf("CheckConnected: %v", err)
	}
}

func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		edges []wgraph.Edge
		want  error
	}{
		{"negative node count", -1, nil, wgraph.ErrTooManyNodes},
		{"node out of range", 2, []wgraph.Edge{{U: 0, V: 2, W: 1}}, wgraph.ErrNodeOutOfRange},
		{"negative node", 2, []wgraph.Edge{{U: -1, V: 0, W: 1}}, wgraph.ErrNodeOutOfRange},
		{"negative weight", 2, []wgraph.Edge{{U: 0, V: 1, W: -1}}, wgraph.ErrInvalidWeight},
		{"NaN weight", 2, []wgraph.Edge{{U: 0, V: 1, W: math.NaN()}}, wgraph.ErrInvalidWeight},
		{"infinite weight", 2, []wgraph.Edge{{U: 0, V: 1, W: math.Inf(1)}}, wgraph.ErrInvalidWeight},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := wgraph.FromEdges(tt.n, tt.edges); !errors.Is(err, tt.want) {
				t.Fatalf("FromEdges error %v, want %v", err, tt.want)
			}
		})
	}
	t.Run("builder keeps first error", func(t *testing.T) {
		b := wgraph.NewBuilder(2)
		if err := b.AddEdge(0, 5, 1); !errors.Is(err, wgraph.ErrNodeOutOfRange) {
			t.Fatalf("AddEdge: %v", err)
		}
		if err := b.AddEdge(0, 1, 1); !errors.Is(err, wgraph.ErrNodeOutOfRange) {
			t.Fatalf("AddEdge after error: %v", err)
		}
		if _, err := b.Build(); !errors.Is(err, wgraph.ErrNodeOutOfRange) {
			t.Fatalf("Build: %v", err)
		}
	})
}

// bruteModularity evaluates Q = 1/2m Σ_ij (A_ij − γ k_i k_j / 2m) δ(c_i,c_j)
// from a dense adjacency matrix with A_ii = 2·loop.
func bruteModularity(n int, edges []wgraph.Edge, memb []int, gamma float64) float64 {
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n)
	}
	for _, e := range edges {
		if e.U == e.V {
			a[e.U][e.U] += 2 * e.W
			continue
		}
		a[e.U][e.V] += e.W
		a[e.V][e.U] += e.W
	}
	k := make([]float64, n)
	var two float64
	for i := range n {
		for j := range n {
			k[i] += a[i][j]
		}
		two += k[i]
	}
	if two == 0 {
		return 0
	}
	var q float64
	for i := range n {
		for j := range n {
			if memb[i] == memb[j] {
				q += a[i][j] - gamma*k[i]*k[j]/two
			}
		}
	}
	return q / two
}

func TestModularity(t *testing.T) {
	twoTriangles := []wgraph.Edge{{0, 1, 1}, {1, 2, 1}, {0, 2, 1}, {3, 4, 1}, {4, 5, 1}, {3, 5, 1}, {2, 3, 1}}
	withLoops := []wgraph.Edge{{0, 0, 2}, {0, 1, 1}, {1, 2, 3}, {2, 2, 1}, {2, 3, 0.5}}
	tests := []struct {
		name  string
		n     int
		edges []wgraph.Edge
		memb  []int
		gamma float64
		want  float64 // NaN: compare with the brute-force formula only
	}{
		// Two triangles joined by one edge: Q = 2·(3/7 − (7/14)²) = 5/14.
		{"two triangles", 6, twoTriangles, []int{0, 0, 0, 1, 1, 1}, 1, 5.0 / 14},
		{"one community", 6, twoTriangles, []int{0, 0, 0, 0, 0, 0}, 1, 0},
		{"resolution 0.5", 6, twoTriangles, []int{0, 0, 0, 1, 1, 1}, 0.5, 6.0/7 - 0.25},
		{"self loops", 4, withLoops, []int{0, 0, 1, 1}, 1, math.NaN()},
		{"self loops singletons", 4, withLoops, []int{0, 1, 2, 3}, 1.3, math.NaN()},
		{"no edges", 3, nil, []int{0, 1, 2}, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := mustGraph(t, tt.n, tt.edges)
			got := wgraph.Modularity(g, tt.memb, tt.gamma)
			brute := bruteModularity(tt.n, tt.edges, tt.memb, tt.gamma)
			if math.Abs(got-brute) > 1e-12 {
				t.Errorf("Modularity = %v, brute force %v", got, brute)
			}
			if !math.IsNaN(tt.want) && math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("Modularity = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestConnectivity(t *testing.T) {
	// 0-1-2 path, 3-4 edge, 5 isolated.
	g := mustGraph(t, 6, []wgraph.Edge{{0, 1, 1}, {1, 2, 1}, {3, 4, 1}})
	comp, k := wgraph.ConnectedComponents(g)
	if want := []int{0, 0, 0, 1, 1, 2}; k != 3 || !slices.Equal(comp, want) {
		t.Fatalf("ConnectedComponents = %v,%d want %v,3", comp, k, want)
	}
	tests := []struct {
		name      string
		memb      []int
		split     []int
		bad       int // community reported as disconnected, -1 for none
		badPieces int
	}{
		{"components are connected", []int{0, 0, 0, 1, 1, 2}, []int{0, 0, 0, 1, 1, 2}, -1, 0},
		{"singletons", []int{5, 4, 3, 2, 1, 0}, []int{0, 1, 2, 3, 4, 5}, -1, 0},
		{"path ends without middle", []int{0, 1, 0, 2, 2, 3}, []int{0, 1, 2, 3, 3, 4}, 0, 2},
		{"everything in one", []int{0, 0, 0, 0, 0, 0}, []int{0, 0, 0, 1, 1, 2}, 0, 3},
		{"later community broken", []int{0, 0, 0, 1, 2, 1}, []int{0, 0, 0, 1, 2, 3}, 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			split, _, err := wgraph.SplitDisconnected(g, tt.memb)
			if err != nil || !slices.Equal(split, tt.split) {
				t.Errorf("SplitDisconnected = %v, %v want %v", split, err, tt.split)
			}
			err = wgraph.CheckConnected(g, tt.memb)
			var de *wgraph.DisconnectedError
			switch {
			case tt.bad < 0 && err != nil:
				t.Errorf("CheckConnected = %v, want nil", err)
			case tt.bad >= 0 && (!errors.As(err, &de) || de.Community != tt.bad || de.Components != tt.badPieces):
				t.Errorf("CheckConnected = %v, want community %d in %d pieces", err, tt.bad, tt.badPieces)
			}
			if err := wgraph.CheckConnected(g, split); err != nil {
				t.Errorf("split membership still disconnected: %v", err)
			}
		})
	}
	t.Run("bad membership", func(t *testing.T) {
		if err := wgraph.CheckConnected(g, []int{0}); !errors.Is(err, wgraph.ErrBadMembership) {
			t.Errorf("short membership: %v", err)
		}
		if err := wgraph.CheckConnected(g, []int{0, 0, 0, 0, 0, -1}); !errors.Is(err, wgraph.ErrBadMembership) {
			t.Errorf("negative id: %v", err)
		}
	})
}

func TestAggregatePreservesModularity(t *testing.T) {
	g := wgraphtest.Karate()
	// Factions of the club (Zachary's split) and a finer 4-way split.
	fine := []int{0, 0, 0, 0, 1, 1, 1, 0, 2, 2, 1, 0, 0, 0, 2, 2, 1, 0, 2, 0, 2, 0, 2, 3, 3, 3, 2, 3, 3, 2, 2, 3, 2, 2}
	coarse := make([]int, len(fine))
	for u, c := range fine {
		coarse[u] = c / 2
	}
	agg, err := wgraph.Aggregate(g, fine, 4)
	if err != nil {
		t.Fatal(err)
	}
	if agg.N() != 4 || agg.TotalWeight() != g.TotalWeight() {
		t.Fatalf("aggregate N=%d m=%v, want 4 and %v", agg.N(), agg.TotalWeight(), g.TotalWeight())
	}
	var size float64
	for u := range agg.N() {
		size += agg.NodeWeight(u)
	}
	if size != 34 {
		t.Errorf("node weights sum to %v, want 34", size)
	}
	for _, gamma := range []float64{0.5, 1, 2} {
		if a, b := wgraph.Modularity(g, fine, gamma), wgraph.Modularity(agg, []int{0, 1, 2, 3}, gamma); math.Abs(a-b) > 1e-12 {
			t.Errorf("γ=%v: modularity %v on graph, %v on aggregate singletons", gamma, a, b)
		}
		if a, b := wgraph.Modularity(g, coarse, gamma), wgraph.Modularity(agg, []int{0, 0, 1, 1}, gamma); math.Abs(a-b) > 1e-12 {
			t.Errorf("γ=%v: modularity %v on graph, %v on aggregate", gamma, a, b)
		}
	}
	if _, err := wgraph.Aggregate(g, fine, 3); !errors.Is(err, wgraph.ErrBadMembership) {
		t.Errorf("Aggregate with too small count: %v", err)
	}
}

func TestRenumber(t *testing.T) {
	got, k := wgraph.Renumber([]int{7, 3, 7, 9, 3})
	if want := []int{0, 1, 0, 2, 1}; k != 3 || !slices.Equal(got, want) {
		t.Errorf("Renumber = %v,%d want %v,3", got, k, want)
	}
}

func TestKarate(t *testing.T) {
	g := wgraphtest.Karate()
	if g.N() != 34 || g.EdgeCount() != 78 || g.TotalWeight() != 78 {
		t.Fatalf("karate N=%d edges=%d m=%v", g.N(), g.EdgeCount(), g.TotalWeight())
	}
	if g.Degree(33) != 17 || g.Degree(0) != 16 {
		t.Errorf("karate degrees %v %v, want 16 and 17", g.Degree(0), g.Degree(33))
	}
}
