package leiden_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"

	"gonum.org/v1/gonum/graph/community"
	"gonum.org/v1/gonum/graph/simple"

	"github.com/graphrag/graphrag/pkg/leiden"
	"github.com/graphrag/graphrag/pkg/leiden/internal/edgelist"
	"github.com/graphrag/graphrag/pkg/proccpu"
	"github.com/graphrag/graphrag/pkg/wgraph"
	"github.com/graphrag/graphrag/pkg/wgraph/wgraphtest"
)

// benchSizes are edge counts of the synthetic graphs: average degree 10,
// planted groups of 50 nodes, 20% of edge ends drawn uniformly.
var benchSizes = []int{10_000, 100_000, 1_000_000}

var benchGraphs sync.Map // edges -> *wgraph.Graph

func benchGraph(edges int) *wgraph.Graph {
	if g, ok := benchGraphs.Load(edges); ok {
		return g.(*wgraph.Graph)
	}
	g, _ := wgraphtest.Sparse(edges, 10, 50, 0.2, 2026)
	benchGraphs.Store(edges, g)
	return g
}

// devGraph is the entity graph of the development set (hotpotqa, 8,497
// entities), exported by scripts/bench-peers from an embedded index.
func devGraph(b *testing.B) *wgraph.Graph {
	g, err := edgelist.ReadFile(filepath.Join("testdata", "dev-entities.edges.gz"))
	if err != nil {
		b.Fatal(err)
	}
	return g
}

func BenchmarkLeiden(b *testing.B) {
	for _, size := range benchSizes {
		g := benchGraph(size)
		b.Run(fmt.Sprintf("edges=%d", size), func(b *testing.B) { benchLeiden(b, g) })
	}
	b.Run("dev-entities", func(b *testing.B) { benchLeiden(b, devGraph(b)) })
}

// BenchmarkLeidenStable iterates until an iteration moves no node (the
// defaults before ADR 0018), for the cost of the last 0.0001 of modularity.
func BenchmarkLeidenStable(b *testing.B) {
	for _, size := range benchSizes {
		g := benchGraph(size)
		b.Run(fmt.Sprintf("edges=%d", size), func(b *testing.B) { benchLeiden(b, g, leiden.WithMaxIterations(0)) })
	}
	b.Run("dev-entities", func(b *testing.B) { benchLeiden(b, devGraph(b), leiden.WithMaxIterations(0)) })
}

func benchLeiden(b *testing.B, g *wgraph.Graph, opts ...leiden.Option) {
	b.ReportAllocs()
	var res leiden.Result
	cpu := proccpu.Used()
	for b.Loop() {
		var err error
		res, err = leiden.Run(context.Background(), g, opts...)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(proccpu.Used()-cpu)/1e6/float64(b.N), "cpu-ms/op")
	b.ReportMetric(res.Modularity[len(res.Modularity)-1], "modularity")
	b.ReportMetric(float64(res.Levels[len(res.Levels)-1].Count), "communities")
	b.ReportMetric(float64(len(res.Levels)), "levels")
	b.ReportMetric(float64(res.Iterations), "iterations")
}

// BenchmarkGonumLouvain runs gonum's Louvain (community.Modularize) on the
// same graphs for comparison; graph construction is outside the timer.
func BenchmarkGonumLouvain(b *testing.B) {
	for _, size := range benchSizes {
		g := benchGraph(size)
		b.Run(fmt.Sprintf("edges=%d", size), func(b *testing.B) {
			ug := simple.NewWeightedUndirectedGraph(0, 0)
			for u := range g.N() {
				ug.AddNode(simple.Node(u))
			}
			for u := range g.N() {
				nb, wt := g.Neighbors(u)
				for k, v := range nb {
					if int(v) > u {
						ug.SetWeightedEdge(ug.NewWeightedEdge(simple.Node(u), simple.Node(v), wt[k]))
					}
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			var reduced community.ReducedGraph
			for b.Loop() {
				reduced = community.Modularize(ug, 1, rand.NewPCG(1, 2))
			}
			b.StopTimer()
			comms := reduced.Communities()
			membership := make([]int, g.N())
			for c, nodes := range comms {
				for _, nd := range nodes {
					membership[nd.ID()] = c
				}
			}
			b.ReportMetric(wgraph.Modularity(g, membership, 1), "modularity")
			b.ReportMetric(float64(len(comms)), "communities")
		})
	}
}
