package grapher

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
)

// newLeasedGrapher builds a grapher with the default config (lease on) on its own
// connection to srv, as a separate process would.
func newLeasedGrapher(t *testing.T, b *bus.Bus) *Service {
	t.Helper()
	g, err := boltgraph.Open(filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	vs, err := embedded.Open(filepath.Join(t.TempDir(), "v"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = vs.Close() })
	s, err := New(DefaultConfig(), Deps{Bus: b, Graph: g, Vectors: vs, Embedder: hashembed.New(32), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	return s
}

// Two graphers on one bus: the second waits in Start until the first stops, then
// takes over at once (the first releases its lease); if its lease is taken from it,
// the grapher reports the failure so that the process stops.
func TestOneGrapherHoldsTheLease(t *testing.T) {
	ctx := t.Context()
	srv := bustest.StartServer(t)
	connect := func() *bus.Bus {
		b, err := bus.New(bustest.Connect(t, srv))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b1, b2 := connect(), connect()
	if err := pipeline.Provision(ctx, b1, pipeline.DefaultTopology()); err != nil {
		t.Fatal(err)
	}
	first, second := newLeasedGrapher(t, b1), newLeasedGrapher(t, b2)
	if err := first.Start(ctx); err != nil {
		t.Fatalf("first Start: %v", err)
	}
	started := make(chan error, 1)
	go func() { started <- second.Start(ctx) }()
	select {
	case err := <-started:
		t.Fatalf("second grapher started while the first runs (err %v)", err)
	case <-time.After(time.Second):
	}
	stopped := time.Now()
	if err := first.Stop(ctx); err != nil {
		t.Fatalf("first Stop: %v", err)
	}
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("second Start: %v", err)
		}
	case <-time.After(pipeline.LeaseTTL / 2):
		t.Fatal("second grapher did not take over after the first stopped")
	}
	t.Logf("second grapher took over %v after the first stopped", time.Since(stopped).Round(time.Millisecond))

	kv, err := b1.KV(ctx, schema.LeaseBucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Put(ctx, schema.GrapherLease, []byte("someone else")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-second.Failed():
		if !errors.Is(err, bus.ErrLeaseLost) {
			t.Fatalf("Failed = %v, want ErrLeaseLost", err)
		}
	case <-time.After(pipeline.LeaseTTL):
		t.Fatal("the grapher did not report its lost lease")
	}
}

// A grapher whose Start is cancelled while it waits returns the context's error.
func TestGrapherWaitingForLeaseIsCancellable(t *testing.T) {
	srv := bustest.StartServer(t)
	b, err := bus.New(bustest.Connect(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	if err := pipeline.Provision(t.Context(), b, pipeline.DefaultTopology()); err != nil {
		t.Fatal(err)
	}
	first, second := newLeasedGrapher(t, b), newLeasedGrapher(t, b)
	if err := first.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if err := second.Start(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second Start = %v, want a deadline error", err)
	}
}
