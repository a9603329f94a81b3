package grapher

import (
	"errors"
	"slices"
	"testing"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/curation"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
)

// TestCurationFollowsTheExtractions applies a merge through the grapher's handler and
// checks that it holds when a chunk is merged again, that a chunk's original is kept
// only while the curation changes it, and that removing the last evidence of the
// entity merged into makes the merge inactive and the merged entity its own again.
func TestCurationFollowsTheExtractions(t *testing.T) {
	ctx := t.Context()
	// The service's own defaults (a lease, communities of any size), not the tests'.
	tg := newTestGrapherConfigured(t, nil, func(c *Config) { *c = DefaultConfig() })
	s, b, g := tg.s, tg.b, tg.g

	handle := func(e events.Event) {
		t.Helper()
		data, err := events.Encode(e)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.handleExtraction(ctx, "books", &bus.Message{Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	extraction := func(chunk, doc string, ents []string, rel [2]string) *events.Extraction {
		x := &events.Extraction{Schema: events.SchemaExtraction, Corpus: "books", ChunkID: chunk, DocumentID: doc, Method: "offline/v1",
			Relationships: []events.ExtractedRelationship{{Source: rel[0], Target: rel[1], Type: "KNOWS", Strength: 1}}}
		for _, e := range ents {
			x.Entities = append(x.Entities, events.ExtractedEntity{Name: e, Type: "PERSON"})
		}
		return x
	}
	c1 := extraction("c1", "d1", []string{"Holmes", "Watson"}, [2]string{"Holmes", "Watson"})
	c2 := extraction("c2", "d2", []string{"Sherlock Holmes", "Mycroft"}, [2]string{"Sherlock Holmes", "Mycroft"})
	handle(c1)
	handle(c2)
	curate := func(op curation.Op) curation.Entry {
		t.Helper()
		e, err := curation.Append(ctx, s.kv, "books", op, nil)
		if err != nil {
			t.Fatal(err)
		}
		handle(&events.Curation{Schema: events.SchemaCuration, Corpus: "books", OpID: e.ID, Action: string(e.Action)})
		return e
	}
	entity := func(key string) (graphstore.Entity, bool) {
		t.Helper()
		e, err := g.Entity(ctx, "books", key)
		if errors.Is(err, graphstore.ErrNotFound) {
			return e, false
		}
		if err != nil {
			t.Fatal(err)
		}
		return e, true
	}
	originals := func() []string {
		t.Helper()
		o, err := curation.Originals(ctx, s.kv, "books")
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for id := range o {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return ids
	}
	merged := func(when string) {
		t.Helper()
		if _, ok := entity("holmes"); ok {
			t.Errorf("%s: holmes is still an entity", when)
		}
		e, ok := entity("sherlock holmes")
		if !ok || e.Name != "Sherlock Holmes" || !slices.Equal(e.ChunkIDs, []string{"c1", "c2"}) {
			t.Errorf("%s: sherlock holmes = %+v, want named so, in c1 and c2", when, e)
		}
		rels, err := g.RelationshipsOf(ctx, "books", []string{"watson"}, 0)
		if err != nil || len(rels) != 1 || rels[0].SourceKey != "sherlock holmes" {
			t.Errorf("%s: Watson's relationships %+v (%v), want one from sherlock holmes", when, rels, err)
		}
		if o := originals(); !slices.Equal(o, []string{"c1"}) {
			t.Errorf("%s: originals kept for %q, want c1 alone", when, o)
		}
	}

	merge := curate(curation.Op{Action: curation.Merge, Entities: []string{"Holmes"}, Into: "Sherlock Holmes"})
	merged("after the merge")
	handle(c1) // a redelivery, or the chunk extracted again
	merged("after merging c1 again")
	handle(&events.Curation{Schema: events.SchemaCuration, Corpus: "books", OpID: merge.ID, Action: "merge"})
	merged("after the curation event again")
	if err := s.Detect(ctx, "books"); err != nil {
		t.Fatal(err)
	}
	if st, err := curation.LoadStatus(ctx, s.kv, "books"); err != nil || !st[merge.ID].Active {
		t.Errorf("status %+v (%v), want the merge active", st, err)
	}

	// The only chunk naming Sherlock Holmes goes: the merge acts on nothing.
	handle(&events.Extraction{Schema: events.SchemaExtraction, Corpus: "books", ChunkID: "c2", DocumentID: "d2", Method: events.MethodRemoved})
	if err := s.Detect(ctx, "books"); err != nil {
		t.Fatal(err)
	}
	st, err := curation.LoadStatus(ctx, s.kv, "books")
	if err != nil || st[merge.ID].Active || st[merge.ID].Reason == "" {
		t.Errorf("status %+v (%v), want the merge inactive with a reason", st, err)
	}
	if e, ok := entity("holmes"); !ok || e.Name != "Holmes" {
		t.Errorf("with the merge inactive, holmes = %+v, %v", e, ok)
	}
	if _, ok := entity("sherlock holmes"); ok {
		t.Error("sherlock holmes outlived its last chunk")
	}
	if o := originals(); len(o) != 0 {
		t.Errorf("originals kept for %q, want none (nothing curated)", o)
	}

	// It comes back with its evidence, and an undo reverts it.
	handle(c2)
	if err := s.Detect(ctx, "books"); err != nil {
		t.Fatal(err)
	}
	merged("after c2 came back")
	u, err := (&curation.Curator{KV: s.kv, Bus: b, Graph: g}).Undo(ctx, "books", merge.ID)
	if err != nil {
		t.Fatal(err)
	}
	handle(&events.Curation{Schema: events.SchemaCuration, Corpus: "books", OpID: u.ID, Action: string(u.Action)})
	if e, ok := entity("holmes"); !ok || !slices.Equal(e.ChunkIDs, []string{"c1"}) {
		t.Errorf("after undo, holmes = %+v, %v", e, ok)
	}
	if o := originals(); len(o) != 0 {
		t.Errorf("after undo, originals kept for %q", o)
	}
}
