package grapher

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
)

type testGrapher struct {
	s  *Service
	b  *bus.Bus
	g  *boltgraph.Store
	vs *embedded.Store
}

// newTestGrapher starts a grapher on a fresh NATS server and embedded stores, with
// communities of two or more members.
func newTestGrapher(t *testing.T) testGrapher {
	t.Helper()
	return newTestGrapherWrapped(t, nil)
}

// newTestGrapherWrapped is newTestGrapher with the grapher's vector store seen through
// wrap (nil: as is), for tests that count what the grapher writes.
func newTestGrapherWrapped(t *testing.T, wrap func(VectorStore) VectorStore) testGrapher {
	t.Helper()
	return newTestGrapherConfigured(t, wrap, nil)
}

// newTestGrapherConfigured is newTestGrapherWrapped with the config changed by configure
// (nil: the tests' defaults) before the grapher starts.
func newTestGrapherConfigured(t *testing.T, wrap func(VectorStore) VectorStore, configure func(*Config)) testGrapher {
	t.Helper()
	return newTestGrapherEmbedding(t, wrap, configure, hashembed.New(32))
}

// newTestGrapherEmbedding is newTestGrapherConfigured with the embedder emb (of
// dimension 32).
func newTestGrapherEmbedding(t *testing.T, wrap func(VectorStore) VectorStore, configure func(*Config), emb llm.Embedder) testGrapher {
	t.Helper()
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
	cfg := DefaultConfig()
	cfg.MinCommunitySize = 2
	cfg.Lease = false
	if configure != nil {
		configure(&cfg)
	}
	var vectors VectorStore = vs
	if wrap != nil {
		vectors = wrap(vs)
	}
	s, err := New(cfg, Deps{Bus: b, Graph: g, Vectors: vectors, Embedder: emb, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	return testGrapher{s: s, b: b, g: g, vs: vs}
}

// triangles is a chunk per group of three connected entities: each group is a community.
func triangles(prefix string, groups int) []graphstore.ChunkExtraction {
	var out []graphstore.ChunkExtraction
	for i := range groups {
		k := func(j int) string { return fmt.Sprintf("%s %d-%d", prefix, i, j) }
		ce := graphstore.ChunkExtraction{ChunkID: fmt.Sprintf("%s-c%d", prefix, i), DocumentID: prefix}
		for j := range 3 {
			ce.Entities = append(ce.Entities, graphstore.EntityMention{Key: k(j), Name: k(j), Type: "THING"})
		}
		ce.Relations = []graphstore.RelationMention{{SourceKey: k(0), TargetKey: k(1), Type: "R", Strength: 1},
			{SourceKey: k(1), TargetKey: k(2), Type: "R", Strength: 1}, {SourceKey: k(0), TargetKey: k(2), Type: "R", Strength: 1}}
		out = append(out, ce)
	}
	return out
}

// communityEvents decodes the community events of corpus in the stream.
func communityEvents(t *testing.T, b *bus.Bus, corpus string) []events.Community {
	t.Helper()
	var out []events.Community
	for _, data := range bustest.Messages(t, b, pipeline.StreamName(events.KindCommunities), events.Subject(events.KindCommunities, corpus)) {
		var ev events.Community
		if err := events.Decode(data, &ev); err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

func currentCommunityIDs(t *testing.T, g *boltgraph.Store, corpus string) []string {
	t.Helper()
	cs, err := g.Communities(t.Context(), corpus, -1)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	slices.Sort(ids)
	return ids
}

// A community that comes back in a later detection run must be announced again, inside
// the stream's de-duplication window too: its event of the earlier run may have been
// read while the community was replaced (the summarizer then drops it as stale), so
// without a new event it never gets a report. Message ids carry the run.
func TestCommunityReturningInALaterRunIsAnnouncedAgain(t *testing.T) {
	ctx := t.Context()
	tg := newTestGrapher(t)
	const corpus = "runs"
	base := triangles("base", 3)
	if err := tg.g.Merge(ctx, corpus, base); err != nil {
		t.Fatal(err)
	}
	if err := tg.s.Detect(ctx, corpus); err != nil {
		t.Fatal(err)
	}
	first := currentCommunityIDs(t, tg.g, corpus)
	if len(first) == 0 {
		t.Fatal("no community detected")
	}
	// A chunk joins two groups, so that the run after it replaces their communities; then
	// the chunk is removed again and the graph is what it was.
	bridge := graphstore.ChunkExtraction{ChunkID: "bridge", DocumentID: "bridge", Entities: []graphstore.EntityMention{
		{Key: "base 0-0", Name: "base 0-0", Type: "THING"}, {Key: "base 1-0", Name: "base 1-0", Type: "THING"}},
		Relations: []graphstore.RelationMention{{SourceKey: "base 0-0", TargetKey: "base 1-0", Type: "R", Strength: 5}}}
	if err := tg.g.Merge(ctx, corpus, []graphstore.ChunkExtraction{bridge}); err != nil {
		t.Fatal(err)
	}
	if err := tg.s.Detect(ctx, corpus); err != nil {
		t.Fatal(err)
	}
	if slices.Equal(currentCommunityIDs(t, tg.g, corpus), first) {
		t.Fatal("the bridge changed no community: the test replaces nothing")
	}
	if err := tg.g.RemoveChunks(ctx, corpus, []string{"bridge"}); err != nil {
		t.Fatal(err)
	}
	before := len(communityEvents(t, tg.b, corpus))
	if err := tg.s.Detect(ctx, corpus); err != nil {
		t.Fatal(err)
	}
	if got := currentCommunityIDs(t, tg.g, corpus); !slices.Equal(got, first) {
		t.Fatalf("communities after removing the bridge %v, want the first run's %v", got, first)
	}
	st, err := pipeline.LoadGraphState(ctx, tg.s.kv, corpus)
	if err != nil {
		t.Fatal(err)
	}
	// No report was written: the last run announces every community again, and the
	// stream keeps those events.
	announced := map[string]bool{}
	for _, ev := range communityEvents(t, tg.b, corpus)[before:] {
		if ev.Run == st.LastRun {
			announced[ev.ID] = true
		}
	}
	for _, id := range first {
		if !announced[id] {
			t.Errorf("community %s has no report and no event of the last run %s: it never gets a report", id, st.LastRun)
		}
	}
}

// Reports of communities that no longer exist are deleted at every detection run, also
// when the collection holds no more records than there are communities (some current
// communities still waiting for their report): counting is no test of staleness.
func TestStaleReportsDeletedWhateverTheCount(t *testing.T) {
	ctx := t.Context()
	tg := newTestGrapher(t)
	const corpus = "stale"
	if err := tg.g.Merge(ctx, corpus, triangles("t", 4)); err != nil {
		t.Fatal(err)
	}
	if err := tg.s.Detect(ctx, corpus); err != nil {
		t.Fatal(err)
	}
	current := currentCommunityIDs(t, tg.g, corpus)
	if len(current) < 3 {
		t.Fatalf("%d communities, want at least 3", len(current))
	}
	// One current community reported, and as many stale reports as the others lack.
	vec := make([]float32, 32)
	vec[0] = 1
	recs := []vectorstore.Record{{ID: current[0], Vector: vec, Text: "current"}}
	for i := range len(current) - 1 {
		recs = append(recs, vectorstore.Record{ID: fmt.Sprintf("c0-gone%02d", i), Vector: vec, Text: "stale"})
	}
	coll := schema.Collection(corpus, schema.Communities)
	if err := tg.vs.Upsert(ctx, coll, recs); err != nil {
		t.Fatal(err)
	}
	if err := tg.s.Detect(ctx, corpus); err != nil {
		t.Fatal(err)
	}
	if got := listAll(t, tg.vs, coll); !slices.Equal(got, current[:1]) {
		t.Errorf("reports after detection %v, want only the current %v", got, current[:1])
	}
}

// The grapher's record counts the current communities without a report: all of them
// after a run that published them, fewer as reports are written, and the count
// survives a restart (the grapher then reads the communities back from the graph).
func TestUnreportedCommunitiesCounted(t *testing.T) {
	ctx := t.Context()
	tg := newTestGrapher(t)
	const corpus = "count"
	if err := tg.g.Merge(ctx, corpus, triangles("t", 3)); err != nil {
		t.Fatal(err)
	}
	if err := tg.s.Detect(ctx, corpus); err != nil {
		t.Fatal(err)
	}
	ids := currentCommunityIDs(t, tg.g, corpus)
	state := func(s *Service) pipeline.GraphState {
		t.Helper()
		st, err := pipeline.LoadGraphState(ctx, s.kv, corpus)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := state(tg.s); st.Communities != len(ids) || st.Unreported != len(ids) {
		t.Fatalf("after detection: %d communities, %d unreported; want %d and %d", st.Communities, st.Unreported, len(ids), len(ids))
	}
	// Every report but one written (the last community's event was dead-lettered).
	vec := make([]float32, 32)
	vec[0] = 1
	for _, id := range ids[:len(ids)-1] {
		if err := tg.vs.Upsert(ctx, schema.Collection(corpus, schema.Communities), []vectorstore.Record{{ID: id, Vector: vec, Text: "r"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tg.s.recountReports(ctx, corpus); err != nil {
		t.Fatal(err)
	}
	if st := state(tg.s); st.Unreported != 1 {
		t.Fatalf("%d unreported with one report missing", st.Unreported)
	}
	// A grapher started afresh knows the count but not which; it finds out from the graph.
	if err := tg.s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Lease = false
	again, err := New(cfg, Deps{Bus: tg.b, Graph: tg.g, Vectors: tg.vs, Embedder: hashembed.New(32), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = again.Stop(context.Background()) })
	if err := again.recountReports(ctx, corpus); err != nil {
		t.Fatal(err)
	}
	if st := state(again); st.Unreported != 1 {
		t.Fatalf("%d unreported after a restart, want 1", st.Unreported)
	}
	if err := tg.vs.Upsert(ctx, schema.Collection(corpus, schema.Communities), []vectorstore.Record{{ID: ids[len(ids)-1], Vector: vec, Text: "r"}}); err != nil {
		t.Fatal(err)
	}
	if err := again.recountReports(ctx, corpus); err != nil {
		t.Fatal(err)
	}
	if st := state(again); st.Unreported != 0 {
		t.Fatalf("%d unreported with every report written", st.Unreported)
	}
}
