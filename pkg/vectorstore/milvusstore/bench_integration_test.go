//go:build integration

package milvusstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/vectorstore"
)

const benchDim = 384

func benchVec(r *rand.Rand) []float32 {
	v := make([]float32, benchDim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

var benchWords = []string{"graph", "entity", "community", "dopamine", "reward", "neuron", "summary", "river", "memory", "sleep"}

func benchRecs(r *rand.Rand, start, n int) []vectorstore.Record {
	recs := make([]vectorstore.Record, n)
	for i := range recs {
		id := start + i
		recs[i] = vectorstore.Record{
			ID:     fmt.Sprintf("rec%07d", id),
			Vector: benchVec(r),
			Text:   fmt.Sprintf("%s %s %s record %d", benchWords[id%10], benchWords[(id/10)%10], benchWords[r.IntN(10)], id),
			Attrs:  map[string]string{"group": fmt.Sprintf("g%d", id%10)},
		}
	}
	return recs
}

func benchCollection(b *testing.B, s vectorstore.Store, lexical bool) string {
	b.Helper()
	name := fmt.Sprintf("bench_%d", time.Now().UnixNano()%1_000_000_000)
	if err := s.EnsureCollection(context.Background(), vectorstore.CollectionSpec{Name: name, Dim: benchDim, Lexical: lexical}); err != nil {
		b.Fatalf("EnsureCollection: %v", err)
	}
	b.Cleanup(func() { _ = s.DropCollection(context.Background(), name) })
	return name
}

// BenchmarkUpsert: batches of 100 records of dim 384.
func BenchmarkUpsert(b *testing.B) {
	for _, lexical := range []bool{false, true} {
		b.Run(fmt.Sprintf("lexical=%v", lexical), func(b *testing.B) {
			s := open(b, serverAddr(b))
			coll := benchCollection(b, s, lexical)
			r := rand.New(rand.NewPCG(1, 1))
			batches := make([][]vectorstore.Record, 0, 64)
			for i := range 64 {
				batches = append(batches, benchRecs(r, i*100, 100))
			}
			b.ResetTimer()
			start := time.Now()
			for i := 0; b.Loop(); i++ {
				if err := s.Upsert(context.Background(), coll, batches[i%len(batches)]); err != nil {
					b.Fatalf("Upsert: %v", err)
				}
			}
			b.ReportMetric(float64(b.N*100)/time.Since(start).Seconds(), "records/s")
		})
	}
}

// BenchmarkSearch: top 10 of 10k records of dim 384, with latency
// percentiles.
func BenchmarkSearch(b *testing.B) {
	const n = 10_000
	ctx := context.Background()
	s := open(b, serverAddr(b))
	coll := benchCollection(b, s, true)
	r := rand.New(rand.NewPCG(2, 2))
	for i := 0; i < n; i += 100 {
		if err := s.Upsert(ctx, coll, benchRecs(r, i, 100)); err != nil {
			b.Fatalf("Upsert: %v", err)
		}
	}
	queries := make([][]float32, 256)
	for i := range queries {
		queries[i] = benchVec(r)
	}
	for _, tc := range []struct {
		name string
		run  func(i int) error
	}{
		{"dense", func(i int) error {
			_, err := s.Search(ctx, coll, queries[i%len(queries)], 10, vectorstore.Filter{})
			return err
		}},
		{"dense+attr filter", func(i int) error {
			_, err := s.Search(ctx, coll, queries[i%len(queries)], 10, vectorstore.Filter{Attrs: map[string]string{"group": "g3"}})
			return err
		}},
		{"bm25", func(i int) error {
			_, err := s.SearchText(ctx, coll, benchWords[i%10]+" "+benchWords[(i/10)%10], 10, vectorstore.Filter{})
			return err
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var lat []time.Duration
			for i := 0; b.Loop(); i++ {
				t0 := time.Now()
				if err := tc.run(i); err != nil {
					b.Fatalf("search: %v", err)
				}
				lat = append(lat, time.Since(t0))
			}
			slices.Sort(lat)
			pct := func(p float64) float64 {
				return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
			}
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
		})
	}
}
