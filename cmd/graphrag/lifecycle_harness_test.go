package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/natsembed"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
	"github.com/graphrag/graphrag/services/extractor"
	"github.com/graphrag/graphrag/services/grapher"
	"github.com/graphrag/graphrag/services/summarizer"
)

// lifecycleHarness runs the pipeline's stages as separate service instances on one
// embedded NATS server, the way replicas share a cluster: any number of extractor
// instances (chunker and extractor stages), each with its own connection, and one
// grapher and one summarizer, all on one graph store and one vector store.
type lifecycleHarness struct {
	t          *testing.T
	srv        *natsembed.Server
	b          *bus.Bus
	graph      graphstore.Store
	vectors    vectorstore.Store
	extractors []*extractor.Service
	// stoppedExtractor marks the instances stopped before the end of the test.
	stoppedExtractor map[int]bool
	stages           []interface{ Stop(context.Context) error }
	cfg              extractor.Config
}

var (
	quietLog       = slog.New(slog.NewTextHandler(io.Discard, nil))
	lifecycleSeeds = flag.Int("lifecycle.seeds", 8, "seeds TestLifecycleProperty runs")
)

// newLifecycleHarness starts the stages with replicas extractor instances on the
// embedded stores.
func newLifecycleHarness(t *testing.T, replicas int) *lifecycleHarness {
	t.Helper()
	dir := memTempDir(t)
	g, err := boltgraph.Open(filepath.Join(dir, "graph.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	v, err := embedded.Open(filepath.Join(dir, "vectors"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = v.Close() })
	return newLifecycleHarnessOn(t, replicas, g, v)
}

// newLifecycleHarnessOn starts the stages on the given stores.
func newLifecycleHarnessOn(t *testing.T, replicas int, g graphstore.Store, v vectorstore.Store) *lifecycleHarness {
	t.Helper()
	srv, err := natsembed.Start(natsembed.Config{DataDir: memTempDir(t), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	h := &lifecycleHarness{t: t, srv: srv, graph: g, vectors: v, stoppedExtractor: map[int]bool{}}
	h.b = h.newBus()
	if err := pipeline.Provision(t.Context(), h.b, pipeline.DefaultTopology()); err != nil {
		t.Fatal(err)
	}
	h.cfg = extractor.DefaultConfig()
	// Small chunks: a version has several, and versions have different numbers of them.
	h.cfg.ChunkTokens, h.cfg.ChunkOverlap = 60, 10
	h.cfg.Chunker.AckWait, h.cfg.Extract.AckWait = 5*time.Second, 5*time.Second
	h.cfg.Chunker.Backoff = []time.Duration{50 * time.Millisecond}
	// More chunker workers than the default 4: a replica holds more of a burst at once,
	// so more of it is overtaken before it is written (and the tests run faster).
	h.cfg.Chunker.Workers = 16
	for range replicas {
		h.addExtractor()
	}
	gcfg := grapher.DefaultConfig()
	// Detection after a second of quiet: fewer runs on half-indexed bursts.
	gcfg.Debounce, gcfg.Lease = time.Second, false
	// The harness's tests compare the stores, communities included, with a pipeline
	// given only the final documents: history independence is the property under test,
	// which warm-started detection (the default, ADR 0042) does not promise.
	gcfg.WarmStart = false
	gr, err := grapher.New(gcfg, grapher.Deps{Bus: h.newBus(), Graph: g, Vectors: v, Embedder: hashembed.New(64), Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	h.start(gr)
	su, err := summarizer.New(summarizer.DefaultConfig(), summarizer.Deps{Bus: h.newBus(), Graph: g, Vectors: v, Embedder: hashembed.New(64), Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	h.start(su)
	return h
}

func (h *lifecycleHarness) newBus() *bus.Bus {
	b, err := bus.New(bustest.Connect(h.t, h.srv))
	if err != nil {
		h.t.Fatal(err)
	}
	return b
}

func (h *lifecycleHarness) start(c interface {
	Start(context.Context) error
	Stop(context.Context) error
}) {
	h.t.Helper()
	if err := c.Start(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	h.stages = append(h.stages, c)
	h.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			h.t.Errorf("stopping a stage: %v", err)
		}
	})
}

// addExtractor starts one more extractor instance on a connection of its own.
func (h *lifecycleHarness) addExtractor() *extractor.Service {
	h.t.Helper()
	s, err := extractor.New(h.cfg, extractor.Deps{Bus: h.newBus(), Vectors: h.vectors, Embedder: hashembed.New(64), Logger: quietLog})
	if err != nil {
		h.t.Fatal(err)
	}
	h.start(s)
	h.extractors = append(h.extractors, s)
	return s
}

// lifecycleEvent is one publication or deletion of a document, or a corpus drop.
type lifecycleEvent struct {
	ID     string
	Text   string // "" for a deletion
	Drop   bool
	Seq    uint64 // set when published
	Title  string
	Remark string
}

// encode returns the event as an outside publisher would send it.
func (e lifecycleEvent) encode(t testing.TB, corpus string) []byte {
	t.Helper()
	var v events.Event
	switch {
	case e.Drop:
		v = &events.CorpusDropped{Schema: events.SchemaCorpusDropped, Corpus: corpus}
	case e.Text == "":
		v = &events.DocumentDeleted{Schema: events.SchemaDocumentDeleted, Corpus: corpus, ID: e.ID}
	default:
		v = &events.Document{Schema: events.SchemaDocument, Corpus: corpus, ID: e.ID, Title: e.Title, Text: e.Text}
	}
	b, err := events.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// publishBurst publishes the events as fast as the server takes them, from many
// goroutines at once and without message ids, as the asynchronous burst did,
// and records the sequence each got (the stream's order, not the slice's).
func (h *lifecycleHarness) publishBurst(corpus string, evs []lifecycleEvent) {
	h.t.Helper()
	subject := events.Subject(events.KindDocuments, corpus)
	var wg sync.WaitGroup
	errs := make(chan error, len(evs))
	next := make(chan int)
	for range 32 {
		wg.Go(func() {
			for i := range next {
				ack, err := h.b.Publish(context.Background(), subject, evs[i].encode(h.t, corpus))
				if err != nil {
					errs <- err
					continue
				}
				evs[i].Seq = ack.Sequence
			}
		})
	}
	for i := range evs {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		h.t.Fatalf("publishing: %v", err)
	}
}

// waitDone waits until every stage has finished the corpus.
func (h *lifecycleHarness) waitDone(corpus string, timeout time.Duration) pipeline.Status {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	st, err := pipeline.WaitComplete(ctx, h.b, corpus, 100*time.Millisecond, nil)
	if err != nil {
		h.t.Fatalf("the pipeline did not finish %s: %v\n%s", corpus, err, crashStatusLine(st))
	}
	for _, s := range st.Stages {
		if s.DeadLettered != 0 {
			h.t.Errorf("stage %s dead-lettered %d messages", s.Stage, s.DeadLettered)
		}
	}
	return st
}

func (h *lifecycleHarness) dump(corpus string) corpusDump {
	h.t.Helper()
	return dumpCorpus(context.Background(), h.t, h.graph, h.vectors, corpus)
}

// finalEvents returns, per document id, the event the stream accepted last (the one
// that must win), in id order; a corpus drop is the last event of every document
// published before it.
func finalEvents(evs []lifecycleEvent) []lifecycleEvent {
	last := map[string]lifecycleEvent{}
	var ids []string
	for _, e := range evs {
		if e.Drop {
			for id, prev := range last {
				if prev.Seq < e.Seq {
					last[id] = lifecycleEvent{ID: id, Seq: e.Seq}
				}
			}
			continue
		}
		if _, ok := last[e.ID]; !ok {
			ids = append(ids, e.ID)
		}
		if e.Seq > last[e.ID].Seq {
			last[e.ID] = e
		}
	}
	out := make([]lifecycleEvent, 0, len(ids))
	for _, id := range ids {
		out = append(out, last[id])
	}
	return out
}

// reference indexes only the winning publications in a fresh pipeline (one
// extractor) and returns its dump: what the corpus must look like.
func reference(t *testing.T, corpus string, evs []lifecycleEvent) corpusDump {
	t.Helper()
	ref := newLifecycleHarness(t, 1)
	var pubs []lifecycleEvent
	for _, e := range finalEvents(evs) {
		if e.Text != "" {
			pubs = append(pubs, e)
		}
	}
	if len(pubs) == 0 {
		return corpusDump{}
	}
	ref.publishBurst(corpus, pubs)
	ref.waitDone(corpus, 3*time.Minute)
	return ref.dump(corpus)
}

// checkRecords checks that the record of every document names the event that must
// win, fully done.
func (h *lifecycleHarness) checkRecords(corpus string, evs []lifecycleEvent) {
	h.t.Helper()
	kv, err := h.b.KV(context.Background(), schema.StateBucket)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, want := range finalEvents(evs) {
		rec, rev, err := pipeline.LoadDocument(context.Background(), kv, corpus, want.ID)
		if err != nil {
			h.t.Fatal(err)
		}
		deleted := want.Text == ""
		switch {
		case deleted && rev == 0:
			continue // dropped with its corpus: the corpus record orders it
		case rev == 0:
			h.t.Errorf("document %s: no record", want.ID)
		case rec.Seq != want.Seq:
			h.t.Errorf("document %s: record at seq %d, the last event is %d", want.ID, rec.Seq, want.Seq)
		case rec.Deleted != deleted || len(rec.Retire) != 0 || (rec.State != pipeline.StateIndexed && rec.State != pipeline.StateDeleted):
			b, _ := json.Marshal(rec)
			h.t.Errorf("document %s: record %s, want deleted=%v, done", want.ID, b, deleted)
		}
	}
}

// versionText is the text of version n of document doc: names made up for that
// version (so that anything of another version left in a store shows), a place every
// document shares, and a length that varies with n (so versions have different
// numbers of chunks).
func versionText(doc, n int) string {
	var sb strings.Builder
	for p := range 1 + n%3 {
		a, b := madeUpName(doc, n, 2*p), madeUpName(doc, n, 2*p+1)
		fmt.Fprintf(&sb, "In the spring %s met %s at Port Quessa to compare notes on survey %d of document %d. ", a, b, n, doc)
		fmt.Fprintf(&sb, "%s later wrote that %s had measured the tides near Port Quessa twice.\n\n", b, a)
	}
	return sb.String()
}

var syllables = []string{"ta", "vo", "ren", "ke", "li", "mar", "du", "so", "mir", "hal", "beck", "qua", "nel", "os", "ri", "bel"}

// madeUpName is a two-word capitalized name unique to (doc, n, k).
func madeUpName(doc, n, k int) string {
	word := func(x int) string {
		var sb strings.Builder
		for range 3 {
			sb.WriteString(syllables[x%len(syllables)])
			x /= len(syllables)
		}
		w := sb.String()
		return strings.ToUpper(w[:1]) + w[1:]
	}
	return word(doc*7919+n*31+k) + " " + word(n*131+k*17+doc+1)
}

// memTempDir is a temporary directory in memory where the system has one (/dev/shm):
// the embedded stores sync every commit to disk, which costs ~20 ms a write here and
// is not what the lifecycle tests check (crash_test.go checks it).
func memTempDir(t *testing.T) string {
	t.Helper()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		dir, err := os.MkdirTemp("/dev/shm", "graphrag-test-")
		if err == nil {
			t.Cleanup(func() { _ = os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}
