package bus_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/graphrag/graphrag/pkg/bus"
)

// TestDeadLetterFor: one consumer over many subjects dead-letters each message on the
// subject DeadLetterFor names for it, so that dead letters stay apart per subject.
func TestDeadLetterFor(t *testing.T) {
	e := newEnv(t)
	dlq := readDLQ(t, e)
	spec := fastSpec("per-subject")
	spec.DeadLetterSubject = ""
	spec.DeadLetterFor = func(subject string) string { return "dlq." + strings.TrimPrefix(subject, "ev.") }
	for _, s := range []string{"ev.a", "ev.b", "ev.a"} {
		if _, err := e.b.Publish(testCtx(t), s, []byte("poison")); err != nil {
			t.Fatal(err)
		}
	}
	consume(t, e.b, spec, func(context.Context, *bus.Message) error { return bus.Permanentf("never") })
	eventually(t, "three dead letters", func() bool { return len(dlq.snapshot()) == 3 })
	per := map[string]int{}
	for _, m := range dlq.snapshot() {
		per[m.Subject]++
		if m.Header.Get(bus.HeaderDLQSubject) != "ev."+strings.TrimPrefix(m.Subject, "dlq.") {
			t.Errorf("dead letter on %s came from %s", m.Subject, m.Header.Get(bus.HeaderDLQSubject))
		}
	}
	if per["dlq.a"] != 2 || per["dlq.b"] != 1 {
		t.Errorf("dead letters per subject: %v", per)
	}
	bad := fastSpec("none")
	bad.DeadLetterSubject = ""
	if _, err := e.b.Consume(testCtx(t), bad, func(context.Context, *bus.Message) error { return nil }); !errors.Is(err, bus.ErrInvalidSpec) {
		t.Errorf("a consumer without any dead-letter subject: %v, want ErrInvalidSpec", err)
	}
}

// TestStartSeqAndCounts: a new durable starts at StartSeq, an existing one keeps its
// position whatever StartSeq says; CountAfter counts a subject's messages after a
// sequence and ConsumerInfo reports the floors the counts are taken from.
func TestStartSeqAndCounts(t *testing.T) {
	e := newEnv(t)
	ctx := testCtx(t)
	publishN(t, e.b, "ev.x", 6) // sequences 1..6
	publishN(t, e.b, "ev.y", 4) // 7..10
	for _, tc := range []struct {
		subject string
		after   uint64
		want    uint64
	}{{"ev.x", 0, 6}, {"ev.x", 3, 3}, {"ev.x", 6, 0}, {"ev.y", 3, 4}, {"ev.y", 8, 2}, {"ev.*", 5, 5}, {"ev.z", 0, 0}, {"ev.x", 100, 0}} {
		got, err := e.b.CountAfter(ctx, evStream, tc.subject, tc.after)
		if err != nil || got != tc.want {
			t.Errorf("CountAfter(%s, %d) = %d, %v; want %d", tc.subject, tc.after, got, err, tc.want)
		}
	}
	if _, err := e.b.CountAfter(ctx, "NOPE", "ev.x", 0); !errors.Is(err, bus.ErrNotFound) {
		t.Errorf("CountAfter on a missing stream: %v", err)
	}

	var mu sync.Mutex
	var seqs []uint64
	spec := fastSpec("from5")
	spec.StartSeq = 5
	spec.Workers = 1
	c := consume(t, e.b, spec, func(_ context.Context, m *bus.Message) error {
		mu.Lock()
		seqs = append(seqs, m.StreamSeq)
		mu.Unlock()
		return nil
	})
	eventually(t, "messages 5..10", func() bool { mu.Lock(); defer mu.Unlock(); return len(seqs) == 6 })
	if seqs[0] != 5 {
		t.Errorf("first message %d, want 5", seqs[0])
	}
	eventually(t, "all acknowledged", func() bool {
		ci, err := e.b.ConsumerInfo(ctx, evStream, "from5")
		return err == nil && ci.AckFloorSeq == 10 && ci.DeliveredSeq == 10
	})
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	// Bound again with another StartSeq: the position stays.
	spec.StartSeq = 1
	publishN(t, e.b, "ev.x", 1) // 11
	consume(t, e.b, spec, func(_ context.Context, m *bus.Message) error {
		mu.Lock()
		seqs = append(seqs, m.StreamSeq)
		mu.Unlock()
		return nil
	})
	eventually(t, "message 11", func() bool { mu.Lock(); defer mu.Unlock(); return len(seqs) == 7 })
	if seqs[6] != 11 {
		t.Errorf("after binding again: message %d, want 11", seqs[6])
	}
	names, err := e.b.Consumers(ctx, evStream, "from")
	if err != nil || len(names) != 1 || names[0] != "from5" {
		t.Errorf("Consumers = %v, %v", names, err)
	}
	if err := e.b.DeleteConsumer(ctx, evStream, "from5"); err != nil {
		t.Error(err)
	}
	if err := e.b.DeleteConsumer(ctx, evStream, "from5"); err != nil {
		t.Errorf("deleting a missing consumer: %v", err)
	}
}
