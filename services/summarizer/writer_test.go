package summarizer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// gatedVectors records the size of every Upsert; the first one waits for release, and
// the failCall-th one (from 1; 0: none) fails.
type gatedVectors struct {
	VectorStore
	entered, release chan struct{}
	once             sync.Once

	mu       sync.Mutex
	sizes    []int
	failCall int
}

func (g *gatedVectors) Upsert(ctx context.Context, coll string, recs []vectorstore.Record) error {
	g.once.Do(func() {
		close(g.entered)
		<-g.release
	})
	g.mu.Lock()
	g.sizes = append(g.sizes, len(recs))
	fail := len(g.sizes) == g.failCall
	g.mu.Unlock()
	if fail {
		return errors.New("disk full")
	}
	return g.VectorStore.Upsert(ctx, coll, recs)
}

func (g *gatedVectors) upserts() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.sizes)
}

func (w *reportWriter) queued() int {
	w.queueMu.Lock()
	defer w.queueMu.Unlock()
	return len(w.queue)
}

// batchFixture is a summarizer over n communities c0-0 … c0-<n-1> whose report writes
// go through a gatedVectors.
func batchFixture(t *testing.T, n int) (testSummarizer, *gatedVectors) {
	t.Helper()
	ts := newTestSummarizer(t, nil)
	var coms []graphstore.Community
	var ents []graphstore.EntityMention
	for i := range n {
		k := fmt.Sprintf("member %d", i)
		ents = append(ents, graphstore.EntityMention{Key: k, Name: k, Type: "CONCEPT", Description: "about " + k})
		coms = append(coms, graphstore.Community{ID: fmt.Sprintf("c0-%d", i), Level: 0, Members: []string{k}})
	}
	if err := ts.g.Merge(t.Context(), "demo", []graphstore.ChunkExtraction{{ChunkID: "k2", DocumentID: "d2", Entities: ents}}); err != nil {
		t.Fatal(err)
	}
	if err := ts.g.ReplaceCommunities(t.Context(), "demo", coms); err != nil {
		t.Fatal(err)
	}
	gv := &gatedVectors{VectorStore: ts.v, entered: make(chan struct{}), release: make(chan struct{})}
	ts.s.deps.Vectors = gv
	ts.s.writer.vectors = gv
	return ts, gv
}

// handleAll handles the events of communities from, …, to-1 at once and returns their
// errors by community.
func handleAll(t *testing.T, ts testSummarizer, from, to int) map[string]error {
	t.Helper()
	var mu sync.Mutex
	errs := map[string]error{}
	var wg sync.WaitGroup
	for i := from; i < to; i++ {
		id := fmt.Sprintf("c0-%d", i)
		msg := communityMsg(t, id, "run1")
		wg.Go(func() {
			err := ts.s.handleCommunity(t.Context(), "demo", msg)
			mu.Lock()
			errs[id] = err
			mu.Unlock()
		})
	}
	wg.Wait()
	return errs
}

// waitQueued waits until n reports wait for the write in progress.
func waitQueued(t *testing.T, w *reportWriter, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); w.queued() < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d reports queued, want %d", w.queued(), n)
		}
	}
}

// The reports of handlers that arrive while a write is in progress are written
// together, in one Upsert, and each is announced.
func TestReportsQueuedDuringAWriteShareOneUpsert(t *testing.T) {
	ts, gv := batchFixture(t, 6)
	first := make(chan map[string]error)
	go func() { first <- handleAll(t, ts, 0, 1) }()
	<-gv.entered // c0-0 is being written
	rest := make(chan map[string]error)
	go func() { rest <- handleAll(t, ts, 1, 6) }()
	waitQueued(t, ts.s.writer, 5)
	close(gv.release)
	for id, err := range <-first {
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	for id, err := range <-rest {
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	if got := gv.upserts(); !slices.Equal(got, []int{1, 5}) {
		t.Fatalf("upserts of %v reports, want [1 5]", got)
	}
	if got := ts.reports(t); len(got) != 6 {
		t.Fatalf("reports %v, want 6", got)
	}
	if sums := ts.summaries(t); len(sums) != 6 {
		t.Fatalf("%d summary events, want 6", len(sums))
	}
	if writes, written := ts.s.writer.counts(); writes != 2 || written != 6 {
		t.Fatalf("counts: %d writes of %d reports, want 2 of 6", writes, written)
	}
}

// A failed group write fails every handler of the group, so that each message is
// retried (and dead-lettered after its deliveries) as it would have been alone: none is
// acknowledged without its report. Handled again, they are written and announced.
func TestAFailedGroupWriteFailsEveryHandlerOfTheGroup(t *testing.T) {
	ts, gv := batchFixture(t, 4)
	gv.failCall = 2 // the first write succeeds, the group behind it fails
	first := make(chan map[string]error)
	go func() { first <- handleAll(t, ts, 0, 1) }()
	<-gv.entered
	rest := make(chan map[string]error)
	go func() { rest <- handleAll(t, ts, 1, 4) }()
	waitQueued(t, ts.s.writer, 3)
	close(gv.release)
	if err := (<-first)["c0-0"]; err != nil {
		t.Fatal(err)
	}
	for id, err := range <-rest {
		if err == nil {
			t.Errorf("%s: no error though the group write holding its report failed", id)
		}
	}
	if got := ts.reports(t); !slices.Equal(got, []string{"c0-0"}) {
		t.Fatalf("reports %v, want only c0-0", got)
	}
	if sums := ts.summaries(t); len(sums) != 1 {
		t.Fatalf("%d summary events, want 1", len(sums))
	}
	for id, err := range handleAll(t, ts, 1, 4) { // the redeliveries
		if err != nil {
			t.Fatalf("%s again: %v", id, err)
		}
	}
	if got := ts.reports(t); len(got) != 4 {
		t.Fatalf("reports %v after redelivery, want 4", got)
	}
	if sums := ts.summaries(t); len(sums) != 4 {
		t.Fatalf("%d summary events after redelivery, want 4", len(sums))
	}
}
