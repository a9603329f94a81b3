package pipeline

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/errkind"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/neo4jgraph"
)

// flakyGraph is a graph store whose server can be down: its calls then fail with the
// errors the Neo4j driver returns for a refused connection, classified by the driver.
type flakyGraph struct {
	down  atomic.Bool
	calls atomic.Int64
	pings atomic.Int64
}

func (g *flakyGraph) err() error {
	if !g.down.Load() {
		return nil
	}
	refused := &neo4j.ConnectivityError{Inner: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	return neo4jgraph.Unavailable(&neo4j.TransactionExecutionLimit{Cause: "timeout", Errors: []error{refused}})
}

func (g *flakyGraph) Ping(context.Context) error {
	g.pings.Add(1)
	return g.err()
}

func (g *flakyGraph) Merge(context.Context) error {
	g.calls.Add(1)
	return g.err()
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// A store outage pauses the stage: the handlers that meet it wait with their messages
// in progress (no redelivery is counted, nothing is dead-lettered, however many times
// MaxDeliver the outage lasts), status says the stage is paused and what is down, and
// when the store answers again every message is handled on its first delivery.
func TestStoreOutagePausesTheStage(t *testing.T) {
	b := newBus(t)
	g := &flakyGraph{}
	g.down.Store(true)
	deps := NewDependencies(map[string]Probe{graphstore.Dependency: ProbeOf(g)}, quietLog())
	deps.probeMin, deps.probeMax = 10*time.Millisecond, 20*time.Millisecond
	var mu sync.Mutex
	deliveries := map[string]uint64{} // the largest delivery count each document was handled at
	handled := map[string]bool{}
	h := func(ctx context.Context, _ string, m *bus.Message) error {
		var d events.Document
		if err := events.Decode(m.Data, &d); err != nil {
			return bus.Permanent(err)
		}
		mu.Lock()
		deliveries[d.ID] = max(deliveries[d.ID], m.Deliveries)
		mu.Unlock()
		if err := g.Merge(ctx); err != nil {
			return err
		}
		mu.Lock()
		handled[d.ID] = true
		mu.Unlock()
		return nil
	}
	r := NewRunner(b, StageChunker, events.KindDocuments, fastStage(), deps.Handler(h), quietLog())
	if err := r.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	stopPauses := ReportPauses(t.Context(), b, StageChunker, deps, quietLog())
	t.Cleanup(func() {
		deps.Stop()
		stopPauses()
		if err := r.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	const docs = 3
	for _, id := range []string{"d0", "d1", "d2"} {
		publishDoc(t, b, "notes", id, "Ada wrote "+id)
	}

	st := waitState(t, b, "the pause", func(st Status) bool { return st.State == StatePaused })
	if p := st.Paused[0]; p.Stage != StageChunker || !strings.HasPrefix(p.Reason, "graph store unavailable: ") ||
		!strings.Contains(p.Reason, "connection refused") || p.Since.IsZero() {
		t.Fatalf("paused %+v, want the chunker waiting for the graph store", st.Paused)
	}
	// The outage lasts many probes, each time many redeliveries (10 ms apart) would
	// have taken; the handlers are not run meanwhile: the probe is the store's Ping.
	for g.pings.Load() < 20 {
		time.Sleep(10 * time.Millisecond)
	}
	if n := g.calls.Load(); n != docs {
		t.Errorf("the store was called %d times during the outage, want once per message (%d)", n, docs)
	}
	st = waitState(t, b, "the pause", func(st Status) bool { return st.State == StatePaused })
	if s := st.Stages[0]; s.DeadLettered != 0 || s.Done != 0 {
		t.Fatalf("during the outage: %+v", s)
	}

	g.down.Store(false)
	st = waitState(t, b, "the end of the pause", func(st Status) bool { return st.Stages[0].Done == docs && st.State != StatePaused })
	if s := st.Stages[0]; s.DeadLettered != 0 {
		t.Fatalf("after the outage: %+v", s)
	}
	mu.Lock()
	defer mu.Unlock()
	for id, n := range deliveries {
		if !handled[id] || n != 1 {
			t.Errorf("%s: handled %v, at delivery %d, want handled on its first", id, handled[id], n)
		}
	}
	if down, _, _ := deps.Outage(); down {
		t.Error("the store still looks down")
	}
}

// A stage stopped during an outage gives its messages back as Unavailable (the bus
// naks them, never dead-letters them for it), at once.
func TestStopEndsTheWait(t *testing.T) {
	g := &flakyGraph{}
	g.down.Store(true)
	deps := NewDependencies(map[string]Probe{graphstore.Dependency: ProbeOf(g)}, quietLog())
	h := deps.Handler(func(ctx context.Context, _ string, _ *bus.Message) error { return g.Merge(ctx) })
	done := make(chan error, 1)
	go func() { done <- h(t.Context(), "notes", &bus.Message{}) }()
	for g.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	deps.Stop()
	err := <-done
	if !errkind.Is(err, errkind.Unavailable) || errkind.Dependency(err) != graphstore.Dependency {
		t.Fatalf("handler after Stop = %v, want the outage", err)
	}
	deps.Stop() // twice is safe
	// Other errors are the handler's, unchanged, without a wait.
	plain := errors.New("bad record")
	if err := deps.Handler(func(context.Context, string, *bus.Message) error { return plain })(t.Context(), "notes", &bus.Message{}); err != plain { //nolint:errorlint // the same error, unwrapped
		t.Fatalf("handler = %v, want its own error", err)
	}
}

// waitState polls the corpus's status until ok says so.
func waitState(t *testing.T, b *bus.Bus, what string, ok func(Status) bool) Status {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := GetStatus(t.Context(), b, "notes")
		if err != nil {
			t.Fatal(err)
		}
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %+v", what, st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
