package pipeline

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/events"
)

// syncBuffer is a log destination written by the runner's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A message on a subject whose corpus token is invalid is dead-lettered once, with the
// reason, and removed from its stream: nothing else could ever consume or count it, and
// the runner would otherwise warn about it at every discovery, for as long as the
// stream keeps it. The next valid document is consumed as usual.
func TestUnroutableSubjectDeadLetteredOnce(t *testing.T) {
	ctx := t.Context()
	b := newBus(t)
	var logs syncBuffer
	handled := make(chan string, 10)
	r := NewRunner(b, StageChunker, events.KindDocuments, fastStage(), func(_ context.Context, corpus string, _ *bus.Message) error {
		handled <- corpus
		return nil
	}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Stop(context.Background()) })

	bad := events.SubjectPrefix + "." + string(events.KindDocuments) + ".Not-A-Corpus"
	for range 3 {
		if _, err := b.Publish(ctx, bad, []byte(`{"schema":"graphrag.document.v1"}`)); err != nil {
			t.Fatal(err)
		}
	}
	dlq := events.DeadLetterSubject(StageChunker, UnroutableCorpus)
	deadline := time.Now().Add(20 * time.Second)
	for {
		counts, err := b.SubjectCounts(ctx, DLQStream, dlq)
		if err != nil {
			t.Fatal(err)
		}
		if counts[dlq] == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 3 unroutable messages dead-lettered; logs:\n%s", counts[dlq], logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Many discovery rounds later: still three dead letters, the subject gone from the
	// stream, and the runner no longer warns about it.
	time.Sleep(20 * fastStage().Discovery)
	counts, err := b.SubjectCounts(ctx, DLQStream, dlq)
	if err != nil || counts[dlq] != 3 {
		t.Fatalf("dead letters %v (%v), want 3", counts, err)
	}
	if left, err := b.SubjectCounts(ctx, StreamName(events.KindDocuments), bad); err != nil || left[bad] != 0 {
		t.Fatalf("the unroutable subject still holds %v (%v); logs:\n%s", left, err, logs.String())
	}
	before := strings.Count(logs.String(), "invalid corpus")
	time.Sleep(10 * fastStage().Discovery)
	if after := strings.Count(logs.String(), "invalid corpus"); after != before {
		t.Errorf("the runner still warns about the subject (%d more lines)", after-before)
	}
	for _, data := range bustest.Messages(t, b, DLQStream, dlq) {
		if !strings.Contains(string(data), "graphrag.document.v1") {
			t.Errorf("dead letter lost the original data: %s", data)
		}
	}
	publishDoc(t, b, "good", "g1", "text")
	select {
	case c := <-handled:
		if c != "good" {
			t.Fatalf("handled corpus %q", c)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the next valid document was not consumed")
	}
}
