package grapher

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
)

// cappedStore returns at most max hits per search, as Milvus does (16,384).
type cappedStore struct {
	vectorstore.Store
	max int
}

func (c cappedStore) Search(ctx context.Context, coll string, vec []float32, k int, f vectorstore.Filter) ([]vectorstore.Hit, error) {
	return c.Store.Search(ctx, coll, vec, min(k, c.max), f)
}

// A store whose searches are capped below the number of entities must not keep
// detection from deleting the records of entities that are gone: enumerating by
// search found fewer records than the store counted and failed every run.
func TestStaleEntitiesBeyondSearchCap(t *testing.T) {
	vs, err := embedded.Open(filepath.Join(t.TempDir(), "v"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = vs.Close() })
	checkStaleEntities(t, cappedStore{Store: vs, max: 50}, 120, 40)
}

// checkStaleEntities merges n entities (perChunk to a chunk), runs detection,
// removes the chunks of the first stale entities, runs detection again, and checks
// that the entity collection holds exactly the entities left.
func checkStaleEntities(t *testing.T, vs vectorstore.Store, n, stale int) {
	t.Helper()
	const perChunk = 20
	if n%perChunk != 0 || stale%perChunk != 0 {
		t.Fatalf("n and stale must be multiples of %d", perChunk)
	}
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
	cfg := DefaultConfig()
	cfg.Lease = false
	s, err := New(cfg, Deps{Bus: b, Graph: g, Vectors: vs, Embedder: hashembed.New(32), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })

	// A corpus of its own: the Milvus server is shared by the integration tests.
	corpus := fmt.Sprintf("stale%d", time.Now().UnixNano()%1_000_000)
	coll := schema.Collection(corpus, schema.Entities)
	t.Cleanup(func() {
		_ = vs.DropCollection(context.Background(), coll)
		_ = vs.DropCollection(context.Background(), schema.Collection(corpus, schema.Communities))
	})
	keys := make([]string, n)
	var batch []graphstore.ChunkExtraction
	for i := range keys {
		keys[i] = fmt.Sprintf("entity %06d", i)
		if i%perChunk == 0 {
			batch = append(batch, graphstore.ChunkExtraction{ChunkID: fmt.Sprintf("c%05d", i/perChunk), DocumentID: "d"})
		}
		ce := &batch[len(batch)-1]
		ce.Entities = append(ce.Entities, graphstore.EntityMention{Key: keys[i], Name: keys[i], Type: "THING"})
	}
	if err := g.Merge(ctx, corpus, batch); err != nil {
		t.Fatal(err)
	}
	if err := s.Detect(ctx, corpus); err != nil {
		t.Fatalf("first detection: %v", err)
	}
	if got := listAll(t, vs, coll); len(got) != n {
		t.Fatalf("%d entity records after the first detection, want %d", len(got), n)
	}
	var gone []string
	for _, ce := range batch[:stale/perChunk] {
		gone = append(gone, ce.ChunkID)
	}
	if err := g.RemoveChunks(ctx, corpus, gone); err != nil {
		t.Fatal(err)
	}
	if err := s.Detect(ctx, corpus); err != nil {
		t.Fatalf("detection with %d stale entity records among %d: %v", stale, n, err)
	}
	if got := listAll(t, vs, coll); !slices.Equal(got, keys[stale:]) {
		t.Fatalf("%d entity records after the second detection, want the %d entities left", len(got), n-stale)
	}
}

func listAll(t *testing.T, vs vectorstore.Store, coll string) []string {
	t.Helper()
	var all []string
	after := ""
	for {
		ids, next, err := vs.List(t.Context(), coll, after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ids...)
		if next == "" {
			return all
		}
		after = next
	}
}
