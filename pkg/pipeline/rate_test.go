package pipeline

import (
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/schema"
)

// The meter sums the slots of the last RateWindow and says what span they cover.
func TestRateMeter(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := newRateMeter(t0)
	m.add("a")
	m.add("a")
	m.add("b")
	got, span := m.rotate(t0.Add(rateFlush))
	if got["a"] != 2 || got["b"] != 1 || span != rateFlush {
		t.Fatalf("after one slot: %v over %s", got, span)
	}
	for i := 2; i <= rateSlots+1; i++ {
		m.add("a")
		got, span = m.rotate(t0.Add(time.Duration(i) * rateFlush))
	}
	// The first slot (2 a, 1 b) has left the window; one a per slot since.
	if got["a"] != uint64(rateSlots) || got["b"] != 0 || span != RateWindow {
		t.Errorf("after a full window: %v over %s, want %d a over %s", got, span, rateSlots, RateWindow)
	}
}

func putRate(t *testing.T, kv bus.KV, key string, r RateRecord) {
	t.Helper()
	v, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Put(t.Context(), key, v); err != nil {
		t.Fatal(err)
	}
}

// Status sums the rate records of a stage's replicas for the corpus, and gives the ETA
// of the messages the stage has left at that rate.
func TestStatusRatesAndETA(t *testing.T) {
	ctx := t.Context()
	b := newBus(t)
	for _, id := range []string{"d1", "d2", "d3"} {
		publishDoc(t, b, "rated", id, "text") // nobody consumes them: 3 pending
	}
	kv, err := b.KV(ctx, schema.LeaseBucket)
	if err != nil {
		t.Fatal(err)
	}
	putRate(t, kv, ratePrefix+StageChunker+".a", RateRecord{Stage: StageChunker, Seconds: 60, Handled: map[string]uint64{"rated": 60}})
	putRate(t, kv, ratePrefix+StageChunker+".b", RateRecord{Stage: StageChunker, Seconds: 30, Handled: map[string]uint64{"rated": 30, "other": 99}})
	putRate(t, kv, ratePrefix+StageGrapher+".a", RateRecord{Stage: StageGrapher, Seconds: 60, Handled: map[string]uint64{"other": 6}})
	st, err := GetStatus(ctx, b, "rated")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st.Stages {
		switch s.Stage {
		case StageChunker:
			if math.Abs(s.Rate-2) > 1e-9 || math.Abs(s.ETASeconds-1.5) > 1e-9 {
				t.Errorf("chunker %+v, want rate 2/s (two replicas) and ETA 1.5s for 3 messages", s)
			}
		default:
			if s.Rate != 0 || s.ETASeconds != 0 {
				t.Errorf("%s %+v, want no rate and no ETA for this corpus", s.Stage, s)
			}
		}
	}
}

// A running stage records the messages it handles; a stage that stops removes its
// record.
func TestRunnerRecordsItsRate(t *testing.T) {
	ctx := t.Context()
	b := newBus(t)
	r := NewRunner(b, StageChunker, events.KindDocuments, fastStage(), func(context.Context, string, *bus.Message) error { return nil }, nil)
	r.rateEvery = 10 * time.Millisecond
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Stop(context.Background()) }()
	publishDoc(t, b, "busy", "d1", "text")
	publishDoc(t, b, "busy", "d2", "text")
	deadline := time.Now().Add(20 * time.Second)
	for {
		rates, err := StageRates(ctx, b, "busy")
		if err != nil {
			t.Fatal(err)
		}
		if rates[StageChunker] > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stage never recorded a rate for the messages it handled")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := r.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	rates, err := StageRates(ctx, b, "busy")
	if err != nil || len(rates) != 0 {
		t.Errorf("rates after the stage stopped: %v %v, want none", rates, err)
	}
}
