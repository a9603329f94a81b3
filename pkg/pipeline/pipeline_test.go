package pipeline

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/schema"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newBus(t *testing.T) *bus.Bus {
	t.Helper()
	srv := bustest.StartServer(t)
	b, err := bus.New(bustest.Connect(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	if err := Provision(t.Context(), b, DefaultTopology()); err != nil {
		t.Fatal(err)
	}
	// Provisioning twice is harmless.
	if err := Provision(t.Context(), b, DefaultTopology()); err != nil {
		t.Fatalf("second Provision: %v", err)
	}
	return b
}

func publishDoc(t *testing.T, b *bus.Bus, corpus, id, text string) bus.PubAck {
	t.Helper()
	ack, err := PublishDocument(t.Context(), b, events.Document{Corpus: corpus, ID: id, Text: text})
	if err != nil {
		t.Fatal(err)
	}
	return ack
}

func fastStage() StageConfig {
	c := DefaultStageConfig()
	c.Backoff = []time.Duration{10 * time.Millisecond}
	c.MaxDeliver = 2
	return c
}

// TestRunnerPerCorpusAndStatus: the runner discovers corpora as documents arrive, keeps a
// consumer per corpus, and status counts done and dead-lettered messages per corpus.
func TestRunnerPerCorpusAndStatus(t *testing.T) {
	b := newBus(t)
	var mu sync.Mutex
	seen := map[string][]string{}
	h := func(_ context.Context, corpus string, m *bus.Message) error {
		var d events.Document
		if err := events.Decode(m.Data, &d); err != nil {
			return bus.Permanent(err)
		}
		if strings.Contains(d.Text, "fail") {
			return errors.New("transient failure that never heals")
		}
		mu.Lock()
		seen[corpus] = append(seen[corpus], d.ID)
		mu.Unlock()
		return nil
	}
	r := NewRunner(b, StageChunker, events.KindDocuments, fastStage(), h, nil)
	if err := r.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	}()

	publishDoc(t, b, "alpha", "a1", "one")
	publishDoc(t, b, "alpha", "a2", "two")
	publishDoc(t, b, "beta", "b1", "please fail")
	if _, err := b.Publish(t.Context(), events.Subject(events.KindDocuments, "beta"), []byte("{not json")); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for {
		a, err := GetStatus(ctx, b, "alpha")
		if err != nil {
			t.Fatal(err)
		}
		bb, err := GetStatus(ctx, b, "beta")
		if err != nil {
			t.Fatal(err)
		}
		if a.Stages[0].Done == 2 && bb.Stages[0].Done == 2 {
			if bb.Stages[0].DeadLettered != 2 || a.Stages[0].DeadLettered != 0 {
				t.Fatalf("dead letters: alpha %+v beta %+v", a.Stages[0], bb.Stages[0])
			}
			if a.Stages[0].Total != 2 || a.Stages[0].Pending != 0 || a.Stages[0].InFlight != 0 {
				t.Fatalf("alpha status %+v", a.Stages[0])
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("timed out: alpha %+v beta %+v", a.Stages[0], bb.Stages[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := r.Corpora(); len(got) != 2 || got[0] != "alpha" || got[1] != "beta" {
		t.Fatalf("Corpora = %v", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen["alpha"]) != 2 || len(seen["beta"]) != 0 {
		t.Fatalf("handled %v", seen)
	}
}

func TestStatusCompleteness(t *testing.T) {
	b := newBus(t)
	st, err := GetStatus(t.Context(), b, "empty")
	if err != nil {
		t.Fatal(err)
	}
	if st.Complete {
		t.Fatal("a corpus with nothing published is not complete")
	}
	publishDoc(t, b, "gamma", "g1", "text")
	st, err = GetStatus(t.Context(), b, "gamma")
	if err != nil {
		t.Fatal(err)
	}
	if st.Complete || st.Stages[0].Pending != 1 {
		t.Fatalf("unconsumed document: %+v", st)
	}
	kv, err := b.EnsureKV(t.Context(), schema.StateBucket, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := SaveGraphState(t.Context(), kv, "gamma", GraphState{Dirty: true, Changes: 3}); err != nil {
		t.Fatal(err)
	}
	gs, err := LoadGraphState(t.Context(), kv, "gamma")
	if err != nil || !gs.Dirty || gs.Changes != 3 {
		t.Fatalf("graph state %+v %v", gs, err)
	}
	if _, err := GetStatus(t.Context(), b, "Bad Name"); !errors.Is(err, events.ErrInvalid) {
		t.Fatalf("bad corpus: %v", err)
	}
}

// TestPublishLargeDocument: a document over the message limit travels through the object
// store; a republished identical document is a new version (the chunker recognizes it as
// unchanged), since a deletion may have come between the two.
func TestPublishLargeDocument(t *testing.T) {
	b := newBus(t)
	big := strings.Repeat("The quick brown fox jumps over the lazy dog. ", b.MaxPayload()/40)
	ack := publishDoc(t, b, "big", "huge", big)
	if ack.Duplicate {
		t.Fatal("first publish reported as duplicate")
	}
	if again := publishDoc(t, b, "big", "huge", big); again.Duplicate || again.Sequence != ack.Sequence+1 {
		t.Fatalf("identical republish: %+v after %+v, want the next sequence", again, ack)
	}
	stream, err := b.JetStream().Stream(t.Context(), StreamName(events.KindDocuments))
	if err != nil {
		t.Fatal(err)
	}
	msg, err := stream.GetLastMsgForSubject(t.Context(), events.Subject(events.KindDocuments, "big"))
	if err != nil {
		t.Fatal(err)
	}
	var d events.Document
	if err := events.Decode(msg.Data, &d); err != nil {
		t.Fatal(err)
	}
	if d.Object == nil || d.Text != "" {
		t.Fatalf("large document not moved to the object store: %+v", d.Object)
	}
	got, err := b.GetObject(t.Context(), bus.ObjectRef{Bucket: d.Object.Bucket, Name: d.Object.Name, Size: uint64(d.Object.Size), Digest: d.Object.Digest})
	if err != nil || string(got) != big {
		t.Fatalf("object round trip: %d bytes, %v", len(got), err)
	}
	if _, err := PublishDocument(t.Context(), b, events.Document{Corpus: "big", ID: "x", Text: ""}); !errors.Is(err, events.ErrInvalid) {
		t.Fatalf("empty document accepted: %v", err)
	}
}

// TestCorporaWithoutCeiling: 2,000 one-document corpora, twice the server's default
// limit of consumers per stream that one consumer per corpus met (corpus 1,001 onwards
// was never consumed), are all handled by the stage's one consumer, and status reports
// the last of them complete at that stage. A message on a subject whose corpus token is
// invalid is dead-lettered once, with the reason.
func TestCorporaWithoutCeiling(t *testing.T) {
	b := newBus(t)
	const n = 2000
	var mu sync.Mutex
	seen := map[string]int{}
	h := func(_ context.Context, corpus string, m *bus.Message) error {
		mu.Lock()
		seen[corpus]++
		mu.Unlock()
		return nil
	}
	cfg := fastStage()
	cfg.Workers, cfg.MaxAckPending = 16, 256
	r := NewRunner(b, StageChunker, events.KindDocuments, cfg, h, nil)
	if err := r.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	js := b.JetStream()
	for i := range n {
		corpus := "c" + strconv.Itoa(i)
		data, err := events.Encode(&events.Document{Schema: events.SchemaDocument, Corpus: corpus, ID: "d", Text: "one document"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.PublishAsync(events.Subject(events.KindDocuments, corpus), data); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Publish(t.Context(), "graphrag.documents.Not-A-Corpus", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(time.Minute):
		t.Fatal("publishing did not complete")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	for {
		mu.Lock()
		got := len(seen)
		mu.Unlock()
		if got == n {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("%d of %d corpora handled", got, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for c, k := range seen {
		if k != 1 {
			t.Errorf("corpus %s handled %d times", c, k)
		}
	}
	for {
		st, err := GetStatus(ctx, b, "c1999")
		if err != nil {
			t.Fatal(err)
		}
		if s := st.Stages[0]; s.Total == 1 && s.Done == 1 && s.Pending == 0 && s.InFlight == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("status of the last corpus: %+v", st.Stages[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
	for {
		dlq, err := b.SubjectCounts(ctx, DLQStream, events.DeadLetterSubject(StageChunker, UnroutableCorpus))
		if err != nil {
			t.Fatal(err)
		}
		if dlq[events.DeadLetterSubject(StageChunker, UnroutableCorpus)] == 1 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the message on an invalid subject was not dead-lettered: %v", dlq)
		}
		time.Sleep(20 * time.Millisecond)
	}
	consumers, err := b.Consumers(ctx, StreamName(events.KindDocuments), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(consumers) != 1 {
		t.Errorf("consumers of the document stream: %v, want one", consumers)
	}
}

// TestRunnerTakesOverLegacyConsumers: after an upgrade from one consumer per corpus,
// the stage's consumer starts after the lowest acknowledgement floor of the old ones
// (nothing unfinished is skipped, little is redone) and the old ones are removed.
func TestRunnerTakesOverLegacyConsumers(t *testing.T) {
	b := newBus(t)
	for _, d := range []struct{ corpus, id string }{{"alpha", "a1"}, {"alpha", "a2"}, {"alpha", "a3"}, {"beta", "b1"}, {"beta", "b2"}} {
		publishDoc(t, b, d.corpus, d.id, "text of "+d.id) // sequences 1..5
	}
	// The old consumers: alpha acknowledged 1 and 2, beta acknowledged 4.
	for corpus, acks := range map[string]int{"alpha": 2, "beta": 1} {
		c, err := b.JetStream().CreateOrUpdateConsumer(t.Context(), StreamName(events.KindDocuments), jetstream.ConsumerConfig{
			Durable: StageChunker + "_" + corpus, FilterSubject: events.Subject(events.KindDocuments, corpus), AckPolicy: jetstream.AckExplicitPolicy})
		if err != nil {
			t.Fatal(err)
		}
		batch, err := c.Fetch(acks)
		if err != nil {
			t.Fatal(err)
		}
		for m := range batch.Messages() {
			if err := m.DoubleAck(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
	}
	var mu sync.Mutex
	var handled []uint64
	r := NewRunner(b, StageChunker, events.KindDocuments, fastStage(), func(_ context.Context, _ string, m *bus.Message) error {
		mu.Lock()
		handled = append(handled, m.StreamSeq)
		mu.Unlock()
		return nil
	}, nil)
	if err := r.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Stop(context.Background()) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := len(handled)
		mu.Unlock()
		if n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("handled %v", handled)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // nothing else may come
	mu.Lock()
	slices.Sort(handled)
	got := slices.Clone(handled)
	mu.Unlock()
	if !slices.Equal(got, []uint64{3, 4, 5}) {
		t.Errorf("handled %v, want 3, 4, 5 (from alpha's floor on)", got)
	}
	left, err := b.Consumers(t.Context(), StreamName(events.KindDocuments), StageChunker+"_")
	if err != nil || len(left) != 0 {
		t.Errorf("old consumers left: %v, %v", left, err)
	}
}
