package pipeline

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/schema"
)

// drainedCorpus publishes one message to every stage's input for corpus and consumes
// them all, so that only the grapher's record decides whether the corpus is complete.
func drainedCorpus(t *testing.T, b *bus.Bus, corpus string) {
	t.Helper()
	ctx := t.Context()
	for _, s := range Stages {
		if _, err := b.Publish(ctx, events.Subject(s.Input, corpus), []byte("{}")); err != nil {
			t.Fatal(err)
		}
		r := NewRunner(b, s.Name, s.Input, fastStage(), func(context.Context, string, *bus.Message) error { return nil }, nil)
		if err := r.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Stop(context.Background()) })
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := WaitComplete(wctx, b, corpus, 10*time.Millisecond, nil); err != nil {
		t.Fatal(err)
	}
}

// Status never calls a corpus complete while some of its current communities have no
// report (their events were dead-lettered, or dropped): the grapher's record says how
// many are without one.
func TestStatusIncompleteWhileReportsAreMissing(t *testing.T) {
	ctx := t.Context()
	b := newBus(t)
	const corpus = "reports"
	drainedCorpus(t, b, corpus)
	kv, err := b.KV(ctx, schema.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	// Written as JSON, as a grapher of this version writes it.
	if err := kv.Put(ctx, schema.GraphStateKey(corpus), []byte(`{"dirty":false,"communities":3,"unreported":2}`)); err != nil {
		t.Fatal(err)
	}
	st, err := GetStatus(ctx, b, corpus)
	if err != nil {
		t.Fatal(err)
	}
	if st.Complete {
		t.Fatalf("complete with 2 of 3 communities without a report: %+v", st)
	}
	if st.State != StateReportsMissing {
		t.Errorf("state %q, want %q", st.State, StateReportsMissing)
	}
	if err := kv.Put(ctx, schema.GraphStateKey(corpus), []byte(`{"dirty":false,"communities":3,"unreported":0}`)); err != nil {
		t.Fatal(err)
	}
	if st, err = GetStatus(ctx, b, corpus); err != nil || !st.Complete || st.State != StateComplete {
		t.Fatalf("every report written: %+v %v", st, err)
	}
}

type fakeOutage struct {
	mu   sync.Mutex
	down bool
}

func (f *fakeOutage) set(down bool) {
	f.mu.Lock()
	f.down = down
	f.mu.Unlock()
}

func (f *fakeOutage) Outage() (bool, time.Time, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.down, time.Unix(1, 0), "chat endpoint http://model/v1: connection refused"
}

// While a stage's model endpoint is down, status says an incomplete corpus is paused,
// and which stage waits for what; when it answers again, the pause is gone.
func TestStatusPausedWhileTheModelIsDown(t *testing.T) {
	ctx := t.Context()
	b := newBus(t)
	publishDoc(t, b, "waiting", "w1", "text") // nobody consumes it: not complete
	src := &fakeOutage{}
	stop := ReportPauses(ctx, b, StageExtractor, src, slog.New(slog.DiscardHandler))
	defer stop()
	state := func(want string) Status {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			st, err := GetStatus(ctx, b, "waiting")
			if err != nil {
				t.Fatal(err)
			}
			if st.State == want {
				return st
			}
			if time.Now().After(deadline) {
				t.Fatalf("state %q, want %q", st.State, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	state(StateIndexing)
	src.set(true)
	st := state(StatePaused)
	if len(st.Paused) != 1 || st.Paused[0].Stage != StageExtractor || !strings.Contains(st.Paused[0].Reason, "connection refused") {
		t.Fatalf("paused %+v", st.Paused)
	}
	src.set(false)
	state(StateIndexing)
	src.set(true)
	state(StatePaused)
	stop() // a replica stopping removes its record
	state(StateIndexing)
}

// Status read while the platform is still provisioning its streams (a client publishes
// as the services start) says incomplete instead of failing.
func TestStatusBeforeEveryStreamExists(t *testing.T) {
	ctx := t.Context()
	srv := bustest.StartServer(t)
	b, err := bus.New(bustest.Connect(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.EnsureStream(ctx, bus.StreamSpec{Name: StreamName(events.KindDocuments), Subjects: []string{events.AllSubjects(events.KindDocuments)}}); err != nil {
		t.Fatal(err)
	}
	publishDoc(t, b, "early", "e1", "text")
	st, err := GetStatus(ctx, b, "early")
	if err != nil {
		t.Fatalf("status with only the documents stream: %v", err)
	}
	if st.Complete || st.Stages[0].Total != 1 || st.State != StateIndexing {
		t.Fatalf("status %+v", st)
	}
}
