//go:build integration

package neo4jgraph

import (
	"context"
	"errors"
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
