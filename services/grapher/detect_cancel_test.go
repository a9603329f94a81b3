package grapher

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
)

// endlessAlgorithms is a community detection that runs until its context ends, as a
// long run on a large graph does.
type endlessAlgorithms struct{ entered, cancelled chan struct{} }

func (endlessAlgorithms) Available(context.Context) (bool, error) { return true, nil }

func (a endlessAlgorithms) Communities(ctx context.Context, _ string, _ graphstore.AlgorithmOptions) (graphstore.AlgorithmResult, error) {
	close(a.entered)
	<-ctx.Done()
	close(a.cancelled)
	return graphstore.AlgorithmResult{}, ctx.Err()
}

// Stop cancels a running detection instead of waiting for it to finish (issue 12,
// item 11: the detection ran on a context detached from the grapher's).
func TestStopCancelsDetection(t *testing.T) {
	ctx := t.Context()
	srv := bustest.StartServer(t)
	b, err := bus.New(bustest.Connect(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	if err := pipeline.Provision(ctx, b, pipeline.DefaultTopology()); err != nil {
		t.Fatal(err)
	}
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
	algo := endlessAlgorithms{entered: make(chan struct{}), cancelled: make(chan struct{})}
	cfg := DefaultConfig()
	cfg.Lease = false
	cfg.Debounce = 10 * time.Millisecond
	s, err := New(cfg, Deps{Bus: b, Graph: g, Algorithms: algo, Vectors: vs, Embedder: hashembed.New(32),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	x := &events.Extraction{Schema: events.SchemaExtraction, Corpus: "demo", ChunkID: "c1", DocumentID: "d1", Method: "offline/v1",
		Entities:      []events.ExtractedEntity{{Name: "Ada", Type: "PERSON"}, {Name: "Bay", Type: "PLACE"}},
		Relationships: []events.ExtractedRelationship{{Source: "Ada", Target: "Bay", Strength: 1}}}
	data, _ := events.Encode(x)
	if err := s.handleExtraction(ctx, "demo", &bus.Message{Data: data}); err != nil {
		t.Fatal(err)
	}
	<-algo.entered // the scheduled detection is running
	// A safety net, not the measure: without cancellation Stop waits all of it.
	stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := s.Stop(stopCtx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	select {
	case <-algo.cancelled:
	default:
		t.Fatal("Stop returned but the detection's context was never cancelled")
	}
	st, err := pipeline.LoadGraphState(ctx, s.kv, "demo")
	if err != nil || !st.Dirty {
		t.Errorf("state after a cut detection: %+v %v: want the corpus still dirty", st, err)
	}
}
