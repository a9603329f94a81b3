package pagerank_test

import (
	"fmt"
	"testing"

	"github.com/graphrag/graphrag/pkg/pagerank"
	"github.com/graphrag/graphrag/pkg/wgraph/wgraphtest"
)

// The same synthetic graphs as the leiden benchmarks: average degree 10,
// planted groups of 50 nodes, 20% of edge ends drawn uniformly.
func BenchmarkPageRank(b *testing.B) {
	for _, size := range []int{10_000, 100_000, 1_000_000} {
		g, _ := wgraphtest.Sparse(size, 10, 50, 0.2, 2026)
		b.Run(fmt.Sprintf("edges=%d", size), func(b *testing.B) {
			b.ReportAllocs()
			var res pagerank.Result
			for b.Loop() {
				var err error
				if res, err = pagerank.Run(g); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(res.Iterations), "iterations")
		})
		b.Run(fmt.Sprintf("personalized/edges=%d", size), func(b *testing.B) {
			b.ReportAllocs()
			seeds := map[int]float64{0: 1, g.N() / 2: 1, g.N() - 1: 2}
			for b.Loop() {
				if _, err := pagerank.Personalized(g, seeds); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
