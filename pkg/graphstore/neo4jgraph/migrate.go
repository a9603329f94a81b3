package neo4jgraph

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

// Graphs written before ADR 0036 keep a pair's evidence as EVIDENCE
// relationships, one per chunk. Open moves it into RELATED.chunks and
// RELATED.ws, a batch of pairs per transaction, and deletes the EVIDENCE
// relationships as it goes, so an interrupted migration resumes where it
// stopped. A RELATED without chunks afterwards makes Merge fail (errOldLayout).
const (
	cyHasEvidence = `MATCH ()-[ev:EVIDENCE]->() RETURN 1 LIMIT 1`

	// SET on a missing RELATED (OPTIONAL MATCH gave null) does nothing, and the
	// EVIDENCE goes anyway, so the loop ends.
	cyMigrateEvidence = `
MATCH ()-[first:EVIDENCE]->()
WITH DISTINCT startNode(first) AS s, endNode(first) AS t LIMIT $limit
MATCH (s)-[ev:EVIDENCE]->(t)
WITH s, t, collect(ev) AS evs
OPTIONAL MATCH (s)-[x:RELATED]->(t)
SET x.chunks = [e IN evs | e.chunk], x.ws = [e IN evs | e.strength]
FOREACH (e IN evs | DELETE e)
RETURN count(*) AS pairs`
)

// migratePairsPerTx bounds a migration transaction: a hub pair brings all its
// EVIDENCE along. Tests lower it.
var migratePairsPerTx = 2000

// migrateEvidence converts EVIDENCE relationships into evidence lists.
func (s *store) migrateEvidence(ctx context.Context) error {
	var found bool
	if err := s.read(ctx, "looking for EVIDENCE relationships", func(tx neo4j.ManagedTransaction) error {
		recs, err := run(ctx, tx, cyHasEvidence, nil)
		found = len(recs) > 0
		return err
	}); err != nil || !found {
		return err
	}
	for {
		var pairs int64
		if err := s.write(ctx, "moving EVIDENCE into RELATED evidence lists", func(tx neo4j.ManagedTransaction) error {
			recs, err := run(ctx, tx, cyMigrateEvidence, map[string]any{"limit": migratePairsPerTx})
			if err != nil {
				return err
			}
			pairs = 0
			if len(recs) > 0 {
				pairs = asInt(recs[0].Values[0])
			}
			return nil
		}); err != nil {
			return fmt.Errorf("migrating to the layout of ADR 0036: %w", err)
		}
		if pairs == 0 {
			return nil
		}
	}
}

// Graphs written before graphstore.TypeOther was set aside (OTHER counted like any
// other type) may hold OTHER in Entity.type or RELATED.type where another type now
// wins. The counts in agg are what the rule reads, so Open re-derives the type of
// every entity and relationship typed OTHER, a page per transaction, and then
// marks the database done on a (:Layout) node so later Opens scan nothing. Only
// OTHER can be stale: a type that won among all types still wins among the others.
const (
	cyTypeOtherDone = `OPTIONAL MATCH (l:Layout {name: 'graphstore'}) RETURN l.typeOther IS NOT NULL`
	cyTypeOtherMark = `MERGE (l:Layout {name: 'graphstore'}) SET l.typeOther = 1`

	cyOtherEntities = `
MATCH (e:Entity) WHERE e.type = $other AND elementId(e) > $after
WITH e ORDER BY elementId(e) LIMIT $limit
RETURN elementId(e) AS id, e.agg AS agg`
	cyOtherRelations = `
MATCH ()-[x:RELATED]->() WHERE x.type = $other AND elementId(x) > $after
WITH x ORDER BY elementId(x) LIMIT $limit
RETURN elementId(x) AS id, x.agg AS agg`
	cyRetypeEntities = `
UNWIND $rows AS r
MATCH (e) WHERE elementId(e) = r.id
SET e.type = r.type`
	cyRetypeRelations = `
UNWIND $rows AS r
MATCH ()-[x]->() WHERE elementId(x) = r.id
SET x.type = r.type`
)

// retypePerTx bounds a transaction of migrateTypeOther. Tests lower it.
var retypePerTx = 2000

// migrateTypeOther re-derives the stored types that may be OTHER only by the
// earlier rule; see cyTypeOtherDone.
func (s *store) migrateTypeOther(ctx context.Context) error {
	var done bool
	if err := s.read(ctx, "checking the type rule of the stored graph", func(tx neo4j.ManagedTransaction) error {
		recs, err := run(ctx, tx, cyTypeOtherDone, nil)
		done = len(recs) > 0 && recs[0].Values[0] == true
		return err
	}); err != nil || done {
		return err
	}
	for _, q := range []struct{ what, page, retype string }{
		{"entities", cyOtherEntities, cyRetypeEntities},
		{"relationships", cyOtherRelations, cyRetypeRelations},
	} {
		for after := ""; ; {
			var last string
			if err := s.write(ctx, "re-deriving the types of "+q.what+" typed OTHER", func(tx neo4j.ManagedTransaction) error {
				recs, err := run(ctx, tx, q.page, map[string]any{"other": graphstore.TypeOther, "after": after, "limit": retypePerTx})
				if err != nil {
					return err
				}
				last = ""
				var rows []any
				for _, r := range recs {
					id := asString(r.Values[0])
					last = id
					// entState and relState keep their type counts under the same
					// JSON name, "t".
					var st struct {
						Types tally `json:"t"`
					}
					agg, ok := r.Values[1].(string)
					if !ok {
						continue // a layout before ADR 0029, which Merge refuses
					}
					if err := json.Unmarshal([]byte(agg), &st); err != nil {
						return fmt.Errorf("decoding the state of %s: %w", id, err)
					}
					if t := graphstore.MostFrequentType(st.Types); t != graphstore.TypeOther {
						rows = append(rows, map[string]any{"id": id, "type": optional(t)})
					}
				}
				if len(rows) > 0 {
					_, err = run(ctx, tx, q.retype, map[string]any{"rows": rows})
				}
				return err
			}); err != nil {
				return fmt.Errorf("migrating to the type rule of graphstore.TypeOther: %w", err)
			}
			if last == "" {
				break
			}
			after = last
		}
	}
	return s.write(ctx, "marking the type rule of the stored graph", func(tx neo4j.ManagedTransaction) error {
		_, err := run(ctx, tx, cyTypeOtherMark, nil)
		return err
	})
}
