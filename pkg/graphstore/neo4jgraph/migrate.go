package neo4jgraph

import (
	"context"
	"fmt"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
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
