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
// reason, on the stage's unroutable subject (no corpus's dead letters mix with it), and
// the next valid document is consumed as usual.
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
	// Dead-lettered once each: acknowledged, never delivered again.
	time.Sleep(2 * time.Second)
	counts, err := b.SubjectCounts(ctx, DLQStream, dlq)
	if err != nil || counts[dlq] != 3 {
		t.Fatalf("dead letters %v (%v), want 3", counts, err)
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
