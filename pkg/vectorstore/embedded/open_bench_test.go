package embedded

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/proccpu"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/vectorstore/vecgen"
)

// openBenchSizes are the collection sizes of BenchmarkOpen; GRAPHRAG_BENCH_OPEN_N
// replaces them with one size (e.g. 100000, which takes minutes to set up).
func openBenchSizes() []int {
	if s := os.Getenv("GRAPHRAG_BENCH_OPEN_N"); s != "" {
		var n int
		if _, err := fmt.Sscan(s, &n); err == nil && n > 0 {
			return []int{n}
		}
	}
	return []int{10_000}
}

// heapInUse returns the live heap after full collections. Two: a graph that
// was searched stays reachable through its sync.Pool (registered globally)
// until the second collection after it was dropped.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// fillOpenBench writes n realistic 384-d records with chunk-like attributes
// in batches of 1000 (the
// graph grows by inserts, as under the pipeline) and closes the store, which
// leaves a snapshot. It logs the heap per record held while the store was
// open after the inserts, and returns queries with their exact top 50.
func fillOpenBench(b *testing.B, dir string, n int) annSet {
	b.Helper()
	ctx := context.Background()
	gen := vecgen.New(vecgen.Default(384), n)
	vecs := gen.Vectors
	set := newANNSet("open", vecs, gen.Queries(100), 50)
	set.vecs = nil // only the queries and their truth are kept
	before := heapInUse()
	t0 := time.Now()
	s, err := Open(dir, WithExactThreshold(0))
	if err != nil {
		b.Fatal(err)
	}
	if err := s.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: "c", Dim: 384}); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i += 1000 {
		recs := make([]vectorstore.Record, 0, 1000)
		for j := i; j < min(i+1000, n); j++ {
			recs = append(recs, vectorstore.Record{ID: fmt.Sprintf("r%07d", j), Vector: vecs[j], Attrs: chunkAttrs(j)})
		}
		if err := s.Upsert(ctx, "c", recs); err != nil {
			b.Fatal(err)
		}
	}
	took := time.Since(t0)
	b.Logf("n=%d: inserted in %v; heap per record after inserting: %d B", n, took.Round(time.Millisecond), (heapInUse()-before)/uint64(n))
	runtime.KeepAlive(vecs) // counted in before: keep it out of the difference
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	return set
}

// chunkAttrs are attributes shaped like those the extractor stores with a
// chunk: its document (20 chunks each) and title, section, position, skip
// flag, subject and subject aliases (every fourth list longer than 64 bytes).
func chunkAttrs(i int) map[string]string {
	d := i / 20
	aliases := fmt.Sprintf("Subject %d\nS%d", d%500, d%500)
	if d%4 == 0 {
		aliases += "\nThe longer alias list of a subject with many names, as some have"
	}
	return map[string]string{
		"document_id": fmt.Sprintf("doc-%08x", d*2654435761%(1<<32)),
		"title":       fmt.Sprintf("Annual report of the organisation, part %d", d),
		"section":     fmt.Sprintf("Section %d.%d", i%20/5+1, i%5+1),
		"position":    fmt.Sprint(i % 20),
		"skip":        "",
		"subject":     fmt.Sprintf("Subject %d", d%500),
		"aliases":     aliases,
	}
}

// storeRecall is the store's recall@50 against the exact top 50, and the
// latency of each query.
func storeRecall(b *testing.B, s *Store, set annSet) (float64, []time.Duration) {
	return recallOf(set, 50, func(q []float32) []int {
		hits, err := s.Search(context.Background(), "c", q, 50, vectorstore.Filter{})
		if err != nil {
			b.Fatal(err)
		}
		out := make([]int, len(hits))
		for i, h := range hits {
			_, _ = fmt.Sscanf(h.ID, "r%d", &out[i])
		}
		return out
	})
}

// BenchmarkOpen is the time to open a store whose one collection holds an
// HNSW graph: from its snapshot, and rebuilt (the snapshot removed, as after
// a crash before any snapshot). heap-B/rec is the dense index's heap per
// record after the open (vectors, graph, ID maps); recall@50 is the store's
// against the exact top 50 of 100 question-like queries, p50-ms and p99-ms
// their latency; open-cpu-s and cpu-ms/query the process CPU time of the
// open and per query, steadier than wall time on a shared machine.
func BenchmarkOpen(b *testing.B) {
	for _, n := range openBenchSizes() {
		b.Run(fmt.Sprintf("n=%dk", n/1000), func(b *testing.B) {
			dir := b.TempDir()
			set := fillOpenBench(b, dir, n)
			snap := filepath.Join(dir, collsDir, "c", snapshotFile)
			saved, err := os.ReadFile(snap)
			if err != nil {
				b.Fatal(err)
			}
			for _, mode := range []string{"snapshot", "rebuild"} {
				b.Run(mode, func(b *testing.B) {
					var heap uint64
					var recall float64
					var lat []time.Duration
					var replayed int
					var openCPU, queryCPU time.Duration
					for range b.N {
						b.StopTimer()
						if err := os.Remove(snap); err != nil && !os.IsNotExist(err) {
							b.Fatal(err)
						}
						if mode == "snapshot" {
							if err := os.WriteFile(snap, saved, 0o600); err != nil {
								b.Fatal(err)
							}
						}
						before := heapInUse()
						cpu0 := proccpu.Used()
						b.StartTimer()
						s, err := Open(dir, WithExactThreshold(0))
						if err != nil {
							b.Fatal(err)
						}
						b.StopTimer()
						openCPU = proccpu.Used() - cpu0
						replayed = 0
						for _, c := range s.s.colls {
							c.snapWG.Wait() // the snapshot after a rebuild holds a copy of the links
							replayed += c.dense.replayed
						}
						heap = heapInUse() - before
						cpu1 := proccpu.Used()
						recall, lat = storeRecall(b, s, set)
						queryCPU = (proccpu.Used() - cpu1) / time.Duration(len(lat))
						if err := s.Close(); err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
					}
					b.ReportMetric(float64(heap)/float64(n), "heap-B/rec")
					b.ReportMetric(recall, "recall@50")
					b.ReportMetric(float64(replayed), "replayed")
					b.ReportMetric(openCPU.Seconds(), "open-cpu-s")
					b.ReportMetric(float64(queryCPU.Microseconds())/1000, "cpu-ms/query")
					b.ReportMetric(quantileMs(lat, 0.5), "p50-ms")
					b.ReportMetric(quantileMs(lat, 0.99), "p99-ms")
				})
			}
		})
	}
}
