//go:build integration

package neo4jgraph

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

// cyToEvidence turns the evidence lists back into the EVIDENCE relationships
// of ADR 0029, which is how that layout stored them.
const cyToEvidence = `
MATCH (s:Entity {corpus: $corpus})-[x:RELATED]->(t:Entity)
UNWIND range(0, size(x.chunks) - 1) AS i
CREATE (s)-[:EVIDENCE {pk: x.pk, chunk: x.chunks[i], strength: x.ws[i]}]->(t)
WITH DISTINCT x
REMOVE x.chunks, x.ws`

// TestMigrateEvidence writes a graph, rewinds it to the layout of ADR 0029,
// checks that Merge refuses it, and that Open migrates it back to the same
// relationships, chunk ids and weights.
func TestMigrateEvidence(t *testing.T) {
	ctx := context.Background()
	s := openEmpty(t, "GRAPHRAG_TEST_NEO4J_URI")
	r := rand.New(rand.NewSource(3))
	zipf := rand.NewZipf(r, 1.1, 1, 300)
	batch := benchChunks(r, zipf, 0, 200)
	for i := range batch {
		if i%3 == 0 {
			batch[i].Relations[0].Strength = 0.7 // fractional: re-summed in chunk id order
		}
	}
	if err := s.Merge(ctx, "old", batch); err != nil {
		t.Fatal(err)
	}
	want := allRelationships(t, s, "old")
	if err := s.s.write(ctx, "rewinding", func(tx neo4j.ManagedTransaction) error {
		_, err := run(ctx, tx, cyToEvidence, map[string]any{"corpus": "old"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	changed := benchChunks(rand.New(rand.NewSource(4)), zipf, 0, 1)
	changed[0].Relations = batch[1].Relations // pairs that exist
	if err := s.Merge(ctx, "old", changed); !errors.Is(err, graphstore.ErrInvalid) {
		t.Fatalf("Merge into an unmigrated graph = %v, want ErrInvalid", err)
	}

	defer func(n int) { migratePairsPerTx = n }(migratePairsPerTx)
	migratePairsPerTx = 7 // several transactions
	m, err := Open(ctx, serverURI(t, "GRAPHRAG_TEST_NEO4J_URI"), authOptions()...)
	if err != nil {
		t.Fatalf("Open (migrating): %v", err)
	}
	defer m.Close()
	if got := allRelationships(t, m, "old"); !reflect.DeepEqual(got, want) {
		t.Errorf("after migration:\n got %v\nwant %v", got, want)
	}
	err = m.s.read(ctx, "counting EVIDENCE", func(tx neo4j.ManagedTransaction) error {
		recs, err := run(ctx, tx, cyHasEvidence, nil)
		if len(recs) > 0 {
			t.Error("EVIDENCE relationships left after the migration")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Merge(ctx, "old", changed); err != nil {
		t.Fatalf("Merge after migration: %v", err)
	}
}

func allRelationships(t *testing.T, s *Store, corpus string) []graphstore.Relationship {
	t.Helper()
	snap, err := s.Snapshot(t.Context(), corpus)
	if err != nil {
		t.Fatal(err)
	}
	rels, err := s.RelationshipsAmong(t.Context(), corpus, snap.Keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(rels) == 0 {
		t.Fatal("no relationships")
	}
	return rels
}

// TestMigrateTypeOther rewinds a graph to what the earlier Type rule stored (OTHER
// outvoting the types of fewer chunks) and checks that Open re-derives the types,
// leaves an entity only ever typed OTHER alone, and marks the work done.
func TestMigrateTypeOther(t *testing.T) {
	ctx := context.Background()
	s := openEmpty(t, "GRAPHRAG_TEST_NEO4J_URI")
	other := graphstore.TypeOther
	var batch []graphstore.ChunkExtraction
	for i, typ := range []string{"PERSON", "PERSON", other, other, other} {
		rtyp := map[string]string{"PERSON": "KNOWS", other: other}[typ]
		batch = append(batch, graphstore.ChunkExtraction{ChunkID: fmt.Sprintf("c%d", i),
			Entities: []graphstore.EntityMention{{Key: "x", Type: typ}, {Key: "y", Type: other}, {Key: "z", Type: typ}},
			Relations: []graphstore.RelationMention{{SourceKey: "x", TargetKey: "y", Type: rtyp, Strength: 1},
				{SourceKey: "y", TargetKey: "z", Type: other, Strength: 1}}})
	}
	if err := s.Merge(ctx, "old", batch); err != nil {
		t.Fatal(err)
	}
	wantEnts, err := s.Entities(ctx, "old", []string{"x", "y", "z"})
	if err != nil {
		t.Fatal(err)
	}
	wantRels := allRelationships(t, s, "old")
	if wantEnts[0].Type != "PERSON" || wantEnts[1].Type != other || wantRels[0].Type != "KNOWS" {
		t.Fatalf("types before the rewind: %q, %q, %q", wantEnts[0].Type, wantEnts[1].Type, wantRels[0].Type)
	}
	if err := s.s.write(ctx, "rewinding", func(tx neo4j.ManagedTransaction) error {
		_, err := run(ctx, tx, `
MATCH (e:Entity {corpus: 'old'}) WHERE e.key IN ['x', 'z'] SET e.type = $other
WITH count(*) AS n
MATCH (:Entity {corpus: 'old', key: 'x'})-[x:RELATED]->() SET x.type = $other
WITH count(*) AS n
MATCH (l:Layout) DELETE l`, map[string]any{"other": other})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if e, _ := s.Entity(ctx, "old", "x"); e.Type != other {
		t.Fatalf("rewound x.Type = %q, want %q", e.Type, other)
	}

	defer func(n int) { retypePerTx = n }(retypePerTx)
	retypePerTx = 1 // several transactions
	m, err := Open(ctx, serverURI(t, "GRAPHRAG_TEST_NEO4J_URI"), authOptions()...)
	if err != nil {
		t.Fatalf("Open (migrating): %v", err)
	}
	defer m.Close()
	if got, err := m.Entities(ctx, "old", []string{"x", "y", "z"}); err != nil || !reflect.DeepEqual(got, wantEnts) {
		t.Errorf("entities after migration = %v, %v\nwant %v", got, err, wantEnts)
	}
	if got := allRelationships(t, m, "old"); !reflect.DeepEqual(got, wantRels) {
		t.Errorf("after migration:\n got %v\nwant %v", got, wantRels)
	}
	if err := m.s.read(ctx, "reading the mark", func(tx neo4j.ManagedTransaction) error {
		recs, err := run(ctx, tx, cyTypeOtherDone, nil)
		if err == nil && (len(recs) != 1 || recs[0].Values[0] != true) {
			t.Error("migration not marked done")
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
