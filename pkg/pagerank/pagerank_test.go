package pagerank_test

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/graphrag/graphrag/pkg/pagerank"
	"github.com/graphrag/graphrag/pkg/wgraph"
	"github.com/graphrag/graphrag/pkg/wgraph/wgraphtest"
)

func mustGraph(t testing.TB, n int, edges []wgraph.Edge) *wgraph.Graph {
	t.Helper()
	g, err := wgraph.FromEdges(n, edges)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func sum(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
}

// denseReference runs the power iteration on a dense transition matrix built
// straight from the edge list, to a tight tolerance.
func denseReference(n int, edges []wgraph.Edge, p []float64, d float64) []float64 {
	a := make([][]float64, n) // a[u][v]: weight of the ways from u to v
	for i := range a {
		a[i] = make([]float64, n)
	}
	for _, e := range edges {
		a[e.U][e.V] += e.W
		if e.U != e.V {
			a[e.V][e.U] += e.W
		}
	}
	x := append([]float64(nil), p...)
	for range 10000 {
		next := make([]float64, n)
		for u := range n {
			out := sum(a[u])
			for v := range n {
				if out == 0 {
					next[v] += d * x[u] * p[v]
				} else {
					next[v] += d * x[u] * a[u][v] / out
				}
			}
		}
		var delta float64
		for v := range n {
			next[v] += (1 - d) * p[v]
			delta += math.Abs(next[v] - x[v])
		}
		x = next
		if delta < 1e-15 {
			break
		}
	}
	return x
}

func uniform(n int) []float64 {
	p := make([]float64, n)
	for i := range p {
		p[i] = 1 / float64(n)
	}
	return p
}

func TestStar(t *testing.T) {
	for _, k := range []int{1, 3, 10} {
		t.Run("leaves", func(t *testing.T) {
			edges := make([]wgraph.Edge, k)
			for i := range k {
				edges[i] = wgraph.Edge{U: 0, V: i + 1, W: 1}
			}
			g := mustGraph(t, k+1, edges)
			res, err := pagerank.Run(g, pagerank.WithMaxIterations(1000), pagerank.WithTolerance(1e-14))
			if err != nil {
				t.Fatal(err)
			}
			// Closed form: centre = (1+dk) / (n(1+d)), leaves share the rest.
			d, n := 0.85, float64(k+1)
			centre := (1 + d*float64(k)) / (n * (1 + d))
			if math.Abs(res.Scores[0]-centre) > 1e-12 {
				t.Errorf("centre %v, want %v", res.Scores[0], centre)
			}
			for i := 1; i <= k; i++ {
				if math.Abs(res.Scores[i]-(1-centre)/float64(k)) > 1e-12 {
					t.Errorf("leaf %d: %v, want %v", i, res.Scores[i], (1-centre)/float64(k))
				}
				if k > 1 && res.Scores[i] >= res.Scores[0] {
					t.Errorf("leaf %d outranks the centre", i)
				}
			}
		})
	}
}

func TestAgainstReference(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		edges []wgraph.Edge
		d     float64
		seeds map[int]float64
	}{
		{name: "weighted with loop and dangling", n: 6, d: 0.85, edges: []wgraph.Edge{
			{U: 0, V: 1, W: 2}, {U: 1, V: 2, W: 1}, {U: 2, V: 0, W: 0.5}, {U: 2, V: 3, W: 3}, {U: 3, V: 3, W: 1}, {U: 3, V: 4, W: 1}}},
		{name: "karate", n: 34, d: 0.85, edges: wgraphtest.KarateEdges()},
		{name: "karate damping 0.5", n: 34, d: 0.5, edges: wgraphtest.KarateEdges()},
		{name: "personalized", n: 34, d: 0.85, edges: wgraphtest.KarateEdges(), seeds: map[int]float64{0: 1, 33: 3}},
		{name: "personalized with dangling", n: 6, d: 0.85, seeds: map[int]float64{5: 1, 1: 1}, edges: []wgraph.Edge{
			{U: 0, V: 1, W: 2}, {U: 1, V: 2, W: 1}, {U: 2, V: 3, W: 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := mustGraph(t, tt.n, tt.edges)
			opts := []pagerank.Option{pagerank.WithDamping(tt.d), pagerank.WithMaxIterations(10000), pagerank.WithTolerance(1e-13)}
			p := uniform(tt.n)
			var res pagerank.Result
			var err error
			if tt.seeds == nil {
				res, err = pagerank.Run(g, opts...)
			} else {
				res, err = pagerank.Personalized(g, tt.seeds, opts...)
				p = make([]float64, tt.n)
				total := 0.0
				for u, w := range tt.seeds {
					p[u] = w
					total += w
				}
				for u := range p {
					p[u] /= total
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if !res.Converged {
				t.Fatalf("not converged after %d iterations (delta %v)", res.Iterations, res.Delta)
			}
			want := denseReference(tt.n, tt.edges, p, tt.d)
			for u := range want {
				if math.Abs(res.Scores[u]-want[u]) > 1e-10 {
					t.Errorf("node %d: %v, reference %v", u, res.Scores[u], want[u])
				}
			}
			if math.Abs(sum(res.Scores)-1) > 1e-12 {
				t.Errorf("scores sum to %v", sum(res.Scores))
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	g, _ := wgraphtest.Sparse(4000, 8, 40, 0.3, 3)
	res, err := pagerank.Run(g)
	if err != nil {
		t.Fatal(err)
	}
	if res.Iterations > pagerank.DefaultMaxIterations || res.Iterations < 2 {
		t.Errorf("%d iterations", res.Iterations)
	}
	if math.Abs(sum(res.Scores)-1) > 1e-12 {
		t.Errorf("scores sum to %v", sum(res.Scores))
	}
	again, err := pagerank.Run(g)
	if err != nil || !reflect.DeepEqual(res, again) {
		t.Errorf("two runs differ (%v)", err)
	}
	short, err := pagerank.Run(g, pagerank.WithMaxIterations(1), pagerank.WithTolerance(0))
	if err != nil || short.Converged || short.Iterations != 1 {
		t.Errorf("capped run: %+v, %v", short.Iterations, err)
	}
}

func TestPersonalizedConcentrates(t *testing.T) {
	// Two 8-cliques joined by one edge; seeds in the first clique.
	var edges []wgraph.Edge
	for _, lo := range []int{0, 8} {
		for u := lo; u < lo+8; u++ {
			for v := u + 1; v < lo+8; v++ {
				edges = append(edges, wgraph.Edge{U: u, V: v, W: 1})
			}
		}
	}
	edges = append(edges, wgraph.Edge{U: 7, V: 8, W: 1})
	g := mustGraph(t, 16, edges)
	res, err := pagerank.Personalized(g, map[int]float64{2: 1})
	if err != nil {
		t.Fatal(err)
	}
	if near := sum(res.Scores[:8]); near < 0.9 {
		t.Errorf("seed clique holds %v of the mass, want >= 0.9", near)
	}
	for u, s := range res.Scores {
		if u != 2 && s >= res.Scores[2] {
			t.Errorf("node %d scores %v >= seed %v", u, s, res.Scores[2])
		}
	}
	global, err := pagerank.Run(g)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(sum(global.Scores[:8])-0.5) > 1e-9 {
		t.Errorf("symmetric graph: uniform pagerank gives the first clique %v", sum(global.Scores[:8]))
	}
}

func TestEdgeCases(t *testing.T) {
	t.Run("empty graph", func(t *testing.T) {
		res, err := pagerank.Run(mustGraph(t, 0, nil))
		if err != nil || len(res.Scores) != 0 || !res.Converged {
			t.Errorf("empty: %+v %v", res, err)
		}
	})
	t.Run("isolated nodes are uniform", func(t *testing.T) {
		res, err := pagerank.Run(mustGraph(t, 4, nil))
		if err != nil {
			t.Fatal(err)
		}
		for u, s := range res.Scores {
			if math.Abs(s-0.25) > 1e-15 {
				t.Errorf("node %d: %v", u, s)
			}
		}
	})
	t.Run("single edge", func(t *testing.T) {
		res, err := pagerank.Run(mustGraph(t, 2, []wgraph.Edge{{U: 0, V: 1, W: 5}}))
		if err != nil || res.Scores[0] != 0.5 || res.Scores[1] != 0.5 {
			t.Errorf("single edge: %v %v", res.Scores, err)
		}
	})
}

func TestErrors(t *testing.T) {
	g := wgraphtest.Karate()
	opts := map[string]pagerank.Option{
		"damping 1":          pagerank.WithDamping(1),
		"negative damping":   pagerank.WithDamping(-0.1),
		"NaN damping":        pagerank.WithDamping(math.NaN()),
		"zero iterations":    pagerank.WithMaxIterations(0),
		"negative tolerance": pagerank.WithTolerance(-1),
		"NaN tolerance":      pagerank.WithTolerance(math.NaN()),
	}
	for name, o := range opts {
		t.Run(name, func(t *testing.T) {
			if _, err := pagerank.Run(g, o); !errors.Is(err, pagerank.ErrInvalidOption) {
				t.Errorf("Run: %v", err)
			}
			if _, err := pagerank.Personalized(g, map[int]float64{0: 1}, o); !errors.Is(err, pagerank.ErrInvalidOption) {
				t.Errorf("Personalized: %v", err)
			}
		})
	}
	seeds := map[string]map[int]float64{
		"no seeds":        nil,
		"zero weights":    {1: 0, 2: 0},
		"unknown node":    {34: 1},
		"negative node":   {-1: 1},
		"negative weight": {1: -1},
		"NaN weight":      {1: math.NaN()},
		"infinite weight": {1: math.Inf(1)},
	}
	for name, s := range seeds {
		t.Run(name, func(t *testing.T) {
			if _, err := pagerank.Personalized(g, s); !errors.Is(err, pagerank.ErrInvalidSeeds) {
				t.Errorf("Personalized: %v", err)
			}
		})
	}
}
