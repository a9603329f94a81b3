package ask

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// countingGraph counts every read of the graph store.
type countingGraph struct {
	engine.GraphReader
	reads atomic.Int64
}

func (g *countingGraph) Entity(ctx context.Context, corpus, key string) (graphstore.Entity, error) {
	g.reads.Add(1)
	return g.GraphReader.Entity(ctx, corpus, key)
}

func (g *countingGraph) Entities(ctx context.Context, corpus string, keys []string, opts ...graphstore.ReadOption) ([]graphstore.Entity, error) {
	g.reads.Add(1)
	return g.GraphReader.Entities(ctx, corpus, keys, opts...)
}

func (g *countingGraph) RelationshipsOf(ctx context.Context, corpus string, keys []string, limit int) ([]graphstore.Relationship, error) {
	g.reads.Add(1)
	return g.GraphReader.RelationshipsOf(ctx, corpus, keys, limit)
}

func (g *countingGraph) RelationshipsAmong(ctx context.Context, corpus string, keys []string, opts ...graphstore.ReadOption) ([]graphstore.Relationship, error) {
	g.reads.Add(1)
	return g.GraphReader.RelationshipsAmong(ctx, corpus, keys, opts...)
}

func (g *countingGraph) ChunkEntities(ctx context.Context, corpus string, chunkIDs []string) (map[string][]string, error) {
	g.reads.Add(1)
	return g.GraphReader.ChunkEntities(ctx, corpus, chunkIDs)
}

func (g *countingGraph) Neighborhood(ctx context.Context, corpus string, start []string, depth, limit int) ([]graphstore.Neighbor, error) {
	g.reads.Add(1)
	return g.GraphReader.Neighborhood(ctx, corpus, start, depth, limit)
}

func (g *countingGraph) Communities(ctx context.Context, corpus string, level int) ([]graphstore.Community, error) {
	g.reads.Add(1)
	return g.GraphReader.Communities(ctx, corpus, level)
}

func (g *countingGraph) Stats(ctx context.Context, corpus string) (graphstore.Stats, error) {
	g.reads.Add(1)
	return g.GraphReader.Stats(ctx, corpus)
}

// recordingVectors records the text searches of the chunk collection and every search
// and read of the report collection.
type recordingVectors struct {
	engine.VectorReader
	mu      sync.Mutex
	texts   []string // lexical searches of chunks, in order
	reports int      // searches and reads of community reports
}

func (v *recordingVectors) SearchText(ctx context.Context, coll, query string, k int, f vectorstore.Filter) ([]vectorstore.Hit, error) {
	if coll == schema.Collection(querytest.DemoCorpus, schema.Chunks) {
		v.mu.Lock()
		v.texts = append(v.texts, query)
		v.mu.Unlock()
	}
	return v.VectorReader.SearchText(ctx, coll, query, k, f)
}

func (v *recordingVectors) Search(ctx context.Context, coll string, vec []float32, k int, f vectorstore.Filter) ([]vectorstore.Hit, error) {
	if coll == schema.Collection(querytest.DemoCorpus, schema.Communities) {
		v.mu.Lock()
		v.reports++
		v.mu.Unlock()
	}
	return v.VectorReader.Search(ctx, coll, vec, k, f)
}

func (v *recordingVectors) Get(ctx context.Context, coll string, ids []string) ([]vectorstore.Record, error) {
	if coll == schema.Collection(querytest.DemoCorpus, schema.Communities) {
		v.mu.Lock()
		v.reports++
		v.mu.Unlock()
	}
	return v.VectorReader.Get(ctx, coll, ids)
}

// newModesEngine is an offline engine over the demo corpus with its reports, its graph
// reads counted and its searches recorded.
func newModesEngine(t *testing.T, cfg engine.Config) (*Asker, *countingGraph, *recordingVectors) {
	t.Helper()
	st := querytest.DemoWithReports(t)
	g := &countingGraph{GraphReader: st.Graph}
	v := &recordingVectors{VectorReader: st.Vectors}
	e, err := New(cfg, Config{}, engine.Deps{Graph: g, Vectors: v, Embedder: st.Embedder, OfflineEmbedder: true, Logger: querytest.Logger()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e, g, v
}

const modesQuestion = "What did Ada Lovelace write for the Analytical Engine?"

// Naive mode ranks passages by the text lists alone: it reads nothing from the graph
// store and searches no community report, where local mode does both.
func TestNaiveModeReadsNoGraph(t *testing.T) {
	e, g, v := newModesEngine(t, engine.Config{})
	resp, err := e.Query(t.Context(), Request{Corpus: "demo", Query: modesQuestion, Mode: ModeNaive}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := g.reads.Load(); n != 0 {
		t.Errorf("naive mode read the graph store %d times, want 0", n)
	}
	if v.reports != 0 {
		t.Errorf("naive mode read community reports %d times, want 0", v.reports)
	}
	c := resp.Context
	if resp.Mode != ModeNaive || len(c.Chunks) == 0 || len(c.Entities)+len(c.Relationships)+len(c.Communities) != 0 {
		t.Fatalf("mode %s, context %d chunks, %d entities, %d relationships, %d reports: want naive, passages only",
			resp.Mode, len(c.Chunks), len(c.Entities), len(c.Relationships), len(c.Communities))
	}
	if c.Chunks[0].ID != "c1" || resp.Answer == "" || len(resp.Citations) == 0 {
		t.Errorf("top passage %s, answer %q, citations %v: want c1, answered and cited", c.Chunks[0].ID, resp.Answer, resp.Citations)
	}
	for _, ch := range c.Chunks {
		for _, h := range ch.Lists {
			if h.List != "dense" && h.List != "lexical" {
				t.Errorf("passage %s found by the %s list in naive mode", ch.ID, h.List)
			}
		}
	}

	if _, err := e.Query(t.Context(), Request{Corpus: "demo", Query: modesQuestion, Mode: ModeLocal}, nil); err != nil {
		t.Fatal(err)
	}
	if g.reads.Load() == 0 || v.reports == 0 {
		t.Errorf("local mode: %d graph reads, %d report reads: the counters do not count", g.reads.Load(), v.reports)
	}
}

// Weights that leave naive mode no text list are refused, not answered from nothing.
func TestNaiveModeNeedsATextList(t *testing.T) {
	e, _, _ := newModesEngine(t, engine.Config{})
	_, err := e.Query(t.Context(), Request{Corpus: "demo", Query: modesQuestion, Mode: ModeNaive, Weights: &engine.Weights{Graph: 1}}, nil)
	if err == nil || !strings.Contains(err.Error(), "naive") {
		t.Fatalf("err = %v, want a bad request naming naive mode", err)
	}
}

// Drift mode takes the top report's key entities as its follow-ups offline and runs a
// local search for the question and for each of them, at most DriftFollowUps.
func TestDriftSearchesFollowUps(t *testing.T) {
	e, _, v := newModesEngine(t, engine.Config{DriftFollowUps: 2})
	resp, err := e.Query(t.Context(), Request{Corpus: "demo", Query: modesQuestion, Mode: ModeDrift}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Mode != ModeDrift || len(resp.FollowUps) == 0 || len(resp.FollowUps) > 2 {
		t.Fatalf("mode %s, follow-ups %q: want drift with 1..2 follow-ups", resp.Mode, resp.FollowUps)
	}
	if len(resp.Context.Communities) == 0 {
		t.Fatal("no report in the context: the primer is missing")
	}
	// The follow-ups are members of the primer's first report, the first of the context's.
	top := resp.Context.Communities[0].ID
	i := slices.IndexFunc(querytest.DemoReports, func(r querytest.Report) bool { return r.ID == top })
	if i < 0 {
		t.Fatalf("top report %s is not a fixture report", top)
	}
	for _, f := range resp.FollowUps {
		if !slices.Contains(querytest.DemoReports[i].Members, f) {
			t.Errorf("follow-up %q is not a member of the top report %s %v", f, top, querytest.DemoReports[i].Members)
		}
	}
	want := append([]string{modesQuestion}, resp.FollowUps...)
	if !slices.Equal(v.texts, want) {
		t.Errorf("lexical searches %q, want the question then each follow-up %q", v.texts, want)
	}
	if resp.Answer == "" || len(resp.Citations) == 0 {
		t.Errorf("answer %q with citations %v: want a cited answer", resp.Answer, resp.Citations)
	}
	for _, c := range resp.Citations {
		if !slices.ContainsFunc(resp.Context.Chunks, func(ch engine.Chunk) bool { return ch.ID == c.ChunkID }) {
			t.Errorf("citation %+v cites a passage outside the context", c)
		}
	}
}

// Hybrid answers from local retrieval with global search's top reports added; mix also
// fuses the naive passages into local retrieval's.
func TestHybridAndMixCompose(t *testing.T) {
	e, _, _ := newModesEngine(t, engine.Config{CommunityTopK: 1, TopK: 2})
	ctx := t.Context()
	retrieve := func(mode string) engine.Retrieved {
		t.Helper()
		c, _, err := e.Retrieve(ctx, Request{Corpus: "demo", Query: "Who worked with Charles Babbage on the engine?", Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	local, global, naive, hybrid, mix := retrieve(ModeLocal), retrieve(ModeGlobal), retrieve(ModeNaive), retrieve(ModeHybrid), retrieve(ModeMix)
	ids := func(cs []engine.Community) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	if len(global.Communities) == 0 {
		t.Fatal("global search selected no report")
	}
	for _, want := range append(ids(local.Communities), global.Communities[0].ID) {
		if !slices.Contains(ids(hybrid.Communities), want) {
			t.Errorf("hybrid reports %v lack %s (local %v, global's top %s)", ids(hybrid.Communities), want, ids(local.Communities), global.Communities[0].ID)
		}
	}
	if len(hybrid.Chunks) != len(local.Chunks) || hybrid.Chunks[0].ID != local.Chunks[0].ID || len(hybrid.Entities) != len(local.Entities) {
		t.Errorf("hybrid passages or entities differ from local retrieval's")
	}
	if !slices.Equal(ids(mix.Communities), ids(hybrid.Communities)) || len(mix.Entities) != len(hybrid.Entities) {
		t.Errorf("mix reports %v, want hybrid's %v", ids(mix.Communities), ids(hybrid.Communities))
	}
	inEither := func(id string) bool {
		has := func(cs []engine.Chunk) bool {
			return slices.ContainsFunc(cs, func(c engine.Chunk) bool { return c.ID == id })
		}
		return has(local.Chunks) || has(naive.Chunks)
	}
	for _, c := range mix.Chunks {
		if !inEither(c.ID) {
			t.Errorf("mix passage %s is neither a local nor a naive one", c.ID)
		}
	}
	if !slices.ContainsFunc(mix.Chunks, func(c engine.Chunk) bool { return c.ID == naive.Chunks[0].ID }) {
		t.Errorf("mix passages lack naive's best, %s", naive.Chunks[0].ID)
	}
}

// With only_context no mode writes an answer; global mode returns the reports it would
// map, bounded by MapTopK.
func TestOnlyContextHasNoAnswer(t *testing.T) {
	e, _, _ := newModesEngine(t, engine.Config{MapTopK: 1})
	for _, mode := range Modes {
		resp, err := e.Query(t.Context(), Request{Corpus: "demo", Query: modesQuestion, Mode: mode, OnlyContext: true}, nil)
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if resp.Answer != "" || len(resp.Citations) != 0 {
			t.Errorf("%s: answer %q, citations %v: want none", mode, resp.Answer, resp.Citations)
		}
		switch mode {
		case ModeGlobal:
			if len(resp.Context.Communities) != 1 {
				t.Errorf("global: %d reports, want MapTopK (1)", len(resp.Context.Communities))
			}
		default:
			if len(resp.Context.Chunks) == 0 {
				t.Errorf("%s: no passage in the context", mode)
			}
		}
	}
}
