package summarizer

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
)

type testSummarizer struct {
	s *Service
	b *bus.Bus
	g *boltgraph.Store
	v *embedded.Store
}

// newTestSummarizer prepares a summarizer (not consuming: tests call handleCommunity)
// over a graph with one community, c0-x, of two entities. graph, when set, wraps the
// graph store the summarizer reads.
func newTestSummarizer(t *testing.T, graph func(GraphReader) GraphReader) testSummarizer {
	t.Helper()
	ctx := t.Context()
	b, err := bus.New(bustest.Connect(t, bustest.StartServer(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := pipeline.Provision(ctx, b, pipeline.DefaultTopology()); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	g, err := boltgraph.Open(filepath.Join(dir, "graph.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	v, err := embedded.Open(filepath.Join(dir, "vectors"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = v.Close() })
	var reader GraphReader = g
	if graph != nil {
		reader = graph(g)
	}
	s, err := New(DefaultConfig(), Deps{Bus: b, Graph: reader, Vectors: v, Embedder: hashembed.New(64), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s.dim = 64
	if s.state, err = b.KV(ctx, schema.StateBucket); err != nil {
		t.Fatal(err)
	}
	mention := func(k string) graphstore.EntityMention {
		return graphstore.EntityMention{Key: k, Name: k, Type: "CONCEPT", Description: "about " + k}
	}
	if err := g.Merge(ctx, "demo", []graphstore.ChunkExtraction{{ChunkID: "k1", DocumentID: "d1",
		Entities:  []graphstore.EntityMention{mention("alpha"), mention("beta")},
		Relations: []graphstore.RelationMention{{SourceKey: "alpha", TargetKey: "beta", Type: "R", Description: "alpha and beta", Strength: 1}}}}); err != nil {
		t.Fatal(err)
	}
	if err := g.ReplaceCommunities(ctx, "demo", []graphstore.Community{{ID: "c0-x", Level: 0, Members: []string{"alpha", "beta"}}}); err != nil {
		t.Fatal(err)
	}
	return testSummarizer{s: s, b: b, g: g, v: v}
}

func communityMsg(t *testing.T, id, run string) *bus.Message {
	t.Helper()
	data, err := events.Encode(&events.Community{Schema: events.SchemaCommunity, Corpus: "demo", ID: id, Level: 0, MemberCount: 2, Run: run})
	if err != nil {
		t.Fatal(err)
	}
	return &bus.Message{Subject: events.Subject(events.KindCommunities, "demo"), Data: data, Deliveries: 1}
}

func (ts testSummarizer) summaries(t *testing.T) []events.Summary {
	t.Helper()
	var out []events.Summary
	for _, data := range bustest.Messages(t, ts.b, pipeline.StreamName(events.KindSummaries), events.Subject(events.KindSummaries, "demo")) {
		var ev events.Summary
		if err := events.Decode(data, &ev); err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

func (ts testSummarizer) reports(t *testing.T) []string {
	t.Helper()
	ids, _, err := ts.v.List(t.Context(), schema.Collection("demo", schema.Communities), "", 100)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// A community whose report was deleted (it was replaced) and that comes back in a later
// run gets a new report and a new summary event: every report written is announced. The
// summary's message id carries the run, as the community event's does.
func TestReportOfAReturningCommunityIsAnnounced(t *testing.T) {
	ctx := t.Context()
	ts := newTestSummarizer(t, nil)
	if err := ts.s.handleCommunity(ctx, "demo", communityMsg(t, "c0-x", "run1")); err != nil {
		t.Fatal(err)
	}
	// The grapher replaced c0-x and deleted its report; a later run brings it back.
	if err := ts.v.Delete(ctx, schema.Collection("demo", schema.Communities), []string{"c0-x"}); err != nil {
		t.Fatal(err)
	}
	if err := ts.s.handleCommunity(ctx, "demo", communityMsg(t, "c0-x", "run3")); err != nil {
		t.Fatal(err)
	}
	sums := ts.summaries(t)
	if len(sums) != 2 {
		t.Fatalf("%d summary events for two reports written: %+v", len(sums), sums)
	}
	if sums[1].Run != "run3" {
		t.Errorf("the second summary names run %q, want run3", sums[1].Run)
	}
}

// A community event handled again after its report was written (a redelivery after a
// crash between the report and its summary event, or the same community announced by two
// runs) writes no second report and leaves exactly one summary event.
func TestCommunityHandledTwiceKeepsOneReportAndOneSummary(t *testing.T) {
	ctx := t.Context()
	ts := newTestSummarizer(t, nil)
	// The report as a crash would leave it: written, not announced.
	rec := vectorstore.Record{ID: "c0-x", Vector: make([]float32, 64), Text: "an earlier report", Attrs: map[string]string{
		schema.ReportLevel: "0", schema.ReportTitle: "Earlier", schema.ReportRating: "5.0", schema.ReportMethod: "extractive/v1", schema.ReportRun: "run1"}}
	rec.Vector[0] = 1
	coll := schema.Collection("demo", schema.Communities)
	if err := ts.v.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: coll, Dim: 64}); err != nil {
		t.Fatal(err)
	}
	if err := ts.v.Upsert(ctx, coll, []vectorstore.Record{rec}); err != nil {
		t.Fatal(err)
	}
	for _, run := range []string{"run1", "run2", "run1"} {
		if err := ts.s.handleCommunity(ctx, "demo", communityMsg(t, "c0-x", run)); err != nil {
			t.Fatal(err)
		}
	}
	sums := ts.summaries(t)
	if len(sums) != 1 || sums[0].Run != "run1" || sums[0].Title != "Earlier" {
		t.Fatalf("summary events %+v, want one announcing the run1 report", sums)
	}
	recs, err := ts.v.Get(ctx, coll, []string{"c0-x"})
	if err != nil || len(recs) != 1 || recs[0].Text != "an earlier report" {
		t.Fatalf("report rewritten: %+v %v", recs, err)
	}
}

// replacingGraph lets a detection run replace every community between the summarizer's
// read of a community and its write of the report.
type replacingGraph struct {
	GraphReader
	once    sync.Once
	replace func()
}

func (r *replacingGraph) RelationshipsAmong(ctx context.Context, corpus string, keys []string, opts ...graphstore.ReadOption) ([]graphstore.Relationship, error) {
	rels, err := r.GraphReader.RelationshipsAmong(ctx, corpus, keys, opts...)
	r.once.Do(r.replace)
	return rels, err
}

// A report written for a community that a detection run replaced while the report was
// being written is deleted again, and not announced: the grapher's clean-up of stale
// reports may have run before it was written.
func TestReportOfACommunityReplacedMeanwhileIsNotKept(t *testing.T) {
	ctx := t.Context()
	var g *boltgraph.Store
	rg := &replacingGraph{}
	rg.replace = func() {
		if err := g.ReplaceCommunities(context.WithoutCancel(ctx), "demo", []graphstore.Community{{ID: "c0-other", Level: 0, Members: []string{"alpha", "beta"}}}); err != nil {
			t.Error(err)
		}
	}
	ts := newTestSummarizer(t, func(inner GraphReader) GraphReader { rg.GraphReader = inner; return rg })
	g = ts.g
	if err := ts.s.handleCommunity(ctx, "demo", communityMsg(t, "c0-x", "run1")); err != nil {
		t.Fatal(err)
	}
	if got := ts.reports(t); len(got) != 0 {
		t.Errorf("reports %v of communities that no longer exist", got)
	}
	if sums := ts.summaries(t); len(sums) != 0 {
		t.Errorf("summary events %+v for a report that is not kept", sums)
	}
}

// Two events of one community handled at once (two detection runs announced it before
// its report was written) ask the model once: the second finds the report written.
func TestConcurrentEventsOfOneCommunityAskTheModelOnce(t *testing.T) {
	srv := llmtest.NewServer(llmtest.WithLatency(200*time.Millisecond),
		llmtest.WithChatReply(func(openai.ChatCompletionRequest) string { return modelReport }))
	t.Cleanup(srv.Close)
	ts := newTestSummarizer(t, nil)
	withModel(t, ts, srv, 5*time.Second)
	errs := make(chan error, 2)
	for _, run := range []string{"run1", "run2"} {
		msg := communityMsg(t, "c0-x", run)
		go func() { errs <- ts.s.handleCommunity(t.Context(), "demo", msg) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.ChatCalls(); n != 1 {
		t.Fatalf("%d model calls for one community, want 1", n)
	}
	if sums := ts.summaries(t); len(sums) != 1 {
		t.Fatalf("%d summary events, want 1", len(sums))
	}
}
