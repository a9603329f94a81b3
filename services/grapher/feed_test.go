package grapher

import (
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/schema"
)

// TestMergedEntitiesEmbeddedBeforeDetection: entities are embedded as they are merged,
// with no detection run (the debounce never expires here), and with the text a run
// would embed, so the run that follows has nothing left to embed.
func TestMergedEntitiesEmbeddedBeforeDetection(t *testing.T) {
	tg := newTestGrapherConfigured(t, nil, func(c *Config) { c.Debounce = time.Hour; c.MaxChanges = 1 << 30 })
	ctx := t.Context()
	x := &events.Extraction{Schema: events.SchemaExtraction, Corpus: "demo", ChunkID: "c1", DocumentID: "d1", Method: "offline/v1",
		Entities:      []events.ExtractedEntity{{Name: "Ada", Type: "PERSON", Description: "Ada sails."}, {Name: "Bay", Type: "PLACE"}, {Name: "Storm", Type: "EVENT"}},
		Relationships: []events.ExtractedRelationship{{Source: "Ada", Target: "Bay", Strength: 1}, {Source: "Bay", Target: "Storm", Strength: 1}}}
	data, err := events.Encode(x)
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.s.handleExtraction(ctx, "demo", &bus.Message{Data: data}); err != nil {
		t.Fatal(err)
	}
	coll := schema.Collection("demo", schema.Entities)
	deadline := time.Now().Add(20 * time.Second) // a bound on waiting, not a speed claim
	for {
		n, _ := tg.vs.Count(ctx, coll)
		if n == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d entity records with no detection run, want 3: merged entities are not embedded", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	keys := []string{"ada", "bay", "storm"}
	ents, err := tg.g.Entities(ctx, "demo", keys, graphstore.Brief)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := tg.vs.Get(ctx, coll, keys)
	if err != nil || len(recs) != 3 {
		t.Fatalf("records %v, %v", recs, err)
	}
	want := map[string]string{}
	for _, e := range ents {
		want[e.Key] = EntityText(e)
	}
	for _, r := range recs {
		if r.Text != want[r.ID] {
			t.Errorf("record %s: text %q, want the detection's %q", r.ID, r.Text, want[r.ID])
		}
	}
	n, err := tg.s.embedEntities(ctx, "demo", keys)
	if err != nil || n != 0 {
		t.Errorf("a detection run after the feed embedded %d entities (%v), want 0", n, err)
	}
}

func TestEntityFeedTake(t *testing.T) {
	f := newEntityFeed()
	f.add("a", []graphstore.ChunkExtraction{{Entities: []graphstore.EntityMention{{Key: "z"}, {Key: "x"}, {Key: "y"}}}})
	f.add("a", []graphstore.ChunkExtraction{{Entities: []graphstore.EntityMention{{Key: "x"}}}})
	corpus, keys := f.take(2)
	if corpus != "a" || len(keys) != 2 || keys[0] > keys[1] {
		t.Fatalf("take(2) = %s %v, want two sorted keys of a", corpus, keys)
	}
	if _, rest := f.take(10); len(rest) != 1 {
		t.Fatalf("second take: %v, want the third key", rest)
	}
	if c, none := f.take(10); c != "" || none != nil {
		t.Fatalf("empty feed gave %s %v", c, none)
	}
	f.add("b", []graphstore.ChunkExtraction{{Entities: []graphstore.EntityMention{{Key: "k"}}}})
	f.drop("b")
	if c, none := f.take(10); c != "" || none != nil {
		t.Fatalf("dropped corpus gave %s %v", c, none)
	}
}
