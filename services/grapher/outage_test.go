package grapher

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/graphstore/neo4jgraph"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
)

// downGraph is a graph store whose server can be down: every call then fails with the
// errors the Neo4j driver returns for a refused connection once its retries are spent,
// classified by the driver.
type downGraph struct {
	*boltgraph.Store
	down  atomic.Bool
	pings atomic.Int64
}

func (g *downGraph) err() error {
	if !g.down.Load() {
		return nil
	}
	refused := &neo4j.ConnectivityError{Inner: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	return neo4jgraph.Unavailable(&neo4j.TransactionExecutionLimit{Cause: "timeout (exceeded max retry time: 30s)", Errors: []error{refused}})
}

func (g *downGraph) Ping(ctx context.Context) error {
	g.pings.Add(1)
	if err := g.err(); err != nil {
		return err
	}
	return g.Store.Ping(ctx)
}

func (g *downGraph) Merge(ctx context.Context, corpus string, batch []graphstore.ChunkExtraction) error {
	if err := g.err(); err != nil {
		return err
	}
	return g.Store.Merge(ctx, corpus, batch)
}

func (g *downGraph) Snapshot(ctx context.Context, corpus string) (graphstore.Snapshot, error) {
	if err := g.err(); err != nil {
		return graphstore.Snapshot{}, err
	}
	return g.Store.Snapshot(ctx, corpus)
}

// A graph store outage while extractions arrive pauses the grapher: nothing is
// dead-lettered however many redeliveries the outage lasts, status names the graph
// store, and when it answers again every extraction is merged, once, and communities
// are detected.
func TestGraphStoreOutagePausesTheGrapher(t *testing.T) {
	b, err := bus.New(bustest.Connect(t, bustest.StartServer(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := pipeline.Provision(t.Context(), b, pipeline.DefaultTopology()); err != nil {
		t.Fatal(err)
	}
	bolt, err := boltgraph.Open(filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bolt.Close() })
	vs, err := embedded.Open(filepath.Join(t.TempDir(), "v"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = vs.Close() })
	g := &downGraph{Store: bolt}
	cfg := DefaultConfig()
	cfg.MinCommunitySize, cfg.Debounce = 2, 50*time.Millisecond
	cfg.Stage.MaxDeliver, cfg.Stage.Backoff = 2, []time.Duration{10 * time.Millisecond}
	s, err := New(cfg, Deps{Bus: b, Graph: g, Vectors: vs, Embedder: hashembed.New(32), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })

	g.down.Store(true)
	const chunks = 4
	for i := range chunks {
		x := &events.Extraction{Schema: events.SchemaExtraction, Corpus: "demo", ChunkID: fmt.Sprintf("c%d", i), DocumentID: "d1", Method: "offline/v1",
			Entities:      []events.ExtractedEntity{{Name: "Ada", Type: "PERSON"}, {Name: "Bay", Type: "PLACE"}, {Name: fmt.Sprintf("Storm %d", i), Type: "EVENT"}},
			Relationships: []events.ExtractedRelationship{{Source: "Ada", Target: "Bay", Strength: 1}, {Source: "Bay", Target: fmt.Sprintf("Storm %d", i), Strength: 1}}}
		data, err := events.Encode(x)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Publish(t.Context(), events.Subject(events.KindExtractions, "demo"), data); err != nil {
			t.Fatal(err)
		}
	}
	// The corpus has no documents (the extractions were published directly), so its
	// status is empty; the pause records are what status reads for a corpus in progress.
	pauses := waitPauses(t, b, true)
	if p := pauses[0]; p.Stage != pipeline.StageGrapher || !strings.HasPrefix(p.Reason, "graph store unavailable") {
		t.Fatalf("paused %+v, want the grapher waiting for the graph store", pauses)
	}
	for g.pings.Load() < 2 { // at least 1 s + 2 s: a hundred redeliveries 10 ms apart
		time.Sleep(20 * time.Millisecond)
	}
	st := waitGrapher(t, b, "the outage", func(pipeline.Status) bool { return true })
	if gs := grapherStage(st); gs.DeadLettered != 0 || gs.Done != 0 || gs.InFlight != chunks {
		t.Fatalf("grapher during the outage: %+v, want every extraction in flight", gs)
	}

	g.down.Store(false)
	st = waitGrapher(t, b, "the merges and detection after the outage", func(st pipeline.Status) bool {
		gs := grapherStage(st)
		return gs.Done == chunks && st.Graph.Detections > 0 && !st.Graph.Dirty
	})
	waitPauses(t, b, false)
	if gs := grapherStage(st); gs.DeadLettered != 0 {
		t.Fatalf("grapher after the outage: %+v", gs)
	}
	ada, err := bolt.Entity(t.Context(), "demo", "ada")
	if err != nil || ada.MentionCount != chunks {
		t.Fatalf("ada after the outage: %+v %v, want %d mentions", ada, err, chunks)
	}
	if cs, err := bolt.Communities(t.Context(), "demo", -1); err != nil || len(cs) == 0 {
		t.Fatalf("communities after the outage: %d %v", len(cs), err)
	}
}

// waitPauses polls the pause records until there are some (paused) or none.
func waitPauses(t *testing.T, b *bus.Bus, paused bool) []pipeline.Pause {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ps, err := pipeline.Pauses(t.Context(), b)
		if err != nil {
			t.Fatal(err)
		}
		if (len(ps) > 0) == paused {
			return ps
		}
		if time.Now().After(deadline) {
			t.Fatalf("pauses %+v, want paused %v", ps, paused)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func grapherStage(st pipeline.Status) pipeline.StageStatus {
	for _, s := range st.Stages {
		if s.Stage == pipeline.StageGrapher {
			return s
		}
	}
	return pipeline.StageStatus{}
}

// waitGrapher polls the status of corpus demo until ok says so.
func waitGrapher(t *testing.T, b *bus.Bus, what string, ok func(pipeline.Status) bool) pipeline.Status {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := pipeline.GetStatus(t.Context(), b, "demo")
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
