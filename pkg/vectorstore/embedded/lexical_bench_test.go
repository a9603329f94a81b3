//go:build linux

package embedded

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
)

// cpuSeconds is the process's user + system CPU time: scorch merges segments in the
// background, so the wall time of the writes alone misses most of the cost.
func cpuSeconds(tb testing.TB) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkLexicalIngest writes n documents of 80 Zipf-distributed words into a text
// index one batch per document, as the chunker's upserts do, with scorch's default
// merge plan and with lexicalMergePlan, in one run. It reports the CPU seconds per 1,000
// documents including the background merges (until Close, which waits for them), the
// segments left and the latency of a two-term match query afterwards.
func BenchmarkLexicalIngest(b *testing.B) {
	plans := []struct {
		name string
		plan map[string]any
	}{{"scorch-default", nil}, {"floor10", lexicalMergePlan}}
	for _, n := range []int{2000} {
		for _, p := range plans {
			b.Run(fmt.Sprintf("%s/docs%d", p.name, n), func(b *testing.B) {
				saved := lexicalMergePlan
				lexicalMergePlan = p.plan
				defer func() { lexicalMergePlan = saved }()
				for b.Loop() {
					ingest(b, n)
				}
			})
		}
	}
}

func ingest(b *testing.B, n int) {
	r := rand.New(rand.NewPCG(7, 42))
	zipf := rand.NewZipf(r, 1.1, 1, 49999)
	text := func(words int) string {
		var sb strings.Builder
		for i := range words {
			if i > 0 {
				sb.WriteByte(' ')
			}
			fmt.Fprintf(&sb, "w%d", zipf.Uint64())
		}
		return sb.String()
	}
	cpu0 := cpuSeconds(b)
	idx, _, _, err := openLexical(b.TempDir()+"/lex", 1)
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if err := applyLexical(idx, []lexOp{{id: fmt.Sprintf("c%06d", i), text: text(80)}}, uint64(i+1)); err != nil {
			b.Fatal(err)
		}
	}
	var lat []time.Duration
	for range 200 {
		q := bleve.NewMatchQuery(fmt.Sprintf("w%d w%d", 100+r.IntN(2000), 100+r.IntN(2000)))
		start := time.Now()
		if _, err := idx.Search(bleve.NewSearchRequestOptions(q, 50, 0, false)); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	segs := segments(idx)
	if err := idx.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric((cpuSeconds(b)-cpu0)*1000/float64(n), "cpu-s/1k-docs")
	b.ReportMetric(float64(segs), "segments")
	b.ReportMetric(float64(median(lat).Microseconds())/1000, "query-p50-ms")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// segments is the number of segments in the index's current snapshot.
func segments(idx bleve.Index) int {
	st, ok := idx.StatsMap()["index"].(map[string]any)
	if !ok {
		return -1
	}
	if v, ok := st["TotFileSegmentsAtRoot"].(uint64); ok {
		return int(v)
	}
	return -1
}
