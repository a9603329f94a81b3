package neo4jgraph

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

// Statements of a Merge, in the order they run. Setting and removing _lock is
// the usual way to take a node's write lock before reading it: Neo4j holds it to
// the end of the transaction.
const (
	cyMergeCorpus = `MERGE (c:Corpus {name: $corpus})`

	cyLockChunks = `
UNWIND $rows AS id
MERGE (c:Chunk {corpus: $corpus, id: id})
SET c._lock = true REMOVE c._lock
RETURN id, c.hash AS hash, coalesce(c.relSrc, []) AS relSrc, coalesce(c.relDst, []) AS relDst,
       [(c)-[:MENTIONS]->(e:Entity) | e.key] AS keys`

	// RemoveChunks must not create the chunks it removes.
	cyLockExistingChunks = `
UNWIND $rows AS id
MATCH (c:Chunk {corpus: $corpus, id: id})
SET c._lock = true REMOVE c._lock
RETURN id, c.hash AS hash, coalesce(c.relSrc, []) AS relSrc, coalesce(c.relDst, []) AS relDst,
       [(c)-[:MENTIONS]->(e:Entity) | e.key] AS keys`

	cyLockEntities = `
UNWIND $rows AS k
MERGE (e:Entity {corpus: $corpus, key: k})
SET e._lock = true REMOVE e._lock`

	cyDropMentions = `
UNWIND $rows AS id
MATCH (:Chunk {corpus: $corpus, id: id})-[m:MENTIONS]->()
DELETE m`

	cyDropEvidence = `
UNWIND $rows AS r
MATCH (:Entity {corpus: $corpus, key: r.s})-[ev:EVIDENCE {chunk: r.chunk}]->(:Entity {corpus: $corpus, key: r.t})
DELETE ev`

	cyWriteChunks = `
UNWIND $rows AS r
MATCH (c:Chunk {corpus: $corpus, id: r.id})
SET c.document = r.document, c.hash = r.hash, c.relSrc = r.relSrc, c.relDst = r.relDst`

	cyDeleteChunks = `
UNWIND $rows AS id
MATCH (c:Chunk {corpus: $corpus, id: id})
DETACH DELETE c`

	cyWriteMentions = `
UNWIND $rows AS r
MATCH (c:Chunk {corpus: $corpus, id: r.chunk})
MATCH (e:Entity {corpus: $corpus, key: r.key})
CREATE (c)-[:MENTIONS {names: r.names, types: r.types, descs: r.descs}]->(e)`

	cyWriteEvidence = `
UNWIND $rows AS r
MATCH (s:Entity {corpus: $corpus, key: r.s})
MATCH (t:Entity {corpus: $corpus, key: r.t})
CREATE (s)-[:EVIDENCE {chunk: r.chunk, strength: r.strength, types: r.types, descs: r.descs}]->(t)`

	cyReadMentions = `
UNWIND $rows AS k
MATCH (e:Entity {corpus: $corpus, key: k})
RETURN k, [(c:Chunk)-[m:MENTIONS]->(e) | [c.id, m.names, m.types, m.descs]] AS rows`

	cyReadEvidence = `
UNWIND $rows AS p
MATCH (s:Entity {corpus: $corpus, key: p.s})
MATCH (t:Entity {corpus: $corpus, key: p.t})
RETURN p.s AS s, p.t AS t, [(s)-[ev:EVIDENCE]->(t) | [ev.chunk, ev.strength, ev.types, ev.descs]] AS rows`

	cyWriteEntities = `
UNWIND $rows AS r
MATCH (e:Entity {corpus: $corpus, key: r.key})
SET e.name = r.name, e.type = r.type, e.longest = r.longest, e.descriptions = r.descriptions,
    e.descFP = r.descFP, e.mentions = r.mentions, e.chunkIds = r.chunkIds`

	cyDeleteEntities = `
UNWIND $rows AS k
MATCH (e:Entity {corpus: $corpus, key: k})
DETACH DELETE e`

	cyWriteRelations = `
UNWIND $rows AS r
MATCH (s:Entity {corpus: $corpus, key: r.s})
MATCH (t:Entity {corpus: $corpus, key: r.t})
MERGE (s)-[x:RELATED]->(t)
SET x.type = r.type, x.longest = r.longest, x.descriptions = r.descriptions,
    x.weight = r.weight, x.chunkIds = r.chunkIds`

	cyDeleteRelations = `
UNWIND $rows AS r
MATCH (:Entity {corpus: $corpus, key: r.s})-[x:RELATED]->(:Entity {corpus: $corpus, key: r.t})
DELETE x`
)

// Merge replaces the contributions of the batch's chunks in one transaction.
func (s *Store) Merge(ctx context.Context, corpus string, batch []graphstore.ChunkExtraction) error {
	if err := checkCorpus(corpus); err != nil {
		return err
	}
	writes, err := prepareMerge(batch)
	if err != nil {
		return fmt.Errorf("merging into %s: %w", corpus, err)
	}
	if len(writes) == 0 {
		return s.Ping(ctx)
	}
	return s.write(ctx, "merging into "+corpus, func(tx neo4j.ManagedTransaction) error {
		return s.apply(ctx, tx, corpus, writes, false)
	})
}

// RemoveChunks removes the contributions of the given chunks.
func (s *Store) RemoveChunks(ctx context.Context, corpus string, chunkIDs []string) error {
	if err := checkCorpus(corpus); err != nil {
		return err
	}
	writes := prepareRemove(chunkIDs)
	return s.write(ctx, "removing chunks from "+corpus, func(tx neo4j.ManagedTransaction) error {
		return s.apply(ctx, tx, corpus, writes, true)
	})
}

// apply replaces (or, when remove, deletes) the provenance of writes and
// recomputes every aggregate it touches; see the package documentation.
func (s *Store) apply(ctx context.Context, tx neo4j.ManagedTransaction, corpus string, writes []chunkWrite, remove bool) error {
	base := map[string]any{"corpus": corpus}
	ids := make([]string, len(writes))
	for i, w := range writes {
		ids[i] = w.id
	}
	lock := cyLockChunks
	if remove {
		lock = cyLockExistingChunks
	} else if _, err := run(ctx, tx, cyMergeCorpus, base); err != nil {
		return fmt.Errorf("creating corpus: %w", err)
	}
	recs, err := runBatched(ctx, s, tx, lock, base, ids)
	if err != nil {
		return fmt.Errorf("locking chunks: %w", err)
	}
	old := make(map[string]oldChunk, len(recs))
	for _, r := range recs {
		v := r.AsMap()
		o := oldChunk{exists: v["hash"] != nil, hash: asString(v["hash"]), keys: asStrings(v["keys"])}
		src, dst := asStrings(v["relSrc"]), asStrings(v["relDst"])
		if len(src) != len(dst) {
			return fmt.Errorf("chunk %q has %d relation sources and %d targets: stored data damaged", v["id"], len(src), len(dst))
		}
		for i := range src {
			o.pairs = append(o.pairs, pairKey{src[i], dst[i]})
		}
		old[asString(v["id"])] = o
	}
	p := makePlan(writes, old)
	if len(p.changed) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	steps := []struct {
		doing, cypher string
		rows          any
		n             int
	}{
		{"locking entities", cyLockEntities, p.keys, len(p.keys)},
		{"dropping old mentions", cyDropMentions, changedIDs(p.changed), len(p.changed)},
		{"dropping old evidence", cyDropEvidence, p.oldEvidence, len(p.oldEvidence)},
		{"writing chunks", cyWriteChunks, p.chunkRows, len(p.chunkRows)},
		{"writing mentions", cyWriteMentions, p.mentions, len(p.mentions)},
		{"writing evidence", cyWriteEvidence, p.evidence, len(p.evidence)},
	}
	if remove {
		steps = append(steps, struct {
			doing, cypher string
			rows          any
			n             int
		}{"deleting chunks", cyDeleteChunks, changedIDs(p.changed), len(p.changed)})
	}
	for _, st := range steps {
		if st.n == 0 {
			continue
		}
		if err := s.runRows(ctx, tx, st.cypher, base, st.rows); err != nil {
			return fmt.Errorf("%s: %w", st.doing, err)
		}
	}
	if err := s.refreshEntities(ctx, tx, base, p.keys); err != nil {
		return err
	}
	if err := s.refreshRelations(ctx, tx, base, p.pairs); err != nil {
		return err
	}
	// A cancelled Merge must leave nothing behind: returning the error rolls back.
	return ctx.Err()
}

// runRows runs a batched statement whose rows are []string or []map[string]any.
func (s *Store) runRows(ctx context.Context, tx neo4j.ManagedTransaction, cypher string, base map[string]any, rows any) error {
	var err error
	switch r := rows.(type) {
	case []string:
		_, err = runBatched(ctx, s, tx, cypher, base, r)
	case []map[string]any:
		_, err = runBatched(ctx, s, tx, cypher, base, r)
	default:
		err = fmt.Errorf("rows of type %T", rows)
	}
	return err
}

func changedIDs(ws []chunkWrite) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.id
	}
	return out
}

// refreshEntities recomputes the aggregates of keys from their mentions and
// deletes the entities no chunk mentions any more.
func (s *Store) refreshEntities(ctx context.Context, tx neo4j.ManagedTransaction, base map[string]any, keys []string) error {
	recs, err := runBatched(ctx, s, tx, cyReadMentions, base, keys)
	if err != nil {
		return fmt.Errorf("reading mentions: %w", err)
	}
	var live []map[string]any
	var dead []string
	for _, r := range recs {
		key := asString(r.Values[0])
		rows, err := mentionRows(r.Values[1])
		if err != nil {
			return fmt.Errorf("entity %q: %w", key, err)
		}
		if len(rows) == 0 {
			dead = append(dead, key)
			continue
		}
		live = append(live, aggregateEntity(key, rows).params())
	}
	if len(live) > 0 {
		if _, err := runBatched(ctx, s, tx, cyWriteEntities, base, live); err != nil {
			return fmt.Errorf("writing entities: %w", err)
		}
	}
	if len(dead) > 0 {
		if _, err := runBatched(ctx, s, tx, cyDeleteEntities, base, dead); err != nil {
			return fmt.Errorf("deleting entities: %w", err)
		}
	}
	return nil
}

// refreshRelations recomputes the RELATED aggregates of pairs from their
// evidence and deletes the ones no chunk supports any more.
func (s *Store) refreshRelations(ctx context.Context, tx neo4j.ManagedTransaction, base map[string]any, pairs []pairKey) error {
	rows := make([]map[string]any, len(pairs))
	for i, p := range pairs {
		rows[i] = map[string]any{"s": p.src, "t": p.dst}
	}
	recs, err := runBatched(ctx, s, tx, cyReadEvidence, base, rows)
	if err != nil {
		return fmt.Errorf("reading evidence: %w", err)
	}
	supported := map[pairKey]bool{}
	var live []map[string]any
	for _, r := range recs {
		p := pairKey{asString(r.Values[0]), asString(r.Values[1])}
		ev, err := evidenceRows(r.Values[2])
		if err != nil {
			return fmt.Errorf("relationship %q->%q: %w", p.src, p.dst, err)
		}
		if len(ev) == 0 {
			continue
		}
		supported[p] = true
		live = append(live, aggregateRelation(p, ev).params())
	}
	var dead []map[string]any
	for _, p := range pairs {
		if !supported[p] {
			dead = append(dead, map[string]any{"s": p.src, "t": p.dst})
		}
	}
	if len(live) > 0 {
		if _, err := runBatched(ctx, s, tx, cyWriteRelations, base, live); err != nil {
			return fmt.Errorf("writing relationships: %w", err)
		}
	}
	if len(dead) > 0 {
		if _, err := runBatched(ctx, s, tx, cyDeleteRelations, base, dead); err != nil {
			return fmt.Errorf("deleting relationships: %w", err)
		}
	}
	return nil
}

func mentionRows(v any) ([]mentionRow, error) {
	l, _ := v.([]any)
	out := make([]mentionRow, 0, len(l))
	for _, x := range l {
		t, ok := x.([]any)
		if !ok || len(t) != 4 {
			return nil, fmt.Errorf("malformed mention %v", x)
		}
		out = append(out, mentionRow{chunk: asString(t[0]), names: asStrings(t[1]), types: asStrings(t[2]), descs: asStrings(t[3])})
	}
	return out, nil
}

func evidenceRows(v any) ([]evidenceRow, error) {
	l, _ := v.([]any)
	out := make([]evidenceRow, 0, len(l))
	for _, x := range l {
		t, ok := x.([]any)
		if !ok || len(t) != 4 {
			return nil, fmt.Errorf("malformed evidence %v", x)
		}
		out = append(out, evidenceRow{chunk: asString(t[0]), strength: asFloat(t[1]), types: asStrings(t[2]), descs: asStrings(t[3])})
	}
	return out, nil
}

const (
	cySetDescriptions = `
UNWIND $rows AS r
MATCH (e:Entity {corpus: $corpus, key: r.key})
SET e._lock = true REMOVE e._lock
WITH e, r
SET e.summary = r.summary, e.summaryFP = e.descFP`

	cySetPageRank = `
UNWIND $rows AS r
MATCH (e:Entity {corpus: $corpus, key: r.key})
SET e.pagerank = r.score`
)

// SetDescriptions stores summaries; each stays current until the entity's set of
// mention descriptions changes.
func (s *Store) SetDescriptions(ctx context.Context, corpus string, descs map[string]string) error {
	if err := checkCorpus(corpus); err != nil {
		return err
	}
	rows := make([]map[string]any, 0, len(descs))
	for _, k := range slices.Sorted(maps.Keys(descs)) {
		if !utf8.ValidString(descs[k]) {
			return fmt.Errorf("setting description of %q: not UTF-8: %w", k, graphstore.ErrInvalid)
		}
		rows = append(rows, map[string]any{"key": k, "summary": descs[k]})
	}
	return s.write(ctx, "setting descriptions in "+corpus, func(tx neo4j.ManagedTransaction) error {
		_, err := runBatched(ctx, s, tx, cySetDescriptions, map[string]any{"corpus": corpus}, rows)
		return err
	})
}

// SetPageRank stores PageRank scores.
func (s *Store) SetPageRank(ctx context.Context, corpus string, scores map[string]float64) error {
	if err := checkCorpus(corpus); err != nil {
		return err
	}
	rows := make([]map[string]any, 0, len(scores))
	for _, k := range slices.Sorted(maps.Keys(scores)) {
		if v := scores[k]; math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("setting pagerank of %q to %v: %w", k, v, graphstore.ErrInvalid)
		}
		rows = append(rows, map[string]any{"key": k, "score": scores[k]})
	}
	return s.write(ctx, "setting pagerank in "+corpus, func(tx neo4j.ManagedTransaction) error {
		_, err := runBatched(ctx, s, tx, cySetPageRank, map[string]any{"corpus": corpus}, rows)
		return err
	})
}

const (
	cySetLevels        = `MERGE (c:Corpus {name: $corpus}) SET c.levels = $levels`
	cyDropCommunities  = `MATCH (x:Community {corpus: $corpus}) DELETE x`
	cyDropMemberships  = `MATCH (m:Membership {corpus: $corpus}) DELETE m`
	cyRelatedPairs     = `MATCH (a:Entity {corpus: $corpus})-[:RELATED]->(b:Entity) RETURN a.key, b.key`
	cyWriteCommunities = `
UNWIND $rows AS r
CREATE (:Community {corpus: $corpus, id: r.id, level: r.level, parentId: r.parentId, childIds: r.childIds,
                    members: r.members, relationshipCount: r.relationshipCount})`
	cyWriteMemberships = `
UNWIND $rows AS r
CREATE (:Membership {corpus: $corpus, key: r.key, communities: r.communities})`
)

// ReplaceCommunities replaces the community hierarchy of a corpus.
func (s *Store) ReplaceCommunities(ctx context.Context, corpus string, cs []graphstore.Community) error {
	if err := checkCorpus(corpus); err != nil {
		return err
	}
	norm, err := graphstore.NormalizeCommunities(cs)
	if err != nil {
		return fmt.Errorf("replacing communities of %s: %w", corpus, err)
	}
	levels := 0
	membership := map[string][]string{}
	for _, c := range norm {
		levels = max(levels, c.Level+1)
		for _, k := range c.Members {
			ls := membership[k]
			for len(ls) <= c.Level {
				ls = append(ls, "")
			}
			ls[c.Level] = c.ID
			membership[k] = ls
		}
	}
	memberRows := make([]map[string]any, 0, len(membership))
	for _, k := range slices.Sorted(maps.Keys(membership)) {
		memberRows = append(memberRows, map[string]any{"key": k, "communities": membership[k]})
	}
	base := map[string]any{"corpus": corpus}
	return s.write(ctx, "replacing communities of "+corpus, func(tx neo4j.ManagedTransaction) error {
		if _, err := run(ctx, tx, cySetLevels, map[string]any{"corpus": corpus, "levels": levels}); err != nil {
			return err
		}
		for _, q := range []string{cyDropCommunities, cyDropMemberships} {
			if _, err := run(ctx, tx, q, base); err != nil {
				return fmt.Errorf("clearing the old hierarchy: %w", err)
			}
		}
		recs, err := run(ctx, tx, cyRelatedPairs, base)
		if err != nil {
			return fmt.Errorf("reading relationships: %w", err)
		}
		pairs := make([]pairKey, len(recs))
		for i, r := range recs {
			pairs[i] = pairKey{asString(r.Values[0]), asString(r.Values[1])}
		}
		counts := countWithin(norm, membership, pairs)
		rows := make([]map[string]any, len(norm))
		for i, c := range norm {
			rows[i] = map[string]any{
				"id": c.ID, "level": c.Level, "parentId": c.ParentID, "childIds": orEmpty(c.ChildIDs),
				"members": orEmpty(c.Members), "relationshipCount": counts[c.ID],
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := runBatched(ctx, s, tx, cyWriteCommunities, base, rows); err != nil {
			return fmt.Errorf("writing communities: %w", err)
		}
		if _, err := runBatched(ctx, s, tx, cyWriteMemberships, base, memberRows); err != nil {
			return fmt.Errorf("writing memberships: %w", err)
		}
		return ctx.Err()
	})
}

// countWithin counts, per community, the directed relationships with both ends
// among its members: at each level an entity is in at most one community, so a
// relationship counts for the community both ends share there.
func countWithin(cs []graphstore.Community, membership map[string][]string, pairs []pairKey) map[string]int {
	counts := make(map[string]int, len(cs))
	for _, p := range pairs {
		a, b := membership[p.src], membership[p.dst]
		for l := range min(len(a), len(b)) {
			if a[l] != "" && a[l] == b[l] {
				counts[a[l]]++
			}
		}
	}
	return counts
}
