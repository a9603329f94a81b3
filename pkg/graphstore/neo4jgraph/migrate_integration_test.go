//go:build integration

package neo4jgraph

import (
	"context"
	"encoding/json"
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
	if err := s.write(ctx, "rewinding", func(tx neo4j.ManagedTransaction) error {
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
	err = m.read(ctx, "counting EVIDENCE", func(tx neo4j.ManagedTransaction) error {
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

// cyStatesBefore0041 and cyRewindStates put states back in the form of
// earlier layouts: one JSON object with the counts inside, no aggc.
const (
	cyStatesBefore0041 = `
MATCH (e:Entity {corpus: $corpus}) RETURN 'e' AS kind, elementId(e) AS id, e.agg AS agg, e.aggc AS aggc
UNION ALL
MATCH (:Entity {corpus: $corpus})-[x:RELATED]->() RETURN 'x' AS kind, elementId(x) AS id, x.agg AS agg, x.aggc AS aggc`
	cyRewindStates = `
UNWIND $rows AS r
OPTIONAL MATCH (e) WHERE r.kind = 'e' AND elementId(e) = r.id
OPTIONAL MATCH ()-[x]->() WHERE r.kind = 'x' AND elementId(x) = r.id
FOREACH (n IN CASE WHEN e IS NULL THEN [] ELSE [e] END | SET n.agg = r.agg REMOVE n.aggc)
FOREACH (n IN CASE WHEN x IS NULL THEN [] ELSE [x] END | SET n.agg = r.agg REMOVE n.aggc)`
)

// TestStatesBefore0041 rewinds the counter states of a graph to the single
// JSON object of earlier layouts and checks that Merge still reads them: a
// second batch merged into it gives the same graph as into an unchanged copy.
func TestStatesBefore0041(t *testing.T) {
	ctx := context.Background()
	s := openEmpty(t, "GRAPHRAG_TEST_NEO4J_URI")
	r := rand.New(rand.NewSource(5))
	zipf := rand.NewZipf(r, 1.1, 1, 300)
	first, second := benchChunks(r, zipf, 0, 150), benchChunks(r, zipf, 100, 150) // 50 replaced
	for i := range second {
		if i%4 == 0 {
			second[i].Relations[0].Strength = 0.3
		}
	}
	for _, corpus := range []string{"new", "old"} {
		if err := s.Merge(ctx, corpus, first); err != nil {
			t.Fatal(err)
		}
	}
	rewindStates(t, s, "old")
	for _, corpus := range []string{"new", "old"} {
		if err := s.Merge(ctx, corpus, second); err != nil {
			t.Fatalf("merging into %s: %v", corpus, err)
		}
	}
	if got, want := allRelationships(t, s, "old"), allRelationships(t, s, "new"); !reflect.DeepEqual(got, want) {
		t.Errorf("relationships after a merge into old states:\n got %v\nwant %v", got, want)
	}
	keys := make([]string, 0, 300)
	for i := range 301 {
		keys = append(keys, fmt.Sprintf("entity-%05d", i))
	}
	got, err := s.Entities(ctx, "old", keys)
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.Entities(ctx, "new", keys)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("entities after a merge into old states differ:\n got %v\nwant %v", got, want)
	}
}

// rewindStates rewrites every state of corpus as one JSON object.
func rewindStates(t *testing.T, s *Store, corpus string) {
	t.Helper()
	ctx := t.Context()
	err := s.write(ctx, "rewinding states", func(tx neo4j.ManagedTransaction) error {
		recs, err := run(ctx, tx, cyStatesBefore0041, map[string]any{"corpus": corpus})
		if err != nil {
			return err
		}
		rows := make([]any, 0, len(recs))
		for _, rec := range recs {
			var st any = new(entState)
			if rec.Values[0] == "e" {
				err = st.(*entState).decode(asString(rec.Values[2]), rec.Values[3])
			} else {
				st = new(relState)
				err = st.(*relState).decode(asString(rec.Values[2]), rec.Values[3])
			}
			if err != nil {
				return err
			}
			b, err := json.Marshal(st)
			if err != nil {
				return err
			}
			rows = append(rows, map[string]any{"kind": rec.Values[0], "id": rec.Values[1], "agg": string(b)})
		}
		_, err = runBatched(ctx, s, tx, cyRewindStates, nil, rows)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
