package extractor

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
)

// proseDocument returns about n bytes of Markdown prose: headings, paragraphs
// of sentences over a small vocabulary with names and numbers, as documents
// have them. It is reproducible.
func proseDocument(n int) string {
	words := strings.Fields(`the a of and to in is was for on with as by at from that which river city
		council bridge built century north south station museum school church company railway
		population district village region county became during after before under between
		Marrow Quillane Hester Ostrava Lindqvist Okafor Tamsin Vellacourt estuary harbour
		lighthouse survey archive record report season festival market treaty election`)
	r := rand.New(rand.NewPCG(20, 24))
	var sb strings.Builder
	sb.Grow(n + 4096)
	for sec := 0; sb.Len() < n; sec++ {
		fmt.Fprintf(&sb, "## Section %d\n\n", sec)
		for range 4 + r.IntN(6) {
			for range 3 + r.IntN(6) {
				k := 8 + r.IntN(18)
				for i := range k {
					w := words[r.IntN(len(words))]
					if i == 0 {
						w = strings.ToUpper(w[:1]) + w[1:]
					}
					sb.WriteString(w)
					if r.IntN(12) == 0 {
						sb.WriteString(" " + strconv.Itoa(1800+r.IntN(220)))
					}
					if i < k-1 {
						sb.WriteByte(' ')
					}
				}
				sb.WriteString(". ")
			}
			sb.WriteString("\n\n")
		}
	}
	return sb.String()
}

// memPeak follows the peak of the Go heap (objects, live or not yet swept)
// and of the process's resident set (VmHWM, reset through clear_refs).
type memPeak struct {
	stop     chan struct{}
	done     sync.WaitGroup
	heapPeak uint64
	idleRSS  uint64
}

func startMemPeak() *memPeak {
	runtime.GC()
	debug.FreeOSMemory()
	p := &memPeak{stop: make(chan struct{}), idleRSS: procStatusKB("VmRSS")}
	// Writing 5 resets the high-water mark of the resident set (Linux ≥ 4.0).
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	p.done.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			p.heapPeak = max(p.heapPeak, sample[0].Value.Uint64())
			select {
			case <-p.stop:
				return
			case <-t.C:
			}
		}
	})
	return p
}

// end returns the peak heap and the peak resident set above the one at start,
// in MB.
func (p *memPeak) end() (heapMB, rssMB float64) {
	close(p.stop)
	p.done.Wait()
	hwm := procStatusKB("VmHWM")
	return float64(p.heapPeak) / 1e6, float64(int64(hwm)-int64(p.idleRSS)) / 1e3
}

// procStatusKB reads a kB field of /proc/self/status; 0 where there is none.
func procStatusKB(field string) uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// BenchmarkChunkDocument20MB runs the chunker's handler on a 20 MB document
// read from the object store, as `graphrag up` does with the offline
// defaults: chunking, the offline embedder (384 dimensions), the embedded
// vector store (dense and BM25) and the chunk events. It reports the peak Go
// heap, the peak resident set above the idle process (the in-process NATS
// server included) and the bytes allocated, per document.
func BenchmarkChunkDocument20MB(b *testing.B) {
	text := proseDocument(20 << 20)
	srv := bustest.StartServer(b)
	bs, err := bus.New(bustest.Connect(b, srv))
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	if err := pipeline.Provision(ctx, bs, pipeline.DefaultTopology()); err != nil {
		b.Fatal(err)
	}
	vs, err := embedded.Open(filepath.Join(b.TempDir(), "v"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = vs.Close() })
	s, err := New(DefaultConfig(), Deps{Bus: bs, Vectors: vs, Embedder: hashembed.New(384), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	s.dim = 384 // Start would probe it, and start consumers the benchmark does not want
	if err := s.openBuckets(ctx); err != nil {
		b.Fatal(err)
	}
	ref, err := bs.PutObject(ctx, schema.DocumentBucket, "demo/big", bytes.NewReader([]byte(text)))
	if err != nil {
		b.Fatal(err)
	}
	var heapMB, rssMB, allocMB float64
	for i := 0; b.Loop(); i++ {
		d := events.Document{Schema: events.SchemaDocument, Corpus: "demo", ID: fmt.Sprintf("big-%d", i), Title: "Big",
			ContentHash: events.Hash(text), Object: &events.ObjectRef{Bucket: ref.Bucket, Name: ref.Name, Size: int64(ref.Size), Digest: ref.Digest}}
		data, err := events.Encode(&d)
		if err != nil {
			b.Fatal(err)
		}
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		p := startMemPeak()
		if err := s.handleDocument(ctx, "demo", &bus.Message{Data: data}); err != nil {
			b.Fatal(err)
		}
		h, r := p.end()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		heapMB, rssMB = max(heapMB, h), max(rssMB, r)
		allocMB += float64(after.TotalAlloc-before.TotalAlloc) / 1e6
	}
	b.ReportMetric(heapMB, "peak-heap-MB")
	b.ReportMetric(rssMB, "peak-RSS-above-idle-MB")
	b.ReportMetric(allocMB/float64(b.N), "alloc-MB/op")
}

// upsertSizes records the size of every Upsert.
type upsertSizes struct {
	VectorStore
	mu    sync.Mutex
	sizes []int
}

func (u *upsertSizes) Upsert(ctx context.Context, coll string, recs []vectorstore.Record) error {
	u.mu.Lock()
	u.sizes = append(u.sizes, len(recs))
	u.mu.Unlock()
	return u.VectorStore.Upsert(ctx, coll, recs)
}

// TestLargeDocumentInBatches: a document of many chunks is embedded and written a
// batch at a time (so that its memory stays bounded), and every chunk still
// reaches the store and the chunk stream, each event after its record.
func TestLargeDocumentInBatches(t *testing.T) {
	f := newFixture(t, nil)
	store := f.svc.deps.Vectors.(vectorstore.Store)
	rec := &upsertSizes{VectorStore: store}
	f.svc.deps.Vectors = rec
	f.svc.dim = 64
	f.svc.cfg.ChunkTokens, f.svc.cfg.ChunkOverlap = 50, 10
	d := events.Document{Schema: events.SchemaDocument, Corpus: "demo", ID: "big", Title: "Big", Text: proseDocument(80_000)}
	d.ContentHash = events.Hash(d.Text)
	data, err := events.Encode(&d)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.svc.handleDocument(t.Context(), "demo", &bus.Message{Data: data}); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range rec.sizes {
		if n > chunkBatch {
			t.Errorf("an upsert of %d records, more than a batch of %d", n, chunkBatch)
		}
		total += n
	}
	stored, err := store.Count(t.Context(), schema.Collection("demo", schema.Chunks))
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.sizes) < 2 || stored != total {
		t.Fatalf("%d upserts of %d records in all, %d stored: want several batches, all stored", len(rec.sizes), total, stored)
	}
	s, err := f.bus.JetStream().Stream(t.Context(), pipeline.StreamName(events.KindChunks))
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if int(info.State.Msgs) != stored {
		t.Fatalf("%d chunk events for %d stored chunks", info.State.Msgs, stored)
	}
	m, err := s.GetLastMsgForSubject(t.Context(), events.Subject(events.KindChunks, "demo"))
	if err != nil {
		t.Fatal(err)
	}
	var last events.Chunk
	if err := events.Decode(m.Data, &last); err != nil || last.Total != stored || last.Position != stored-1 {
		t.Fatalf("last chunk event %+v (%v), want position %d of %d", last, err, stored-1, stored)
	}
}
