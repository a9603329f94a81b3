package grapher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/natsembed"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
)

// shardedStores are the stores graphers share, as replicas share Neo4j and Milvus.
type shardedStores struct {
	g  *boltgraph.Store
	vs *embedded.Store
}

func openStores(t testing.TB) shardedStores {
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
	return shardedStores{g: g, vs: vs}
}

// shardTestConfig is a grapher of shards (0: unsharded, no lease) that rebalances and
// detects quickly, with communities from the graph alone (no warm start), so that two
// runs fed the same events in different orders end with the same hierarchy.
func shardTestConfig(shards int) Config {
	cfg := DefaultConfig()
	cfg.MinCommunitySize = 2
	cfg.WarmStart = false
	cfg.Debounce = 20 * time.Millisecond
	cfg.Shards = shards
	cfg.Lease = shards > 0
	cfg.shardPoll = 50 * time.Millisecond
	cfg.Stage.AckWait = 2 * time.Second // a dead grapher's unacknowledged events come back soon
	return cfg
}

// startGrapher starts a grapher on its own connection to srv, as its own process would
// be, and returns a func that cuts the connection, so that the test can kill it.
func startGrapher(t testing.TB, srv *natsembed.Server, st shardedStores, cfg Config, algo graphstore.Algorithms) (*Service, func()) {
	t.Helper()
	nc := bustest.Connect(t, srv)
	b, err := bus.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, Deps{Bus: b, Graph: st.g, Algorithms: algo, Vectors: st.vs, Embedder: hashembed.New(32),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	return s, nc.Close
}

// shardCorpora are corpora whose extractions the tests publish: a triangle per chunk,
// and every third chunk also linking two triangles, so that communities span chunks.
var shardCorpora = []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"}

func shardExtractions(corpus string, from, to int) []*events.Extraction {
	var out []*events.Extraction
	for i := from; i < to; i++ {
		k := func(j int) string { return fmt.Sprintf("%s %d %d", corpus, i, j) }
		x := &events.Extraction{Schema: events.SchemaExtraction, Corpus: corpus, ChunkID: fmt.Sprintf("%s-c%d", corpus, i),
			DocumentID: fmt.Sprintf("%s-d%d", corpus, i/4), Method: "offline/v1"}
		for j := range 3 {
			x.Entities = append(x.Entities, events.ExtractedEntity{Name: k(j), Type: "THING"})
		}
		x.Relationships = []events.ExtractedRelationship{{Source: k(0), Target: k(1), Strength: 1},
			{Source: k(1), Target: k(2), Strength: 1}, {Source: k(0), Target: k(2), Strength: 1}}
		if i%3 == 2 {
			x.Entities = append(x.Entities, events.ExtractedEntity{Name: fmt.Sprintf("%s %d 0", corpus, i-1), Type: "THING"})
			x.Relationships = append(x.Relationships, events.ExtractedRelationship{Source: k(0), Target: fmt.Sprintf("%s %d 0", corpus, i-1), Strength: 1})
		}
		out = append(out, x)
	}
	return out
}

func publishExtractions(t testing.TB, b *bus.Bus, xs []*events.Extraction) {
	t.Helper()
	for _, x := range xs {
		data, err := events.Encode(x)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Publish(t.Context(), events.Subject(events.KindExtractions, x.Corpus), data, bus.WithMsgID(x.MsgID())); err != nil {
			t.Fatal(err)
		}
	}
}

// graphDone reports whether every extraction of corpus was merged and the corpus
// detected since, as status reads it.
func graphDone(ctx context.Context, b *bus.Bus, corpus string, want uint64) bool {
	st, err := pipeline.GetStatus(ctx, b, corpus)
	if err != nil {
		return false
	}
	for _, ss := range st.Stages {
		if ss.Stage == pipeline.StageGrapher {
			return ss.Total == want && ss.Done == want && !st.Graph.Dirty && st.Graph.Detections > 0
		}
	}
	return false
}

// waitUntil polls cond until it holds; the deadline is a safety net, not a measure.
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: never happened", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// graphOf is what a corpus's graph is made of: entities with their mention counts,
// weighted edges, and the community hierarchy.
type graphOf struct {
	Entities    map[string]int
	Edges       map[string]float64
	Communities map[string][]string
}

func readGraph(t *testing.T, g *boltgraph.Store, corpus string) graphOf {
	t.Helper()
	ctx := t.Context()
	snap, err := g.Snapshot(ctx, corpus)
	if err != nil {
		t.Fatal(err)
	}
	out := graphOf{Entities: map[string]int{}, Edges: map[string]float64{}, Communities: map[string][]string{}}
	ents, err := g.Entities(ctx, corpus, snap.Keys)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		out.Entities[e.Key] = e.MentionCount
	}
	for _, e := range snap.Edges {
		a, b := snap.Keys[e.Source], snap.Keys[e.Target]
		if a > b {
			a, b = b, a
		}
		out.Edges[a+"|"+b] += e.Weight
	}
	comms, err := g.Communities(ctx, corpus, -1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range comms {
		m := slices.Clone(c.Members)
		slices.Sort(m)
		out.Communities[fmt.Sprintf("L%d %v", c.Level, m)] = m
	}
	return out
}

// Two graphers share the corpora by shard; one dies (its connection cut, its leases
// left to expire) with events of its shards still to come; the other takes its
// shards, and every corpus ends with the graph a single grapher builds from the same
// events: nothing lost, nothing merged twice.
func TestShardsMoveWhenAGrapherDies(t *testing.T) {
	ctx := t.Context()
	const shards, chunks = 4, 12

	// The reference: one unsharded grapher.
	refSrv := bustest.StartServer(t)
	refBus, err := bus.New(bustest.Connect(t, refSrv))
	if err != nil {
		t.Fatal(err)
	}
	if err := pipeline.Provision(ctx, refBus, pipeline.DefaultTopology()); err != nil {
		t.Fatal(err)
	}
	refStores := openStores(t)
	startGrapher(t, refSrv, refStores, shardTestConfig(0), nil)
	for _, c := range shardCorpora {
		publishExtractions(t, refBus, shardExtractions(c, 0, chunks))
	}
	for _, c := range shardCorpora {
		waitUntil(t, "the reference grapher to finish "+c, func() bool { return graphDone(ctx, refBus, c, chunks) })
	}

	srv := bustest.StartServer(t)
	b, err := bus.New(bustest.Connect(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	if err := pipeline.Provision(ctx, b, pipeline.DefaultTopology()); err != nil {
		t.Fatal(err)
	}
	// Leases that expire in 2 s rather than 30, so that the test does not wait long.
	if _, err := b.EnsureKV(ctx, schema.LeaseBucket, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	st := openStores(t)
	first, _ := startGrapher(t, srv, st, shardTestConfig(shards), nil)
	second, killSecond := startGrapher(t, srv, st, shardTestConfig(shards), nil)
	waitUntil(t, "the shards to be shared", func() bool {
		return len(first.heldShards()) == shards/2 && len(second.heldShards()) == shards/2
	})
	byShard := map[int][]string{}
	for _, c := range shardCorpora {
		byShard[pipeline.ShardOf(c, shards)] = append(byShard[pipeline.ShardOf(c, shards)], c)
	}
	held := func(s *Service) (out []string) {
		for _, n := range s.heldShards() {
			out = append(out, byShard[n]...)
		}
		return out
	}
	if len(held(first)) == 0 || len(held(second)) == 0 {
		t.Fatalf("corpora not split: first %v, second %v (shards %v)", held(first), held(second), byShard)
	}
	for _, c := range shardCorpora {
		publishExtractions(t, b, shardExtractions(c, 0, chunks/2))
	}
	for _, c := range shardCorpora {
		waitUntil(t, "the first half of "+c, func() bool { return graphDone(ctx, b, c, chunks/2) })
	}

	// The second grapher dies: no more renewals, acknowledgements or releases.
	dead := held(second)
	killSecond()
	stopCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_ = second.Stop(stopCtx)
	cancel()
	for _, c := range shardCorpora {
		publishExtractions(t, b, shardExtractions(c, chunks/2, chunks))
	}
	waitUntil(t, "the first grapher to take every shard", func() bool { return len(first.heldShards()) == shards })
	for _, c := range shardCorpora {
		waitUntil(t, "the whole of "+c, func() bool { return graphDone(ctx, b, c, chunks) })
	}
	for _, c := range shardCorpora {
		want, got := readGraph(t, refStores.g, c), readGraph(t, st.g, c)
		if len(want.Entities) == 0 || len(want.Communities) == 0 {
			t.Fatalf("reference graph of %s is empty: %+v", c, want)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("corpus %s (held by the dead grapher: %v): graph differs from one grapher's\n got  %+v\n want %+v",
				c, slices.Contains(dead, c), got, want)
		}
	}
}

// blockingAlgorithms detects the communities of corpus block until its context ends,
// as a run on a very large graph does, and of any other corpus at once (no hierarchy).
type blockingAlgorithms struct {
	block   string
	entered chan struct{}
	once    sync.Once
}

func (*blockingAlgorithms) Available(context.Context) (bool, error) { return true, nil }

func (a *blockingAlgorithms) Communities(ctx context.Context, corpus string, _ graphstore.AlgorithmOptions) (graphstore.AlgorithmResult, error) {
	if corpus != a.block {
		return graphstore.AlgorithmResult{}, nil
	}
	a.once.Do(func() { close(a.entered) })
	<-ctx.Done()
	return graphstore.AlgorithmResult{}, ctx.Err()
}

// While the detection of a big corpus runs, a small corpus's events are merged and the
// small corpus is detected and done: one corpus's run holds back no other's.
func TestDetectionOfOneCorpusHoldsBackNoOther(t *testing.T) {
	for _, shards := range []int{0, 2} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			ctx := t.Context()
			srv := bustest.StartServer(t)
			b, err := bus.New(bustest.Connect(t, srv))
			if err != nil {
				t.Fatal(err)
			}
			if err := pipeline.Provision(ctx, b, pipeline.DefaultTopology()); err != nil {
				t.Fatal(err)
			}
			algo := &blockingAlgorithms{block: "big", entered: make(chan struct{})}
			cfg := shardTestConfig(shards)
			startGrapher(t, srv, openStores(t), cfg, algo)
			publishExtractions(t, b, shardExtractions("big", 0, 6))
			select {
			case <-algo.entered:
			case <-time.After(60 * time.Second):
				t.Fatal("the big corpus was never detected")
			}
			publishExtractions(t, b, shardExtractions("small", 0, 3))
			waitUntil(t, "the small corpus to be merged and detected", func() bool { return graphDone(ctx, b, "small", 3) })
			if st, err := pipeline.GetStatus(ctx, b, "big"); err != nil || !st.Graph.Dirty {
				t.Fatalf("big corpus: %+v %v: want it still detecting (dirty)", st.Graph, err)
			}
		})
	}
}

// A grapher started without -shards on a bus whose extractions are sharded refuses to
// run: it would merge every corpus beside the shards' holders.
func TestUnshardedGrapherRefusesShardedBus(t *testing.T) {
	ctx := t.Context()
	srv := bustest.StartServer(t)
	b, err := bus.New(bustest.Connect(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	if err := pipeline.Provision(ctx, b, pipeline.DefaultTopology()); err != nil {
		t.Fatal(err)
	}
	if err := pipeline.EnsureShards(ctx, b, events.KindExtractions, 4); err != nil {
		t.Fatal(err)
	}
	st := openStores(t)
	cfg := shardTestConfig(0)
	cfg.Lease = true
	s, err := New(cfg, Deps{Bus: b, Graph: st.g, Vectors: st.vs, Embedder: hashembed.New(32), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	if err := s.Start(ctx); err == nil || !strings.Contains(err.Error(), "-shards 4") {
		t.Fatalf("Start on a sharded bus: %v, want a refusal naming -shards 4", err)
	}
	// A sharded grapher with another number of shards refuses too.
	cfg = shardTestConfig(8)
	s8, err := New(cfg, Deps{Bus: b, Graph: st.g, Vectors: st.vs, Embedder: hashembed.New(32), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s8.Stop(context.Background()) })
	if err := s8.Start(ctx); !errors.Is(err, bus.ErrInvalidSpec) {
		t.Fatalf("Start with 8 shards on a bus of 4: %v, want ErrInvalidSpec", err)
	}
}
