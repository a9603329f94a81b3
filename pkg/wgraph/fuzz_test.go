package wgraph_test

import (
	"math"
	"testing"

	"github.com/graphrag/graphrag/pkg/wgraph"
)

// decodeEdges turns fuzz bytes into a node count and edge list: byte 0 is n,
// then triples (u, v, w) with w a small weight (0 dropped by the builder).
func decodeEdges(data []byte) (int, []wgraph.Edge) {
	if len(data) == 0 {
		return 0, nil
	}
	n := int(data[0]%32) + 1
	var edges []wgraph.Edge
	for i := 1; i+2 < len(data); i += 3 {
		edges = append(edges, wgraph.Edge{U: int(data[i]) % n, V: int(data[i+1]) % n, W: float64(data[i+2]%8) / 2})
	}
	return n, edges
}

func FuzzBuild(f *testing.F) {
	f.Add([]byte{5, 0, 1, 2, 1, 2, 2, 3, 3, 1, 4, 4, 3})
	f.Add([]byte{1, 0, 0, 1})
	f.Add([]byte{31, 1, 2, 3, 2, 1, 4, 30, 0, 7})
	f.Fuzz(func(t *testing.T, data []byte) {
		n, edges := decodeEdges(data)
		g, err := wgraph.FromEdges(n, edges)
		if err != nil {
			t.Fatalf("valid edges rejected: %v", err)
		}
		var total, degSum float64
		for _, e := range edges {
			total += e.W
		}
		for u := range n {
			degSum += g.Degree(u)
			nb, wt := g.Neighbors(u)
			for k, v := range nb {
				if int(v) == u || (k > 0 && nb[k-1] >= v) || wt[k] <= 0 {
					t.Fatalf("node %d: bad adjacency %v %v", u, nb, wt)
				}
			}
		}
		if math.Abs(total-g.TotalWeight()) > 1e-9 || math.Abs(degSum-2*total) > 1e-9 {
			t.Fatalf("total weight %v, degree sum %v, edge sum %v", g.TotalWeight(), degSum, total)
		}
		comp, k := wgraph.ConnectedComponents(g)
		if err := wgraph.CheckConnected(g, comp); err != nil {
			t.Fatalf("components not connected: %v", err)
		}
		agg, err := wgraph.Aggregate(g, comp, k)
		if err != nil {
			t.Fatal(err)
		}
		single := make([]int, k)
		for i := range single {
			single[i] = i
		}
		if q1, q2 := wgraph.Modularity(g, comp, 1), wgraph.Modularity(agg, single, 1); math.Abs(q1-q2) > 1e-9 {
			t.Fatalf("modularity %v vs aggregated %v", q1, q2)
		}
	})
}
