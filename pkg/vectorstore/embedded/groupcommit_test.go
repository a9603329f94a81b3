package embedded

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// Upserts that arrive while a commit runs are written together in the next one, and
// each caller returns with its own records stored; a caller whose context ends while
// it waits gets its error and writes nothing.
func TestUpsertGroupCommit(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: "c", Dim: 4, Lexical: true}); err != nil {
		t.Fatal(err)
	}
	c, err := s.s.coll("c")
	if err != nil {
		t.Fatal(err)
	}
	const writers = 8
	c.writeMu.Lock() // a commit in progress: every writer below queues
	before := c.commits.Load()
	cancelled, cancel := context.WithCancel(ctx)
	errs := make([]error, writers+1)
	var wg sync.WaitGroup
	for i := range writers + 1 {
		wg.Go(func() {
			wctx := ctx
			if i == writers {
				wctx = cancelled
			}
			rec := vectorstore.Record{ID: fmt.Sprintf("r%d", i), Vector: []float32{1, float32(i), 0, 0}, Text: fmt.Sprintf("word%d shared", i)}
			errs[i] = s.Upsert(wctx, "c", []vectorstore.Record{rec})
		})
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		c.queueMu.Lock()
		n := len(c.queue)
		c.queueMu.Unlock()
		if n == writers+1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d writers queued", n, writers+1)
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	c.writeMu.Unlock()
	wg.Wait()
	for i, err := range errs[:writers] {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	if errs[writers] == nil {
		t.Error("the writer whose context ended while it waited succeeded")
	}
	if got := c.commits.Load() - before; got != 1 {
		t.Errorf("%d commits for %d queued writers, want 1", got, writers)
	}
	n, err := s.Count(ctx, "c")
	if err != nil || n != writers {
		t.Fatalf("count %d (%v), want %d: the cancelled writer's record must not be stored", n, err, writers)
	}
	hits, err := s.SearchText(ctx, "c", "shared", writers+1, vectorstore.Filter{})
	if err != nil || len(hits) != writers {
		t.Fatalf("text search found %d (%v), want %d", len(hits), err, writers)
	}
}
