package bus_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/natsembed"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	evStream  = "EV"
	dlqStream = "DLQ"
	dlqSubj   = "dlq.ev"
)

// env is one server with an event stream (ev.>) and a DLQ stream (dlq.>).
type env struct {
	srv *natsembed.Server
	nc  *nats.Conn
	b   *bus.Bus
}

func newEnv(t testing.TB, opts ...bus.Option) *env {
	t.Helper()
	srv := bustest.StartServer(t)
	nc := bustest.Connect(t, srv)
	b, err := bus.New(nc, opts...)
	if err != nil {
		t.Fatalf("bus.New: %v", err)
	}
	ctx := testCtx(t)
	for _, s := range []bus.StreamSpec{
		{Name: evStream, Subjects: []string{"ev.>"}, Duplicates: time.Minute},
		{Name: dlqStream, Subjects: []string{"dlq.>"}, Duplicates: time.Minute},
	} {
		if err := b.EnsureStream(ctx, s); err != nil {
			t.Fatalf("EnsureStream(%s): %v", s.Name, err)
		}
	}
	return &env{srv: srv, nc: nc, b: b}
}

// newBus opens a second, independent connection and bus (another replica).
func (e *env) newBus(t testing.TB) *bus.Bus {
	t.Helper()
	b, err := bus.New(bustest.Connect(t, e.srv))
	if err != nil {
		t.Fatalf("bus.New: %v", err)
	}
	return b
}

// freePort picks a free loopback port, for a server restarted on the same one.
func freePort(t testing.TB) int {
	t.Helper()
	ports, err := natsembed.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	return ports[0]
}

// connectBus opens a bus on its own connection, closed when the test ends.
func connectBus(ctx context.Context, t testing.TB, cfg bus.ConnConfig) *bus.Bus {
	t.Helper()
	nc, err := bus.Connect(ctx, cfg)
	if err == nil {
		t.Cleanup(nc.Close)
		var b *bus.Bus
		if b, err = bus.New(nc); err == nil {
			return b
		}
	}
	t.Fatalf("connecting to %s: %v", cfg.URL, err)
	return nil
}

// publishRetrying publishes id (as data and message id) on subject, retrying while a
// leader is elected or a server restarts: an unconfirmed publish that was stored is a
// duplicate of its retry, dropped by its message id.
func publishRetrying(ctx context.Context, t testing.TB, b *bus.Bus, subject, id string) {
	t.Helper()
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := b.Publish(pctx, subject, []byte(id), bus.WithMsgID(id))
		cancel()
		if err == nil {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("publishing %s: %v", id, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func publishN(t testing.TB, b *bus.Bus, subject string, n int) {
	t.Helper()
	ctx := testCtx(t)
	for i := range n {
		if _, err := b.Publish(ctx, subject, []byte{byte(i)}); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
}

// consume starts a consumer and stops it at the end of the test.
func consume(t testing.TB, b *bus.Bus, spec bus.ConsumerSpec, h bus.Handler) *bus.Consumer {
	t.Helper()
	c, err := b.Consume(testCtx(t), spec, h)
	if err != nil {
		t.Fatalf("Consume: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return c
}

// eventually polls cond until it holds or 20s pass.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// dlqReader collects dead-lettered messages with a core subscription.
type dlqReader struct {
	mu   sync.Mutex
	msgs []*nats.Msg
}

func readDLQ(t testing.TB, e *env) *dlqReader {
	t.Helper()
	r := &dlqReader{}
	sub, err := e.nc.Subscribe("dlq.>", func(m *nats.Msg) {
		r.mu.Lock()
		r.msgs = append(r.msgs, m)
		r.mu.Unlock()
	})
	if err != nil {
		t.Fatalf("subscribe dlq: %v", err)
	}
	if err := e.nc.Flush(); err != nil {
		t.Fatalf("flush: %v", err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return r
}

func (r *dlqReader) snapshot() []*nats.Msg {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*nats.Msg(nil), r.msgs...)
}

func fastSpec(durable string) bus.ConsumerSpec {
	return bus.ConsumerSpec{
		Stream:            evStream,
		Durable:           durable,
		FilterSubject:     "ev.>",
		AckWait:           5 * time.Second,
		MaxDeliver:        3,
		Backoff:           []time.Duration{10 * time.Millisecond},
		Workers:           2,
		DeadLetterSubject: dlqSubj,
	}
}
