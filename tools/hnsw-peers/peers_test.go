package hnswpeers

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/coder/hnsw"

	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
	"github.com/graphrag/graphrag/pkg/vectorstore/vecgen"
)

const k = 50

type set struct {
	vecs, queries [][]float32
	truth         [][]string
}

func id(i int) string { return fmt.Sprintf("c%07d", i) }

func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func makeSet(n int) set {
	c := vecgen.New(vecgen.Default(384), n)
	s := set{vecs: c.Vectors, queries: c.Queries(200)}
	for _, q := range s.queries {
		idx := make([]int, n)
		sc := make([]float32, n)
		for i, v := range s.vecs {
			idx[i], sc[i] = i, dot(q, v)
		}
		slices.SortFunc(idx, func(a, b int) int {
			if sc[a] != sc[b] {
				if sc[a] > sc[b] {
					return -1
				}
				return 1
			}
			return a - b
		})
		var t []string
		for _, i := range idx[:k] {
			t = append(t, id(i))
		}
		s.truth = append(s.truth, t)
	}
	return s
}

func heap() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / 1e6
}

// measure reports recall@50 and latency of search over the set's queries.
func measure(b *testing.B, s set, search func(q []float32) []string) {
	var found int
	lat := make([]time.Duration, 0, len(s.queries))
	for i, q := range s.queries {
		t0 := time.Now()
		got := search(q)
		lat = append(lat, time.Since(t0))
		for _, g := range got {
			if slices.Contains(s.truth[i], g) {
				found++
			}
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(found)/float64(k*len(s.queries)), "recall@50")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

func sizes() []int {
	if v, err := strconv.Atoi(os.Getenv("HNSW_PEERS_N")); err == nil {
		return []int{v}
	}
	return []int{10_000, 100_000}
}

func storeSearch(b *testing.B, st *embedded.Store) func(q []float32) []string {
	return func(q []float32) []string {
		hits, err := st.Search(context.Background(), "c", q, k, vectorstore.Filter{})
		if err != nil {
			b.Fatal(err)
		}
		out := make([]string, len(hits))
		for i, h := range hits {
			out[i] = h.ID
		}
		return out
	}
}

// BenchmarkPeers builds each index once per size and measures it at several
// ef. The embedded store's graph is built when the store opens a collection
// larger than its exact-scan threshold (set to 0 here); coder/hnsw's by Add.
func BenchmarkPeers(b *testing.B) {
	ctx := context.Background()
	for _, n := range sizes() {
		s := makeSet(n)
		dir := b.TempDir()
		st, err := embedded.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		if err := st.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: "c", Dim: 384}); err != nil {
			b.Fatal(err)
		}
		for lo := 0; lo < n; lo += 5000 {
			recs := make([]vectorstore.Record, 0, 5000)
			for i := lo; i < min(n, lo+5000); i++ {
				recs = append(recs, vectorstore.Record{ID: id(i), Vector: s.vecs[i]})
			}
			if err := st.Upsert(ctx, "c", recs); err != nil {
				b.Fatal(err)
			}
		}
		if err := st.Close(); err != nil {
			b.Fatal(err)
		}
		exact, err := embedded.Open(dir, embedded.WithExactThreshold(math.MaxInt))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("n=%d/embedded-exact", n), func(b *testing.B) {
			for b.Loop() {
				measure(b, s, storeSearch(b, exact))
			}
		})
		if err := exact.Close(); err != nil {
			b.Fatal(err)
		}
		for _, ef := range []int{64, 128, 256} {
			h0 := heap()
			t0 := time.Now()
			st, err := embedded.Open(dir, embedded.WithExactThreshold(0), embedded.WithHNSW(0, 0, ef))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := st.Search(ctx, "c", s.queries[0], k, vectorstore.Filter{}); err != nil { // loads the collection
				b.Fatal(err)
			}
			build, mem := time.Since(t0), heap()-h0
			b.Run(fmt.Sprintf("n=%d/embedded/ef=%d", n, ef), func(b *testing.B) {
				for b.Loop() {
					measure(b, s, storeSearch(b, st))
				}
				b.ReportMetric(build.Seconds(), "open-s")
				b.ReportMetric(mem, "heap-MB")
			})
			// Close writes a snapshot, so only the first open builds the graph.
			if err := st.Close(); err != nil {
				b.Fatal(err)
			}
		}
		h0 := heap()
		t0 := time.Now()
		g := hnsw.NewGraph[int]()
		g.M, g.Ml = 16, 1/2.77
		for i, v := range s.vecs {
			g.Add(hnsw.MakeNode(i, v))
		}
		build, mem := time.Since(t0), heap()-h0
		for _, ef := range []int{64, 128, 256} {
			g.EfSearch = ef
			b.Run(fmt.Sprintf("n=%d/coder-hnsw/ef=%d", n, ef), func(b *testing.B) {
				for b.Loop() {
					measure(b, s, func(q []float32) []string {
						var out []string
						for _, nd := range g.Search(q, k) {
							out = append(out, id(nd.Key))
						}
						return out
					})
				}
				b.ReportMetric(build.Seconds(), "build-s")
				b.ReportMetric(mem, "heap-MB")
			})
		}
	}
}
