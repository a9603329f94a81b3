// Package wgraphtest provides reference graphs and deterministic generators of
// graphs with planted community structure, for tests and benchmarks of the
// graph algorithms.
package wgraphtest

import (
	"fmt"
	"math/rand/v2"

	"github.com/graphrag/graphrag/pkg/wgraph"
)

// karate lists the 78 friendships of Zachary's karate club (1977), 1-based as published.
var karate = [78][2]int{
	{1, 2}, {1, 3}, {1, 4}, {1, 5}, {1, 6}, {1, 7}, {1, 8}, {1, 9}, {1, 11}, {1, 12}, {1, 13}, {1, 14}, {1, 18}, {1, 20}, {1, 22}, {1, 32},
	{2, 3}, {2, 4}, {2, 8}, {2, 14}, {2, 18}, {2, 20}, {2, 22}, {2, 31},
	{3, 4}, {3, 8}, {3, 9}, {3, 10}, {3, 14}, {3, 28}, {3, 29}, {3, 33},
	{4, 8}, {4, 13}, {4, 14},
	{5, 7}, {5, 11},
	{6, 7}, {6, 11}, {6, 17},
	{7, 17},
	{9, 31}, {9, 33}, {9, 34},
	{10, 34},
	{14, 34},
	{15, 33}, {15, 34},
	{16, 33}, {16, 34},
	{19, 33}, {19, 34},
	{20, 34},
	{21, 33}, {21, 34},
	{23, 33}, {23, 34},
	{24, 26}, {24, 28}, {24, 30}, {24, 33}, {24, 34},
	{25, 26}, {25, 28}, {25, 32},
	{26, 32},
	{27, 30}, {27, 34},
	{28, 34},
	{29, 32}, {29, 34},
	{30, 33}, {30, 34},
	{31, 33}, {31, 34},
	{32, 33}, {32, 34},
	{33, 34},
}

// KarateEdges returns Zachary's karate club as 78 unit-weight edges on nodes 0..33.
func KarateEdges() []wgraph.Edge {
	out := make([]wgraph.Edge, len(karate))
	for i, e := range karate {
		out[i] = wgraph.Edge{U: e[0] - 1, V: e[1] - 1, W: 1}
	}
	return out
}

// Karate returns Zachary's karate club graph (34 nodes, 78 edges).
func Karate() *wgraph.Graph {
	g, err := wgraph.FromEdges(34, KarateEdges())
	if err != nil {
		panic(fmt.Sprintf("building karate graph: %v", err)) // the table above is constant
	}
	return g
}

// PlantedPartition draws a graph of groups×size nodes where node u belongs to
// group u/size; each pair inside a group is joined with probability pIn and
// each pair across groups with pOut. It visits every pair, so keep it small;
// use Sparse for large graphs. It returns the graph and the planted groups.
func PlantedPartition(groups, size int, pIn, pOut float64, seed uint64) (*wgraph.Graph, []int) {
	n := groups * size
	rng := rand.New(rand.NewPCG(seed, 0))
	b := wgraph.NewBuilder(n)
	truth := make([]int, n)
	for u := range n {
		truth[u] = u / size
		for v := u + 1; v < n; v++ {
			p := pOut
			if u/size == v/size {
				p = pIn
			}
			if rng.Float64() < p {
				_ = b.AddEdge(u, v, 1) // in range by construction
			}
		}
	}
	g, err := b.Build()
	if err != nil {
		panic(fmt.Sprintf("building planted partition: %v", err))
	}
	return g, truth
}

// Sparse draws a graph with about `edges` unit-weight edges on nodes in groups
// of groupSize, with average degree avgDegree: each edge starts at a random
// node and ends, with probability 1-mixing, at a random node of the same group
// and otherwise at a uniformly random node. Parallel edges are summed, so the
// graph may have slightly fewer distinct edges. It returns the graph and the
// planted groups.
func Sparse(edges, avgDegree, groupSize int, mixing float64, seed uint64) (*wgraph.Graph, []int) {
	n := max(2*edges/avgDegree, groupSize)
	rng := rand.New(rand.NewPCG(seed, 1))
	truth := make([]int, n)
	for u := range n {
		truth[u] = u / groupSize
	}
	list := make([]wgraph.Edge, 0, edges)
	for len(list) < edges {
		u := rng.IntN(n)
		var v int
		if rng.Float64() < mixing {
			v = rng.IntN(n)
		} else {
			base := u / groupSize * groupSize
			v = base + rng.IntN(min(groupSize, n-base))
		}
		if u == v {
			continue
		}
		list = append(list, wgraph.Edge{U: u, V: v, W: 1})
	}
	g, err := wgraph.FromEdges(n, list)
	if err != nil {
		panic(fmt.Sprintf("building sparse planted graph: %v", err))
	}
	return g, truth
}
