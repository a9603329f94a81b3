package summarizer

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
)

// A parent community's report waits (by redelivery) for its sub-communities' reports,
// then is written with them; past the last waiting delivery it is written regardless.
func TestParentReportWaitsForSubReports(t *testing.T) {
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
	reads := &countingGraph{GraphReader: g}
	s, err := New(DefaultConfig(), Deps{Bus: b, Graph: reads, Vectors: v, Embedder: hashembed.New(64), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
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
	rel := func(a, b string) graphstore.RelationMention {
		return graphstore.RelationMention{SourceKey: a, TargetKey: b, Type: "RELATED_TO", Description: a + " and " + b, Strength: 1}
	}
	if err := g.Merge(ctx, "demo", []graphstore.ChunkExtraction{
		{ChunkID: "k1", DocumentID: "d1", Entities: []graphstore.EntityMention{mention("alpha"), mention("beta")}, Relations: []graphstore.RelationMention{rel("alpha", "beta")}},
		{ChunkID: "k2", DocumentID: "d1", Entities: []graphstore.EntityMention{mention("gamma"), mention("delta")}, Relations: []graphstore.RelationMention{rel("gamma", "delta"), rel("beta", "gamma")}},
	}); err != nil {
		t.Fatal(err)
	}
	if err := g.ReplaceCommunities(ctx, "demo", []graphstore.Community{
		{ID: "c0-x", Level: 0, ParentID: "c1-z", Members: []string{"alpha", "beta"}},
		{ID: "c0-y", Level: 0, ParentID: "c1-z", Members: []string{"delta", "gamma"}},
		{ID: "c1-z", Level: 1, Members: []string{"alpha", "beta", "delta", "gamma"}},
	}); err != nil {
		t.Fatal(err)
	}
	msg := func(id string, level, deliveries int) *bus.Message {
		data, err := events.Encode(&events.Community{Schema: events.SchemaCommunity, Corpus: "demo", ID: id, Level: level, MemberCount: 2, Run: "r1"})
		if err != nil {
			t.Fatal(err)
		}
		return &bus.Message{Subject: events.Subject(events.KindCommunities, "demo"), Data: data, Deliveries: uint64(deliveries)}
	}
	reports := schema.Collection("demo", schema.Communities)
	written := func(id string) bool {
		recs, err := v.Get(ctx, reports, []string{id})
		return err == nil && len(recs) == 1
	}

	if err := s.handleCommunity(ctx, "demo", msg("c1-z", 1, 1)); err == nil || written("c1-z") {
		t.Fatalf("parent handled before its sub-reports: err %v, written %v", err, written("c1-z"))
	}
	// A delivery that waits reads none of the members: at a high level they are much of
	// the graph.
	if reads.entities != 0 || reads.among != 0 {
		t.Fatalf("a waiting delivery read members %d times and relationships %d times, want 0", reads.entities, reads.among)
	}
	if err := s.handleCommunity(ctx, "demo", msg("c0-x", 0, 1)); err != nil {
		t.Fatal(err)
	}
	// One of two sub-reports: still waiting on the second delivery, written on the third.
	if err := s.handleCommunity(ctx, "demo", msg("c1-z", 1, subReportDeliveries-1)); err == nil {
		t.Fatal("parent written with a sub-report missing before its last waiting delivery")
	}
	if err := s.handleCommunity(ctx, "demo", msg("c1-z", 1, subReportDeliveries)); err != nil || !written("c1-z") {
		t.Fatalf("parent not written at delivery %d: %v", subReportDeliveries, err)
	}
	if err := s.handleCommunity(ctx, "demo", msg("c0-y", 0, 1)); err != nil {
		t.Fatal(err)
	}
	cc, err := s.Context(ctx, "demo", graphstore.Community{ID: "c1-z", Level: 1, ChildIDs: []string{"c0-x", "c0-y"}, Members: []string{"alpha", "beta", "delta", "gamma"}})
	if err != nil || len(cc.SubReports) != 2 {
		t.Fatalf("sub-reports %d (%v), want 2", len(cc.SubReports), err)
	}
	if err := s.handleCommunity(ctx, "demo", msg("c1-z", 1, 1)); err != nil {
		t.Fatalf("parent with every sub-report waited: %v", err)
	}
	// Reports need no lists (chunk ids, every description): the reads leave them out.
	if reads.entities == 0 || reads.full != 0 {
		t.Fatalf("%d of %d member and relationship reads were not brief", reads.full, reads.entities+reads.among)
	}
}

// countingGraph counts the member and relationship reads the summarizer makes,
// and those of them that were not brief (graphstore.Brief).
type countingGraph struct {
	GraphReader
	entities, among, full int
}

func (c *countingGraph) Entities(ctx context.Context, corpus string, keys []string, opts ...graphstore.ReadOption) ([]graphstore.Entity, error) {
	c.entities++
	if !graphstore.IsBrief(opts) {
		c.full++
	}
	return c.GraphReader.Entities(ctx, corpus, keys, opts...)
}

func (c *countingGraph) RelationshipsAmong(ctx context.Context, corpus string, keys []string, opts ...graphstore.ReadOption) ([]graphstore.Relationship, error) {
	c.among++
	if !graphstore.IsBrief(opts) {
		c.full++
	}
	return c.GraphReader.RelationshipsAmong(ctx, corpus, keys, opts...)
}
