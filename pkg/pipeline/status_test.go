package pipeline

import (
	"context"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
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
