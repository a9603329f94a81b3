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
