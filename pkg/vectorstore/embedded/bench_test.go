package embedded_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
	"github.com/graphrag/graphrag/pkg/vectorstore/vecgen"
)

const benchDim = 384

// corpus generates reproducible synthetic records: vectors shaped like
// sentence embeddings of chunks (package vecgen) and texts drawn from a Zipf
// vocabulary, like real chunks.
type corpus struct {
	r    *rand.Rand
	zipf *rand.Zipf
	vecs *vecgen.Corpus
	next int
}

// newCorpus plans about n records (more can be drawn).
func newCorpus(seed uint64, n int) *corpus {
	r := rand.New(rand.NewPCG(seed, 42))
	cfg := vecgen.Default(benchDim)
	cfg.Seed = seed
	return &corpus{r: r, zipf: rand.NewZipf(r, 1.1, 1, 49999), vecs: vecgen.New(cfg, n)}
}

func (c *corpus) vec() []float32 {
	if c.next == len(c.vecs.Vectors) {
		c.vecs.Extend(1024)
	}
	c.next++
	return c.vecs.Vectors[c.next-1]
}

// queryWords draws query terms from the Zipf vocabulary but skips its 100
// most frequent words: they occur in most documents, like the English stop
// words the analyzer removes from real text.
func (c *corpus) queryWords(n int) string {
	var sb strings.Builder
	for i := 0; i < n; {
		w := c.zipf.Uint64()
		if w < 100 {
			continue
		}
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "w%d", w)
		i++
	}
	return sb.String()
}

func (c *corpus) words(n int) string {
	var sb strings.Builder
	for i := range n {
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "w%d", c.zipf.Uint64())
	}
	return sb.String()
}

func (c *corpus) records(start, n int) []vectorstore.Record {
	recs := make([]vectorstore.Record, n)
	for i := range recs {
		id := start + i
		recs[i] = vectorstore.Record{
			ID: fmt.Sprintf("chunk%07d", id), Vector: c.vec(), Text: c.words(80),
			Attrs: map[string]string{"doc": fmt.Sprintf("d%d", id/20), "shard": fmt.Sprintf("s%d", id%10)},
		}
	}
	return recs
}

func percentile(d []time.Duration, p float64) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[min(len(s)-1, int(p*float64(len(s))))].Microseconds()) / 1000
}

// BenchmarkUpsert measures durable upsert throughput into a lexical
// collection (fsynced bbolt commit + HNSW insert + bleve batch per call).
func BenchmarkUpsert(b *testing.B) {
	for _, batch := range []int{1, 100} {
		b.Run(fmt.Sprintf("batch%d", batch), func(b *testing.B) {
			ctx := context.Background()
			s, err := embedded.Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if err := s.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: "c", Dim: benchDim, Lexical: true}); err != nil {
				b.Fatal(err)
			}
			c := newCorpus(1, b.N*batch)
			pre := make([][]vectorstore.Record, 0, b.N)
			for i := range b.N {
				pre = append(pre, c.records(i*batch, batch))
			}
			b.ResetTimer()
			for i := range b.N {
				if err := s.Upsert(ctx, "c", pre[i]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkSearch loads n records once, then measures latency of dense,
// filtered dense, BM25 and hybrid (dense + BM25) queries, reporting p50/p99
// and the recall@50 of the HNSW graph against the exact scan (question-like
// queries; the retrieval pool is 50).
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { benchSearch(b, n) })
	}
}

func benchSearch(b *testing.B, n int) {
	ctx := context.Background()
	dir := b.TempDir()
	s, err := embedded.Open(dir, embedded.WithExactThreshold(math.MaxInt)) // dense rows: the exact scan
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if err := s.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: "c", Dim: benchDim, Lexical: true}); err != nil {
		b.Fatal(err)
	}
	c := newCorpus(2, n)
	start := time.Now()
	for i := 0; i < n; i += 1000 {
		if err := s.Upsert(ctx, "c", c.records(i, min(1000, n-i))); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("loaded %d records in %v", n, time.Since(start).Round(time.Millisecond))

	queries := make([][]float32, 200)
	texts := make([]string, len(queries))
	common := make([]string, len(queries))
	qvecs := c.vecs.Queries(len(queries))
	for i := range queries {
		queries[i] = qvecs[i]
		texts[i] = c.queryWords(4)
		common[i] = c.words(4)
	}
	run := func(name string, op func(i int) error) {
		b.Run(name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for i := range b.N {
				t0 := time.Now()
				if err := op(i % len(queries)); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.ReportMetric(percentile(lat, 0.5), "p50-ms")
			b.ReportMetric(percentile(lat, 0.99), "p99-ms")
		})
	}
	run("dense", func(i int) error {
		_, err := s.Search(ctx, "c", queries[i], 10, vectorstore.Filter{})
		return err
	})
	run("dense-attr-filter", func(i int) error {
		_, err := s.Search(ctx, "c", queries[i], 10, vectorstore.Filter{Attrs: map[string]string{"shard": "s3"}})
		return err
	})
	run("dense-ids-filter", func(i int) error {
		ids := make([]string, 500)
		for j := range ids {
			ids[j] = fmt.Sprintf("chunk%07d", (i*7919+j*31)%n)
		}
		_, err := s.Search(ctx, "c", queries[i], 10, vectorstore.Filter{IDs: ids})
		return err
	})
	run("bm25", func(i int) error {
		_, err := s.SearchText(ctx, "c", texts[i], 10, vectorstore.Filter{})
		return err
	})
	run("bm25-common-terms", func(i int) error {
		_, err := s.SearchText(ctx, "c", common[i], 10, vectorstore.Filter{})
		return err
	})
	run("hybrid", func(i int) error {
		if _, err := s.Search(ctx, "c", queries[i], 10, vectorstore.Filter{}); err != nil {
			return err
		}
		_, err := s.SearchText(ctx, "c", texts[i], 10, vectorstore.Filter{})
		return err
	})
	// The HNSW graph: latency and recall@50 against the exact scans.
	const k = 50
	truth := make([][]string, 100)
	for i := range truth {
		hits, err := s.Search(ctx, "c", queries[i], k, vectorstore.Filter{})
		if err != nil {
			b.Fatal(err)
		}
		for _, h := range hits {
			truth[i] = append(truth[i], h.ID)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	hs, err := embedded.Open(dir, embedded.WithExactThreshold(0))
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("built an HNSW graph of %d nodes in %v", n, time.Since(t0).Round(time.Millisecond))
	if err := hs.Close(); err != nil { // writes the snapshot the runs below load
		b.Fatal(err)
	}
	for _, ef := range []int{64, 128, 256} {
		hs, err := embedded.Open(dir, embedded.WithExactThreshold(0), embedded.WithHNSW(0, 0, ef))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("hnsw-ef%d", ef), func(b *testing.B) {
			var found, total int
			lat := make([]time.Duration, 0, b.N)
			for j := range b.N {
				i := j % len(truth)
				t1 := time.Now()
				hits, err := hs.Search(ctx, "c", queries[i], k, vectorstore.Filter{})
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t1))
				for _, h := range hits {
					if slices.Contains(truth[i], h.ID) {
						found++
					}
				}
				total += len(truth[i])
			}
			b.ReportMetric(percentile(lat, 0.5), "p50-ms")
			b.ReportMetric(percentile(lat, 0.99), "p99-ms")
			b.ReportMetric(float64(found)/float64(total), "recall@50")
		})
		if err := hs.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
