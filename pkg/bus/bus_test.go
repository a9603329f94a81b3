package bus_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/graphrag/graphrag/pkg/bus"
)

func TestEnsureProvisioningIdempotent(t *testing.T) {
	e := newEnv(t)
	ctx := testCtx(t)
	js := e.b.JetStream()

	spec := bus.StreamSpec{Name: "DOCS", Subjects: []string{"docs.>"}, MaxAge: time.Hour, Duplicates: 2 * time.Minute}
	for i := range 2 {
		if err := e.b.EnsureStream(ctx, spec); err != nil {
			t.Fatalf("EnsureStream #%d: %v", i+1, err)
		}
	}
	if _, err := e.b.Publish(ctx, "docs.a", []byte("x")); err != nil {
		t.Fatalf("publish: %v", err)
	}
	changed := spec
	changed.MaxAge = 2 * time.Hour
	changed.Subjects = []string{"docs.>", "more.>"}
	if err := e.b.EnsureStream(ctx, changed); err != nil {
		t.Fatalf("EnsureStream with changed settings: %v", err)
	}
	st, err := js.Stream(ctx, "DOCS")
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatalf("stream info: %v", err)
	}
	if info.Config.MaxAge != 2*time.Hour || len(info.Config.Subjects) != 2 {
		t.Errorf("stream config not updated: max age %s, subjects %v", info.Config.MaxAge, info.Config.Subjects)
	}
	if info.State.Msgs != 1 {
		t.Errorf("update lost messages: %d stored, want 1", info.State.Msgs)
	}

	for _, ttl := range []time.Duration{time.Hour, time.Hour, 2 * time.Hour} {
		if _, err := e.b.EnsureKV(ctx, "state", ttl); err != nil {
			t.Fatalf("EnsureKV(ttl=%s): %v", ttl, err)
		}
		kv, err := e.b.JetStream().KeyValue(ctx, "state")
		if err != nil {
			t.Fatalf("opening kv: %v", err)
		}
		st, err := kv.Status(ctx)
		if err != nil {
			t.Fatalf("kv status: %v", err)
		}
		if st.TTL() != ttl {
			t.Errorf("kv TTL = %s, want %s", st.TTL(), ttl)
		}
	}
	for i := range 2 {
		if err := e.b.EnsureObjectStore(ctx, "blobs"); err != nil {
			t.Fatalf("EnsureObjectStore #%d: %v", i+1, err)
		}
	}
}

func TestEnsureStreamInvalid(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name string
		spec bus.StreamSpec
	}{
		{"no name", bus.StreamSpec{Subjects: []string{"x.>"}}},
		{"no subjects", bus.StreamSpec{Name: "X"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := e.b.EnsureStream(testCtx(t), tt.spec); !errors.Is(err, bus.ErrInvalidSpec) {
				t.Fatalf("EnsureStream = %v, want ErrInvalidSpec", err)
			}
		})
	}
}

func TestConsumeInvalidSpec(t *testing.T) {
	e := newEnv(t)
	ok := func(context.Context, *bus.Message) error { return nil }
	tests := []struct {
		name   string
		mutate func(*bus.ConsumerSpec)
		h      bus.Handler
	}{
		{"no stream", func(s *bus.ConsumerSpec) { s.Stream = "" }, ok},
		{"no durable", func(s *bus.ConsumerSpec) { s.Durable = "" }, ok},
		{"dotted durable", func(s *bus.ConsumerSpec) { s.Durable = "a.b" }, ok},
		{"no dead-letter subject", func(s *bus.ConsumerSpec) { s.DeadLetterSubject = "" }, ok},
		{"dead letter equals filter", func(s *bus.ConsumerSpec) { s.DeadLetterSubject = s.FilterSubject }, ok},
		{"negative workers", func(s *bus.ConsumerSpec) { s.Workers = -1 }, ok},
		{"nil handler", func(*bus.ConsumerSpec) {}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := fastSpec("inv")
			tt.mutate(&spec)
			c, err := e.b.Consume(testCtx(t), spec, tt.h)
			if err == nil {
				_ = c.Stop(testCtx(t))
			}
			if !errors.Is(err, bus.ErrInvalidSpec) {
				t.Fatalf("Consume = %v, want ErrInvalidSpec", err)
			}
		})
	}
	t.Run("missing stream", func(t *testing.T) {
		spec := fastSpec("x")
		spec.Stream = "NOPE"
		_, err := e.b.Consume(testCtx(t), spec, ok)
		if !errors.Is(err, bus.ErrNotFound) {
			t.Fatalf("Consume on missing stream = %v, want ErrNotFound", err)
		}
	})
}

func TestPublishConsume(t *testing.T) {
	e := newEnv(t)
	ctx := testCtx(t)
	const n = 20
	for i := range n {
		if _, err := e.b.Publish(ctx, "ev.c1", []byte(strconv.Itoa(i)), bus.WithHeader("X-Index", strconv.Itoa(i))); err != nil {
			t.Fatalf("publish: %v", err)
		}
	}
	var mu sync.Mutex
	got := map[string]*bus.Message{}
	consume(t, e.b, fastSpec("pc"), func(_ context.Context, m *bus.Message) error {
		mu.Lock()
		defer mu.Unlock()
		got[string(m.Data)] = m
		return nil
	})
	eventually(t, "all messages handled", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == n })
	mu.Lock()
	for i := range n {
		m := got[strconv.Itoa(i)]
		if m == nil {
			t.Fatalf("message %d missing", i)
		}
		if m.Header.Get("X-Index") != strconv.Itoa(i) || m.Subject != "ev.c1" || m.Stream != evStream ||
			m.Consumer != "pc" || m.Deliveries != 1 || m.StreamSeq != uint64(i+1) {
			t.Errorf("message %d = %+v", i, m)
		}
	}
	mu.Unlock()
	eventually(t, "all acked", func() bool {
		st, err := e.b.ConsumerInfo(ctx, evStream, "pc")
		return err == nil && st.NumAckPending == 0 && st.NumPending == 0
	})
}

func TestRedeliveryAfterError(t *testing.T) {
	e := newEnv(t)
	publishN(t, e.b, "ev.r", 1)
	var calls atomic.Int32
	var lastDeliveries atomic.Uint64
	consume(t, e.b, fastSpec("redeliver"), func(_ context.Context, m *bus.Message) error {
		lastDeliveries.Store(m.Deliveries)
		if calls.Add(1) == 1 {
			return errors.New("transient")
		}
		return nil
	})
	ctx := testCtx(t)
	eventually(t, "success after retry", func() bool {
		st, err := e.b.ConsumerInfo(ctx, evStream, "redeliver")
		return err == nil && calls.Load() >= 2 && st.NumAckPending == 0 && st.NumPending == 0
	})
	if got := calls.Load(); got != 2 {
		t.Errorf("handler calls = %d, want 2", got)
	}
	if got := lastDeliveries.Load(); got != 2 {
		t.Errorf("deliveries on retry = %d, want 2", got)
	}
}

func TestDeduplication(t *testing.T) {
	e := newEnv(t)
	ctx := testCtx(t)
	tests := []struct {
		id      string
		wantDup bool
	}{
		{"doc-1", false},
		{"doc-1", true},
		{"doc-2", false},
		{"doc-1", true},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprintf("%d-%s", i, tt.id), func(t *testing.T) {
			ack, err := e.b.Publish(ctx, "ev.d", []byte(tt.id), bus.WithMsgID(tt.id))
			if err != nil {
				t.Fatalf("publish: %v", err)
			}
			if ack.Duplicate != tt.wantDup || ack.Stream != evStream {
				t.Fatalf("ack = %+v, want duplicate=%v", ack, tt.wantDup)
			}
		})
	}
	counts, err := e.b.SubjectCounts(ctx, evStream, "ev.d")
	if err != nil {
		t.Fatalf("SubjectCounts: %v", err)
	}
	if counts["ev.d"] != 2 {
		t.Fatalf("stored %d messages, want 2", counts["ev.d"])
	}
}

func TestDeadLetter(t *testing.T) {
	tests := []struct {
		name           string
		handler        func(m *bus.Message) error
		wantDeliveries string
		wantReason     string
	}{
		{
			name:           "permanent error",
			handler:        func(*bus.Message) error { return fmt.Errorf("decoding: %w", bus.Permanent(errors.New("bad json"))) },
			wantDeliveries: "1",
			wantReason:     "decoding: bad json",
		},
		{
			name:           "permanent sentinel",
			handler:        func(*bus.Message) error { return fmt.Errorf("schema v9: %w", bus.ErrPermanent) },
			wantDeliveries: "1",
			wantReason:     "schema v9: permanent failure",
		},
		{
			name:           "max deliver",
			handler:        func(m *bus.Message) error { return fmt.Errorf("attempt %d\r\nfailed", m.Deliveries) },
			wantDeliveries: "3",
			wantReason:     "attempt 3  failed",
		},
		{
			name:           "panic",
			handler:        func(*bus.Message) error { panic("boom") },
			wantDeliveries: "3",
			wantReason:     "handler panicked: boom",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reader := sdkmetric.NewManualReader()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			e := newEnv(t, bus.WithMeterProvider(mp))
			dlq := readDLQ(t, e)
			ctx := testCtx(t)
			if _, err := e.b.Publish(ctx, "ev.poison", []byte("poison"), bus.WithHeader("X-Trace", "keep"), bus.WithMsgID("p1")); err != nil {
				t.Fatalf("publish: %v", err)
			}
			var good atomic.Int32
			consume(t, e.b, fastSpec("dl"), func(_ context.Context, m *bus.Message) error {
				if string(m.Data) == "poison" {
					return tt.handler(m)
				}
				good.Add(1)
				return nil
			})
			eventually(t, "dead letter", func() bool { return len(dlq.snapshot()) >= 1 })
			// The consumer keeps running after the poison message.
			publishN(t, e.b, "ev.good", 3)
			eventually(t, "good messages after poison", func() bool { return good.Load() == 3 })

			msgs := dlq.snapshot()
			if len(msgs) != 1 {
				t.Fatalf("dead letters = %d, want 1", len(msgs))
			}
			m := msgs[0]
			want := map[string]string{
				bus.HeaderDLQReason:     tt.wantReason,
				bus.HeaderDLQSubject:    "ev.poison",
				bus.HeaderDLQStream:     evStream,
				bus.HeaderDLQStreamSeq:  "1",
				bus.HeaderDLQConsumer:   "dl",
				bus.HeaderDLQDeliveries: tt.wantDeliveries,
				"X-Trace":               "keep",
				"Nats-Msg-Id":           "EV.1.dl",
			}
			for k, v := range want {
				if got := m.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			if _, err := time.Parse(time.RFC3339Nano, m.Header.Get(bus.HeaderDLQTime)); err != nil {
				t.Errorf("time header: %v", err)
			}
			if string(m.Data) != "poison" {
				t.Errorf("dead letter data = %q, want original", m.Data)
			}
			counts, err := e.b.SubjectCounts(ctx, dlqStream, "")
			if err != nil || counts[dlqSubj] != 1 {
				t.Errorf("DLQ stream counts = %v, %v; want 1 on %s", counts, err, dlqSubj)
			}
			eventually(t, "poison terminated", func() bool {
				st, err := e.b.ConsumerInfo(ctx, evStream, "dl")
				return err == nil && st.NumAckPending == 0 && st.NumPending == 0
			})

			// A message counts as processed once its ack is confirmed, which the
			// consumer learns just after the server stops counting it pending: wait
			// for the counter, then check every counter.
			wantFailed, _ := strconv.Atoi(tt.wantDeliveries)
			var rm metricdata.ResourceMetrics
			eventually(t, "metrics settled", func() bool {
				rm = metricdata.ResourceMetrics{}
				if err := reader.Collect(ctx, &rm); err != nil {
					t.Fatalf("collect metrics: %v", err)
				}
				return counterValue(rm, bus.MetricProcessed) >= 3
			})
			if got := counterValue(rm, bus.MetricDeadLettered); got != 1 {
				t.Errorf("%s = %d, want 1", bus.MetricDeadLettered, got)
			}
			if got := counterValue(rm, bus.MetricProcessed); got != 3 {
				t.Errorf("%s = %d, want 3", bus.MetricProcessed, got)
			}
			if got := counterValue(rm, bus.MetricFailed); got != int64(wantFailed) {
				t.Errorf("%s = %d, want %d", bus.MetricFailed, got, wantFailed)
			}
		})
	}
}

// counterValue sums a counter's points that carry the stream and consumer attributes.
func counterValue(rm metricdata.ResourceMetrics, name string) int64 {
	var total int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				continue
			}
			for _, dp := range sum.DataPoints {
				s, ok1 := dp.Attributes.Value(attribute.Key("stream"))
				c, ok2 := dp.Attributes.Value(attribute.Key("consumer"))
				if ok1 && ok2 && s.AsString() != "" && c.AsString() != "" {
					total += dp.Value
				}
			}
		}
	}
	return total
}

// TestDeadLetterPublishFailureKeepsMessage: with no stream capturing the
// DLQ subject the message must be retried, never terminated.
func TestDeadLetterPublishFailureKeepsMessage(t *testing.T) {
	e := newEnv(t)
	publishN(t, e.b, "ev.x", 1)
	spec := fastSpec("nodlq")
	spec.DeadLetterSubject = "nowhere.dlq"
	var calls atomic.Int32
	c := consume(t, e.b, spec, func(context.Context, *bus.Message) error {
		calls.Add(1)
		return bus.Permanent(errors.New("bad"))
	})
	eventually(t, "retries after failed DLQ writes", func() bool { return calls.Load() >= 3 })
	if err := c.Stop(testCtx(t)); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	st, err := e.b.ConsumerInfo(testCtx(t), evStream, "nodlq")
	if err != nil {
		t.Fatalf("ConsumerInfo: %v", err)
	}
	if st.NumAckPending+st.NumPending != 1 {
		t.Fatalf("message not kept for retry: %+v", st)
	}
}

func TestBackPressure(t *testing.T) {
	e := newEnv(t)
	const n, maxAckPending = 30, 3
	publishN(t, e.b, "ev.bp", n)
	spec := fastSpec("bp")
	spec.Workers = 8
	spec.MaxAckPending = maxAckPending
	var inFlight, maxSeen, done atomic.Int32
	consume(t, e.b, spec, func(context.Context, *bus.Message) error {
		cur := inFlight.Add(1)
		for {
			old := maxSeen.Load()
			if cur <= old || maxSeen.CompareAndSwap(old, cur) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		// Leave before the bus acks, so inFlight never counts an acked message.
		inFlight.Add(-1)
		done.Add(1)
		return nil
	})
	eventually(t, "all handled", func() bool { return done.Load() == n })
	if got := maxSeen.Load(); got > maxAckPending || got < 2 {
		t.Fatalf("max in-flight = %d, want 2..%d", got, maxAckPending)
	}
}

func TestSharedDurable(t *testing.T) {
	e := newEnv(t)
	const n = 100
	publishN(t, e.b, "ev.s", n)
	var mu sync.Mutex
	handled := map[uint64]int{}
	perReplica := [2]int{}
	for i, b := range []*bus.Bus{e.b, e.newBus(t)} {
		consume(t, b, fastSpec("shared"), func(_ context.Context, m *bus.Message) error {
			time.Sleep(2 * time.Millisecond)
			mu.Lock()
			defer mu.Unlock()
			handled[m.StreamSeq]++
			perReplica[i]++
			return nil
		})
	}
	eventually(t, "all handled", func() bool { mu.Lock(); defer mu.Unlock(); return len(handled) == n })
	eventually(t, "all acked", func() bool {
		st, err := e.b.ConsumerInfo(testCtx(t), evStream, "shared")
		return err == nil && st.NumAckPending == 0 && st.NumPending == 0
	})
	mu.Lock()
	defer mu.Unlock()
	for seq, count := range handled {
		if count != 1 {
			t.Errorf("message %d handled %d times", seq, count)
		}
	}
	if perReplica[0] == 0 || perReplica[1] == 0 {
		t.Errorf("work not shared: %v", perReplica)
	}
}

func TestGracefulStop(t *testing.T) {
	e := newEnv(t)
	const n = 5
	publishN(t, e.b, "ev.g", n)
	spec := fastSpec("graceful")
	spec.Workers = 1
	started := make(chan uint64, n)
	release := make(chan struct{})
	first, err := e.b.Consume(testCtx(t), spec, func(ctx context.Context, m *bus.Message) error {
		started <- m.StreamSeq
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	if err != nil {
		t.Fatalf("Consume: %v", err)
	}
	inFlight := <-started
	stopped := make(chan error, 1)
	go func() { stopped <- first.Stop(testCtx(t)) }()
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned (%v) while a handler was running", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-stopped; err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := first.Stop(testCtx(t)); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	select {
	case <-first.Done():
	default:
		t.Fatal("Done not closed after Stop")
	}
	if len(started) != 0 {
		t.Fatalf("handlers started after Stop: %d", len(started))
	}

	var mu sync.Mutex
	rest := map[uint64]bool{}
	consume(t, e.b, spec, func(_ context.Context, m *bus.Message) error {
		mu.Lock()
		defer mu.Unlock()
		rest[m.StreamSeq] = true
		return nil
	})
	eventually(t, "the rest handled by the next consumer", func() bool { mu.Lock(); defer mu.Unlock(); return len(rest) == n-1 })
	mu.Lock()
	defer mu.Unlock()
	if rest[inFlight] {
		t.Errorf("in-flight message %d was not acked at Stop: handled again", inFlight)
	}
}

func TestStopDeadlineCancelsHandlers(t *testing.T) {
	e := newEnv(t)
	publishN(t, e.b, "ev.h", 1)
	started := make(chan struct{})
	var sawCancel atomic.Bool
	c, err := e.b.Consume(testCtx(t), fastSpec("hang"), func(ctx context.Context, _ *bus.Message) error {
		close(started)
		<-ctx.Done()
		sawCancel.Store(true)
		return ctx.Err()
	})
	if err != nil {
		t.Fatalf("Consume: %v", err)
	}
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := c.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop = %v, want DeadlineExceeded", err)
	}
	<-c.Done()
	if !sawCancel.Load() {
		t.Fatal("handler context not cancelled")
	}
	st, err := e.b.ConsumerInfo(testCtx(t), evStream, "hang")
	if err != nil {
		t.Fatalf("ConsumerInfo: %v", err)
	}
	if st.NumAckPending+st.NumPending != 1 {
		t.Fatalf("abandoned message not kept: %+v", st)
	}
}

func TestConsumeContextCancelStops(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(testCtx(t))
	c, err := e.b.Consume(ctx, fastSpec("ctx"), func(context.Context, *bus.Message) error { return nil })
	if err != nil {
		t.Fatalf("Consume: %v", err)
	}
	cancel()
	select {
	case <-c.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("consumer still running after its ctx was cancelled")
	}
}

func TestTracePropagation(t *testing.T) {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	e := newEnv(t, bus.WithTracerProvider(tp))

	ctx, parent := tp.Tracer("test").Start(testCtx(t), "request")
	if _, err := e.b.Publish(ctx, "ev.t", []byte("x")); err != nil {
		t.Fatalf("publish: %v", err)
	}
	parent.End()
	handlerSpan := make(chan trace.SpanContext, 1)
	consume(t, e.b, fastSpec("trace"), func(ctx context.Context, _ *bus.Message) error {
		handlerSpan <- trace.SpanContextFromContext(ctx)
		return nil
	})
	hs := <-handlerSpan
	eventually(t, "consumer span ended", func() bool {
		for _, s := range sr.Ended() {
			if s.SpanKind() == trace.SpanKindConsumer {
				return true
			}
		}
		return false
	})
	var producer, consumer sdktrace.ReadOnlySpan
	for _, s := range sr.Ended() {
		switch s.SpanKind() {
		case trace.SpanKindProducer:
			producer = s
		case trace.SpanKindConsumer:
			consumer = s
		}
	}
	if producer == nil || consumer == nil {
		t.Fatalf("spans: producer=%v consumer=%v", producer, consumer)
	}
	if producer.SpanContext().TraceID() != parent.SpanContext().TraceID() {
		t.Error("producer span not in the caller's trace")
	}
	if consumer.SpanContext().TraceID() != producer.SpanContext().TraceID() {
		t.Error("consumer span not in the producer's trace")
	}
	if consumer.Parent().SpanID() != producer.SpanContext().SpanID() {
		t.Error("consumer span's parent is not the producer span")
	}
	if hs.SpanID() != consumer.SpanContext().SpanID() {
		t.Error("handler ctx does not carry the consumer span")
	}
}

func TestObjectRoundTrip(t *testing.T) {
	e := newEnv(t)
	ctx := testCtx(t)
	payload := make([]byte, 3*e.b.MaxPayload()+17)
	if _, err := rand.Read(payload); err != nil {
		t.Fatal(err)
	}
	ref, err := e.b.PutObject(ctx, "payloads", "doc-1", bytes.NewReader(payload))
	if err != nil {
		t.Fatalf("PutObject: %v", err)
	}
	raw, err := json.Marshal(ref)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"digest":"SHA-256=`) {
		t.Errorf("ref JSON = %s", raw)
	}
	var back bus.ObjectRef
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	got, err := e.b.GetObject(ctx, back)
	if err != nil {
		t.Fatalf("GetObject: %v", err)
	}
	if !bytes.Equal(got, payload) || back.Size != uint64(len(payload)) {
		t.Fatalf("round trip mismatch: %d bytes back, ref size %d, want %d", len(got), back.Size, len(payload))
	}

	if _, err := e.b.PutObject(ctx, "payloads", "doc-1", strings.NewReader("replaced")); err != nil {
		t.Fatalf("PutObject replace: %v", err)
	}
	tests := []struct {
		name string
		ref  bus.ObjectRef
		want error
	}{
		{"replaced object", back, bus.ErrObjectChanged},
		{"missing object", bus.ObjectRef{Bucket: "payloads", Name: "nope"}, bus.ErrNotFound},
		{"missing bucket", bus.ObjectRef{Bucket: "nobucket", Name: "x"}, bus.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := e.b.GetObject(ctx, tt.ref); !errors.Is(err, tt.want) {
				t.Fatalf("GetObject = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestStatus(t *testing.T) {
	e := newEnv(t)
	ctx := testCtx(t)
	publishN(t, e.b, "ev.corpus.a", 2)
	publishN(t, e.b, "ev.corpus.b", 1)
	publishN(t, e.b, "ev.other", 4)

	counts, err := e.b.SubjectCounts(ctx, evStream, "ev.corpus.*")
	if err != nil {
		t.Fatalf("SubjectCounts: %v", err)
	}
	if len(counts) != 2 || counts["ev.corpus.a"] != 2 || counts["ev.corpus.b"] != 1 {
		t.Errorf("counts = %v", counts)
	}
	if _, err := e.b.SubjectCounts(ctx, "NOPE", ""); !errors.Is(err, bus.ErrNotFound) {
		t.Errorf("SubjectCounts on missing stream = %v, want ErrNotFound", err)
	}
	if _, err := e.b.ConsumerInfo(ctx, evStream, "nobody"); !errors.Is(err, bus.ErrNotFound) {
		t.Errorf("ConsumerInfo on missing consumer = %v, want ErrNotFound", err)
	}

	c := consume(t, e.b, fastSpec("status"), func(context.Context, *bus.Message) error { return nil })
	eventually(t, "all acked", func() bool {
		st, err := e.b.ConsumerInfo(ctx, evStream, "status")
		return err == nil && st.NumPending == 0 && st.NumAckPending == 0 && st.Delivered == 7
	})
	_ = c
}
