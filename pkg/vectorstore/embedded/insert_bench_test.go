package embedded

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/vectorstore/vecgen"
)

// BenchmarkInsertLarge inserts into a graph that already holds
// GRAPHRAG_BENCH_ANN_N nodes (default 200,000: 77 MB of codes, well past the
// CPU's caches), with the default M and efConstruction. The entity index of a
// 100k-chunk corpus holds ~860k nodes, and its inserts were 31 % of the
// indexing CPU (docs/benchmarks.md, indexing at 100k): this is where memory latency,
// not arithmetic, sets the cost of an insert. Building the base graph is not
// timed; run with -benchtime=Nx (N inserts).
func BenchmarkInsertLarge(b *testing.B) {
	n, c, g := largeGraph(b)
	for i := 0; b.Loop(); i++ {
		if n+i == len(c.Vectors) {
			b.StopTimer()
			c.Extend(4096) // more documents on the same topics
			b.StartTimer()
		}
		g.insert(uint64(n+i), quantizeUnit(c.Vectors[n+i]))
	}
}

// BenchmarkInsertBatchLarge is BenchmarkInsertLarge with the inserts made as
// Upsert makes them: batches of 4,096, their searches spread over GOMAXPROCS
// goroutines (insertBatch). Run both in one session and compare µs per insert.
func BenchmarkInsertBatchLarge(b *testing.B) {
	n, c, g := largeGraph(b)
	const batch = 4096
	keys := make([]uint64, 0, batch)
	vecs := make([]qvec, 0, batch)
	inserted := 0
	for b.Loop() {
		b.StopTimer()
		c.Extend(batch)
		keys, vecs = keys[:0], vecs[:0]
		for i := range batch {
			keys = append(keys, uint64(n+inserted+i))
			vecs = append(vecs, quantizeUnit(c.Vectors[n+inserted+i]))
		}
		inserted += batch
		b.StartTimer()
		g.insertBatch(keys, vecs)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(inserted), "µs/insert")
}

// largeGraph builds the untimed base graph of the insert benchmarks: n
// nodes of realistic vectors, default M and efConstruction.
func largeGraph(b *testing.B) (int, *vecgen.Corpus, *annGraph) {
	n := envInt(b, "GRAPHRAG_BENCH_ANN_N", 200_000)
	cfg := defaultConfig()
	c := vecgen.New(vecgen.Default(384), n)
	g := newANNGraph(cfg.hnswM, cfg.efConstruction)
	for i, v := range c.Vectors {
		g.insert(uint64(i), quantizeUnit(v))
	}
	return n, c, g
}

// BenchmarkBuildEffort measures what a smaller efConstruction costs in
// recall at a small k: graphs built over the same vectors with several
// efConstruction values, searched as the store searches (ef = max(efSearch,
// 6·k), exact re-rank), recall@k against the exact top k, with the build
// time. Vectors: GRAPHRAG_BENCH_VECTORS (384-d float32; entity vectors of a
// corpus, say) queried by GRAPHRAG_BENCH_QUERIES, else 100k realistic
// vectors. k is GRAPHRAG_BENCH_K (default 10, what entity linking asks for).
func BenchmarkBuildEffort(b *testing.B) {
	k := envInt(b, "GRAPHRAG_BENCH_K", 10)
	set, ok := realSet(b, k)
	if !ok {
		set = realisticSet(100_000, 300, k)
	}
	cfg := defaultConfig()
	docs := make([]*doc, len(set.vecs))
	for i := range set.vecs {
		docs[i] = &doc{id: strconv.Itoa(i), pos: i}
	}
	type variant struct{ efc, ef int }
	base := max(cfg.efSearch, efPerResult*k)
	variants := []variant{{cfg.efConstruction, base}, {cfg.efConstruction, 2 * base}, {cfg.efConstruction, 4 * base},
		{64, base}, {48, base}, {32, base}}
	graphs := map[int]*annGraph{}
	builds := map[int]time.Duration{}
	for _, v := range variants {
		if graphs[v.efc] == nil {
			graphs[v.efc], builds[v.efc], _ = buildANN(set.vecs, cfg.hnswM, v.efc, false) // keyed by index into docs
		}
		g := graphs[v.efc]
		b.Run(fmt.Sprintf("%s/efConstruction=%d/ef=%d", set.name, v.efc, v.ef), func(b *testing.B) {
			var rec float64
			var lat []time.Duration
			for b.Loop() {
				rec, lat = graphRecall(b, set, g, docs, k, v.ef)
			}
			b.ReportMetric(rec, fmt.Sprintf("recall@%d", k))
			b.ReportMetric(builds[v.efc].Seconds(), "build-s")
			b.ReportMetric(quantileMs(lat, 0.5), "p50-ms")
		})
	}
}

// envInt is the integer in the environment variable name, or def when unset.
func envInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	return n
}
