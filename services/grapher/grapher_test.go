package grapher

import (
	"io"
	"log/slog"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
)

func TestToChunkExtraction(t *testing.T) {
	x := &events.Extraction{ChunkID: "c1", DocumentID: "d1", Entities: []events.ExtractedEntity{
		{Name: "The Dopamine System", Type: "SYSTEM"}, {Name: "!!!"}},
		Relationships: []events.ExtractedRelationship{
			{Source: "the dopamine system", Target: "Motivation", Type: "DRIVES", Strength: 0.5},
			{Source: "Dopamine System,", Target: "dopamine system", Strength: 1}, // self loop
			{Source: "...", Target: "Motivation", Strength: 1},                   // empty end
		}}
	ce := ToChunkExtraction(x)
	if len(ce.Entities) != 1 || ce.Entities[0].Key != "dopamine system" || ce.Entities[0].Name != "The Dopamine System" {
		t.Fatalf("entities %+v", ce.Entities)
	}
	if len(ce.Relations) != 1 || ce.Relations[0].SourceKey != "dopamine system" || ce.Relations[0].TargetKey != "motivation" {
		t.Fatalf("relations %+v", ce.Relations)
	}
}

func TestBuildHierarchy(t *testing.T) {
	snap := graphstore.Snapshot{Keys: []string{"a", "b", "c", "d", "e", "f", "g"},
		Edges: []graphstore.Edge{{Source: 0, Target: 1, Weight: 1}, {Source: 1, Target: 2, Weight: 1}, {Source: 3, Target: 4, Weight: 1},
			{Source: 4, Target: 5, Weight: 1}, {Source: 2, Target: 3, Weight: 1}}}
	levels := [][]int{
		{0, 0, 0, 1, 1, 1, 2}, // level 0: {a,b,c} {d,e,f} {g}
		{0, 0, 0, 0, 0, 0, 1}, // level 1: {a..f} {g}
	}
	cs := BuildHierarchy(snap, levels, 3)
	if len(cs) != 3 {
		t.Fatalf("communities %+v (g is below the minimum size at both levels)", cs)
	}
	abc, def, top := cs[0], cs[1], cs[2]
	if abc.Level != 0 || top.Level != 1 || !reflect.DeepEqual(top.Members, []string{"a", "b", "c", "d", "e", "f"}) {
		t.Fatalf("levels/members: %+v", cs)
	}
	if abc.ParentID != top.ID || def.ParentID != top.ID || !reflect.DeepEqual(top.ChildIDs, sortedIDs(abc.ID, def.ID)) {
		t.Fatalf("parent links: %+v", cs)
	}
	if abc.RelationshipCount != 2 || top.RelationshipCount != 5 {
		t.Fatalf("relationship counts: %d, %d", abc.RelationshipCount, top.RelationshipCount)
	}
	// Ids derive from level and membership: the same partition numbered differently
	// gives the same ids.
	again := BuildHierarchy(snap, [][]int{{5, 5, 5, 3, 3, 3, 9}, {7, 7, 7, 7, 7, 7, 1}}, 3)
	if !reflect.DeepEqual(ids(cs), ids(again)) {
		t.Fatalf("ids depend on numbering: %v vs %v", ids(cs), ids(again))
	}
	if CommunityID(0, abc.Members) == CommunityID(1, abc.Members) {
		t.Fatal("the level is not part of the id")
	}
}

func sortedIDs(a, b string) []string {
	if a > b {
		a, b = b, a
	}
	return []string{a, b}
}

func ids(cs []graphstore.Community) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

// Replaying an extraction changes nothing; detection publishes each new community once
// and, after a report exists, never again.
func TestReplayAndIncrementalDetection(t *testing.T) {
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
	s, err := New(cfg, Deps{Bus: b, Graph: g, Vectors: vs, Embedder: hashembed.New(32), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(t.Context()) })

	x := &events.Extraction{Schema: events.SchemaExtraction, Corpus: "demo", ChunkID: "c1", DocumentID: "d1", Method: "offline/v1",
		Entities:      []events.ExtractedEntity{{Name: "Ada", Type: "PERSON"}, {Name: "Bay", Type: "PLACE"}, {Name: "Storm", Type: "EVENT"}},
		Relationships: []events.ExtractedRelationship{{Source: "Ada", Target: "Bay", Strength: 1}, {Source: "Bay", Target: "Storm", Strength: 1}}}
	data, _ := events.Encode(x)
	msg := &bus.Message{Data: data}
	if err := s.handleExtraction(ctx, "demo", msg); err != nil {
		t.Fatal(err)
	}
	first, _ := g.Entity(ctx, "demo", "ada")
	if err := s.handleExtraction(ctx, "demo", msg); err != nil {
		t.Fatal(err)
	}
	again, _ := g.Entity(ctx, "demo", "ada")
	if !reflect.DeepEqual(first, again) || again.MentionCount != 1 {
		t.Fatalf("replay changed the entity: %+v -> %+v", first, again)
	}
	st, err := pipeline.LoadGraphState(ctx, s.kv, "demo")
	if err != nil || !st.Dirty {
		t.Fatalf("state after merges: %+v %v", st, err)
	}

	if err := s.Detect(ctx, "demo"); err != nil {
		t.Fatal(err)
	}
	st, _ = pipeline.LoadGraphState(ctx, s.kv, "demo")
	if st.Dirty || st.Published == 0 {
		t.Fatalf("state after detection: %+v", st)
	}
	// Entities are embedded for query-time linking.
	if n, err := vs.Count(ctx, schema.Collection("demo", schema.Entities)); err != nil || n != 3 {
		t.Fatalf("entity records: %d %v", n, err)
	}
	// Pretend the summarizer wrote every report: the next run publishes nothing.
	cs, _ := g.Communities(ctx, "demo", -1)
	for _, c := range cs {
		if err := vs.Upsert(ctx, schema.Collection("demo", schema.Communities), []vectorstore.Record{{ID: c.ID, Vector: []float32{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, Text: "r"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Detect(ctx, "demo"); err != nil {
		t.Fatal(err)
	}
	st, _ = pipeline.LoadGraphState(ctx, s.kv, "demo")
	if st.Published != 0 {
		t.Fatalf("unchanged communities republished: %+v", st)
	}
}
