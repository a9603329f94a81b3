package embedded

import (
	"os"
	"strconv"
	"testing"

	"github.com/graphrag/graphrag/pkg/vectorstore/vecgen"
)

// BenchmarkInsertLarge inserts into a graph that already holds
// GRAPHRAG_BENCH_ANN_N nodes (default 200,000: 77 MB of codes, well past the
// CPU's caches), with the default M and efConstruction. The entity index of a
// 100k-chunk corpus holds ~860k nodes, and its inserts were 31 % of the
// indexing CPU (docs/benchmarks.md, session 9): this is where memory latency,
// not arithmetic, sets the cost of an insert. Building the base graph is not
// timed; run with -benchtime=Nx (N inserts).
func BenchmarkInsertLarge(b *testing.B) {
	n := 200_000
	if s := os.Getenv("GRAPHRAG_BENCH_ANN_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	cfg := defaultConfig()
	c := vecgen.New(vecgen.Default(384), n)
	g := newANNGraph(cfg.hnswM, cfg.efConstruction)
	for i, v := range c.Vectors {
		g.insert(uint64(i), quantizeUnit(v))
	}
	for i := 0; b.Loop(); i++ {
		if n+i == len(c.Vectors) {
			b.StopTimer()
			c.Extend(4096) // more documents on the same topics
			b.StartTimer()
		}
		g.insert(uint64(n+i), quantizeUnit(c.Vectors[n+i]))
	}
}
