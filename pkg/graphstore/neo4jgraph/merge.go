package neo4jgraph

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

// Statements of a Merge, in the order they run. Setting and removing _lock is
// the usual way to take a node's write lock before reading it: Neo4j holds it to
// the end of the transaction. Nodes and relationships found by the first
// statements are named by element id afterwards, so that every later MATCH is
// a direct seek rather than an index lookup or an expansion.
const (
	cyLockChunks = `
MERGE (:Corpus {name: $corpus})
WITH 1 AS one
UNWIND $rows AS id
MERGE (c:Chunk {corpus: $corpus, id: id})
SET c._lock = true REMOVE c._lock
RETURN id, elementId(c) AS eid, c.hash AS hash, c.contrib AS contrib`

	// RemoveChunks must not create the chunks it removes.
	cyLockExistingChunks = `
UNWIND $rows AS id
MATCH (c:Chunk {corpus: $corpus, id: id})
SET c._lock = true REMOVE c._lock
RETURN id, elementId(c) AS eid, c.hash AS hash, c.contrib AS contrib`

	cyLockEntities = `
UNWIND $rows AS k
MERGE (e:Entity {corpus: $corpus, key: k})
SET e._lock = true REMOVE e._lock
RETURN k, elementId(e) AS eid, e.agg AS agg, e.mentions AS mentions`

	// RELATED is found through the index on its pair hash pk (see pairHash;
	// the planner picks that seek, and a USING INDEX hint made each call ~100
	// times slower): expanding from a hub entity visits all its relationships.
	// A hash collision is harmless, the ends are checked.
	cyReadRelations = `
UNWIND $rows AS r
MATCH ()-[x:RELATED {pk: r.pk}]->()
WHERE elementId(startNode(x)) = r.s AND elementId(endNode(x)) = r.t
RETURN r.i AS i, elementId(x) AS xid, x.agg AS agg, x.weight AS weight, x.chunks IS NULL AS old`

	cyDropMentions = `
UNWIND $rows AS eid
MATCH (c:Chunk)-[m:MENTIONS]->() WHERE elementId(c) = eid
DELETE m`

	cyWriteChunks = `
UNWIND $rows AS r
MATCH (c:Chunk) WHERE elementId(c) = r.c
SET c.document = r.document, c.hash = r.hash, c.contrib = r.contrib
WITH c, r
UNWIND r.ents AS eid
MATCH (e) WHERE elementId(e) = eid
CREATE (c)-[:MENTIONS]->(e)`

	cyDeleteChunks = `
UNWIND $rows AS eid
MATCH (c:Chunk) WHERE elementId(c) = eid
DETACH DELETE c`

	// Every evidence bucket of a pair, as [chunks key, chunks, ws] triples.
	cyReadEvidence = `
UNWIND $rows AS r
MATCH ()-[x]->() WHERE elementId(x) = r.id
RETURN r.i AS i, [k IN keys(x) WHERE k STARTS WITH 'chunks' | [k, x[k], x['ws' + substring(k, 6)]]] AS buckets`

	cyWriteEntities = `
UNWIND $rows AS r
MATCH (e) WHERE elementId(e) = r.id
SET e += r.props`

	cyDeleteEntities = `
UNWIND $rows AS eid
MATCH (e) WHERE elementId(e) = eid
DETACH DELETE e`

	cyUpdateRelations = `
UNWIND $rows AS r
MATCH ()-[x]->() WHERE elementId(x) = r.id
SET x += r.props`

	// The evidence lists are edited in place, so that a Merge neither reads nor
	// sends a hub pair's evidence: the changed chunks leave bucket 0 (the only
	// bucket when there are any, see relState.needsBuckets) and the added
	// evidence goes to the end of bucket 0 here, of a later bucket r.ck/r.wk
	// in cyAppendRelations (relState.appendBucket). keep and the appended
	// bucket are computed from the old lists, before any is written.
	cyEditRelations = `
UNWIND $rows AS r
MATCH ()-[x]->() WHERE elementId(x) = r.id
WITH x, r, CASE WHEN size(r.gone) = 0 THEN null
  ELSE [i IN range(0, size(x.chunks) - 1) WHERE NOT x.chunks[i] IN r.gone] END AS keep
SET x += r.props,
    x.chunks = CASE WHEN keep IS NULL THEN x.chunks ELSE [i IN keep | x.chunks[i]] END + r.add,
    x.ws = CASE WHEN keep IS NULL THEN x.ws ELSE [i IN keep | x.ws[i]] END + r.addw`

	cyAppendRelations = `
UNWIND $rows AS r
MATCH ()-[x]->() WHERE elementId(x) = r.id
WITH x, r, CASE WHEN size(r.gone) = 0 THEN null
  ELSE [i IN range(0, size(x.chunks) - 1) WHERE NOT x.chunks[i] IN r.gone] END AS keep,
  coalesce(x[r.ck], []) + r.add AS cs, coalesce(x[r.wk], []) + r.addw AS ws
SET x += r.props,
    x.chunks = CASE WHEN keep IS NULL THEN x.chunks ELSE [i IN keep | x.chunks[i]] END,
    x.ws = CASE WHEN keep IS NULL THEN x.ws ELSE [i IN keep | x.ws[i]] END,
    x[r.ck] = cs, x[r.wk] = ws`

	cyCreateRelations = `
UNWIND $rows AS r
MATCH (s) WHERE elementId(s) = r.s
MATCH (t) WHERE elementId(t) = r.t
CREATE (s)-[x:RELATED {pk: r.pk}]->(t)
SET x += r.props`

	cyDeleteRelations = `
UNWIND $rows AS xid
MATCH ()-[x]->() WHERE elementId(x) = xid
DELETE x`
)

// Merge replaces the contributions of the batch's chunks in one transaction.
func (s *store) Merge(ctx context.Context, corpus string, batch []graphstore.ChunkExtraction) error {
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
func (s *store) RemoveChunks(ctx context.Context, corpus string, chunkIDs []string) error {
	writes := prepareRemove(chunkIDs)
	return s.write(ctx, "removing chunks from "+corpus, func(tx neo4j.ManagedTransaction) error {
		return s.apply(ctx, tx, corpus, writes, true)
	})
}

// mergeTx is one run of apply: the element ids of what it locked and read.
type mergeTx struct {
	s      *store
	tx     neo4j.ManagedTransaction
	base   map[string]any
	chunks map[string]string // chunk id -> element id
	ents   map[string]string // entity key -> element id
	rels   map[pairKey]string
}

// apply replaces (or, when remove, deletes) the provenance of writes and
// updates every aggregate it touches; see the package documentation.
func (s *store) apply(ctx context.Context, tx neo4j.ManagedTransaction, corpus string, writes []chunkWrite, remove bool) error {
	m := &mergeTx{s: s, tx: tx, base: map[string]any{"corpus": corpus}}
	old, err := m.lockChunks(ctx, writes, remove)
	if err != nil {
		return err
	}
	p := makePlan(writes, old)
	if len(p.changed) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	ents, err := m.lockEntities(ctx, p.keys)
	if err != nil {
		return err
	}
	rels, err := m.readRelations(ctx, p.pairs, ents)
	if err != nil {
		return err
	}
	p.fold(ents, rels)
	if err := m.replaceProvenance(ctx, &p, remove); err != nil {
		return err
	}
	if err := m.loadBuckets(ctx, rels); err != nil {
		return err
	}
	if err := m.writeRelations(ctx, rels); err != nil {
		return err
	}
	if err := m.writeEntities(ctx, ents); err != nil {
		return err
	}
	// A cancelled Merge must leave nothing behind: returning the error rolls back.
	return ctx.Err()
}

// stmt is one batched statement of a Merge.
type stmt struct {
	doing, cypher string
	rows          []any
}

// steps runs the statements in order, skipping those without rows.
func (m *mergeTx) steps(ctx context.Context, ss ...stmt) error {
	for _, st := range ss {
		if len(st.rows) == 0 {
			continue
		}
		if _, err := runBatched(ctx, m.s, m.tx, st.cypher, m.base, st.rows); err != nil {
			return fmt.Errorf("%s: %w", st.doing, err)
		}
	}
	return nil
}

// lockChunks locks (creating them unless remove) the chunks of writes in id
// order and reads their stored contributions.
func (m *mergeTx) lockChunks(ctx context.Context, writes []chunkWrite, remove bool) (map[string]oldChunk, error) {
	ids := make([]string, len(writes))
	for i, w := range writes {
		ids[i] = w.id
	}
	lock := cyLockChunks
	if remove {
		lock = cyLockExistingChunks
	}
	recs, err := runBatched(ctx, m.s, m.tx, lock, m.base, ids)
	if err != nil {
		return nil, fmt.Errorf("locking chunks: %w", err)
	}
	m.chunks = make(map[string]string, len(recs))
	old := make(map[string]oldChunk, len(recs))
	for _, r := range recs {
		id, hash := asString(r.Values[0]), r.Values[2]
		m.chunks[id] = asString(r.Values[1])
		o := oldChunk{exists: hash != nil, hash: asString(hash)}
		if o.exists {
			if o.ct, err = decodeContribution(id, r.Values[3]); err != nil {
				return nil, err
			}
		}
		old[id] = o
	}
	return old, nil
}

// errOldLayout reports a graph written before counter states were kept.
// Graphs of ADR 0029 are migrated at Open (see migrateEvidence); older ones are not.
var errOldLayout = fmt.Errorf("graph written by an older neo4jgraph layout (before ADR 0029, or not migrated by Open): drop and rebuild the corpus: %w",
	graphstore.ErrInvalid)

// lockEntities locks (or creates) the entities of keys in key order and reads
// their counter states.
func (m *mergeTx) lockEntities(ctx context.Context, keys []string) (map[string]*entState, error) {
	recs, err := runBatched(ctx, m.s, m.tx, cyLockEntities, m.base, keys)
	if err != nil {
		return nil, fmt.Errorf("locking entities: %w", err)
	}
	m.ents = make(map[string]string, len(recs))
	out := make(map[string]*entState, len(recs))
	for _, r := range recs {
		k := asString(r.Values[0])
		m.ents[k] = asString(r.Values[1])
		st := new(entState)
		if agg, ok := r.Values[2].(string); ok {
			if err := json.Unmarshal([]byte(agg), st); err != nil {
				return nil, fmt.Errorf("entity %q: decoding state: %w", k, err)
			}
		} else if r.Values[3] != nil {
			return nil, fmt.Errorf("entity %q has no state: %w", k, errOldLayout)
		}
		out[k] = st
	}
	return out, nil
}

// readRelations reads the states of the RELATED relationships of pairs; pairs
// without one get an empty state. The ends are locked entities, read in ents
// before the fold: a pair with a new end (no mentions yet) has no RELATED.
func (m *mergeTx) readRelations(ctx context.Context, pairs []pairKey, ents map[string]*entState) (map[pairKey]*relState, error) {
	rows := make([]any, 0, len(pairs))
	out := make(map[pairKey]*relState, len(pairs))
	for i, p := range pairs {
		out[p] = new(relState)
		if ents[p.src].Mentions > 0 && ents[p.dst].Mentions > 0 {
			rows = append(rows, m.pairRow(p, map[string]any{"i": i}))
		}
	}
	recs, err := runBatched(ctx, m.s, m.tx, cyReadRelations, m.base, rows)
	if err != nil {
		return nil, fmt.Errorf("reading relationships: %w", err)
	}
	m.rels = make(map[pairKey]string, len(recs))
	for _, r := range recs {
		p := pairs[asInt(r.Values[0])]
		m.rels[p] = asString(r.Values[1])
		st := out[p]
		agg, ok := r.Values[2].(string)
		if !ok || r.Values[4] == true {
			return nil, fmt.Errorf("relationship %q->%q has no state or no evidence list: %w", p.src, p.dst, errOldLayout)
		}
		if err := json.Unmarshal([]byte(agg), st); err != nil {
			return nil, fmt.Errorf("relationship %q->%q: decoding state: %w", p.src, p.dst, err)
		}
		st.weight = asFloat(r.Values[3])
		st.loaded()
	}
	return out, nil
}

// replaceProvenance drops the MENTIONS of the changed chunks and writes the
// new ones (or deletes the chunks, when remove). The evidence of pairs is
// edited with the RELATED relationships, in writeRelations.
func (m *mergeTx) replaceProvenance(ctx context.Context, p *plan, remove bool) error {
	var chunkEIDs, oldMentions, chunkRows []any
	for i, w := range p.changed {
		eid := m.chunks[w.id]
		chunkEIDs = append(chunkEIDs, eid)
		if p.old[i] != nil {
			oldMentions = append(oldMentions, eid) // a new chunk has none
		}
		if w.ct == nil {
			continue
		}
		ents := make([]string, len(w.ct.Entities))
		for j, e := range w.ct.Entities {
			ents[j] = m.ents[e.Key]
		}
		chunkRows = append(chunkRows, map[string]any{
			"c": eid, "document": w.ct.DocumentID, "hash": w.hash, "contrib": w.contrib, "ents": ents,
		})
	}
	if remove {
		return m.steps(ctx, stmt{"deleting chunks", cyDeleteChunks, chunkEIDs})
	}
	return m.steps(ctx,
		stmt{"dropping old mentions", cyDropMentions, oldMentions},
		stmt{"writing chunks and mentions", cyWriteChunks, chunkRows})
}

// pairRow adds to row the element ids of the ends of p and its hash.
func (m *mergeTx) pairRow(p pairKey, row map[string]any) map[string]any {
	row["s"], row["t"], row["pk"] = m.ents[p.src], m.ents[p.dst], pairHash(m.base["corpus"].(string), p)
	return row
}

// loadBuckets reads the evidence buckets of the stored pairs that need them
// (relState.needsBuckets) and edits them with rebucket, which also re-sums
// the weights that adding and subtracting could not keep exact (fractional
// strengths, huge sums). writeRelations then writes the changed buckets.
func (m *mergeTx) loadBuckets(ctx context.Context, rels map[pairKey]*relState) error {
	var pairs []pairKey
	var rows []any
	for p, st := range rels {
		if xid := m.rels[p]; xid != "" && st.needsBuckets() {
			rows = append(rows, map[string]any{"i": len(pairs), "id": xid})
			pairs = append(pairs, p)
		}
	}
	recs, err := runBatched(ctx, m.s, m.tx, cyReadEvidence, m.base, rows)
	if err != nil {
		return fmt.Errorf("reading evidence: %w", err)
	}
	for _, r := range recs {
		p := pairs[asInt(r.Values[0])]
		bs, err := bucketRows(r.Values[1])
		if err != nil {
			return fmt.Errorf("relationship %q->%q: %w", p.src, p.dst, err)
		}
		rels[p].rebucket(bs)
	}
	return nil
}

// writeRelations updates, creates and deletes RELATED relationships after
// their states, in pair order.
func (m *mergeTx) writeRelations(ctx context.Context, rels map[pairKey]*relState) error {
	var update, edit, appends, create, del []any
	for _, p := range slices.SortedFunc(maps.Keys(rels), comparePairs) {
		st, xid := rels[p], m.rels[p]
		if st.Chunks <= 0 {
			if xid != "" {
				del = append(del, xid)
			}
			continue
		}
		if xid == "" && st.buckets == nil {
			st.rebucket(nil) // a new pair: its evidence is what the batch adds
		}
		target := -1
		if st.buckets == nil {
			target = st.appendBucket() // before params: it moves the state
		}
		props, err := st.params()
		if err != nil {
			return fmt.Errorf("relationship %q->%q: %w", p.src, p.dst, err)
		}
		switch {
		case target == 0:
			add, addw := evidenceLists(st.added)
			edit = append(edit, map[string]any{"id": xid, "props": props, "gone": orEmpty(st.gone), "add": add, "addw": addw})
		case target > 0:
			add, addw := evidenceLists(st.added)
			ck, wk := bucketKeys(target)
			appends = append(appends, map[string]any{"id": xid, "props": props, "gone": orEmpty(st.gone),
				"ck": ck, "wk": wk, "add": add, "addw": addw})
		case xid == "":
			st.bucketProps(props)
			create = append(create, m.pairRow(p, map[string]any{"props": props}))
		default:
			st.bucketProps(props)
			update = append(update, map[string]any{"id": xid, "props": props})
		}
	}
	return m.steps(ctx,
		stmt{"updating relationships", cyUpdateRelations, update},
		stmt{"editing relationships", cyEditRelations, edit},
		stmt{"appending to evidence buckets", cyAppendRelations, appends},
		stmt{"creating relationships", cyCreateRelations, create},
		stmt{"deleting relationships", cyDeleteRelations, del})
}

// writeEntities stores the entities' new states and derived properties and
// deletes the entities no chunk mentions any more.
func (m *mergeTx) writeEntities(ctx context.Context, ents map[string]*entState) error {
	var live, dead []any
	for _, k := range slices.Sorted(maps.Keys(ents)) {
		st := ents[k]
		if st.Mentions <= 0 {
			dead = append(dead, m.ents[k])
			continue
		}
		props, err := st.params(k)
		if err != nil {
			return err
		}
		live = append(live, map[string]any{"id": m.ents[k], "props": props})
	}
	return m.steps(ctx,
		stmt{"writing entities", cyWriteEntities, live},
		stmt{"deleting entities", cyDeleteEntities, dead})
}

// evidenceRows zips the stored RELATED.chunks and RELATED.ws lists.
func evidenceRows(chunks, ws any) ([]evidenceRow, error) {
	cs, _ := chunks.([]any)
	wl, _ := ws.([]any)
	if len(cs) != len(wl) {
		return nil, fmt.Errorf("malformed evidence: %d chunks and %d strengths", len(cs), len(wl))
	}
	out := make([]evidenceRow, len(cs))
	for i := range cs {
		c, ok := cs[i].(string)
		if !ok {
			return nil, fmt.Errorf("malformed evidence: chunk id %v", cs[i])
		}
		out[i] = evidenceRow{chunk: c, strength: asFloat(wl[i])}
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
func (s *store) SetDescriptions(ctx context.Context, corpus string, descs map[string]string) error {
	rows := make([]map[string]any, 0, len(descs))
	for _, k := range slices.Sorted(maps.Keys(descs)) {
		rows = append(rows, map[string]any{"key": k, "summary": descs[k]})
	}
	return s.write(ctx, "setting descriptions in "+corpus, func(tx neo4j.ManagedTransaction) error {
		_, err := runBatched(ctx, s, tx, cySetDescriptions, map[string]any{"corpus": corpus}, rows)
		return err
	})
}

// SetPageRank stores PageRank scores.
func (s *store) SetPageRank(ctx context.Context, corpus string, scores map[string]float64) error {
	rows := make([]map[string]any, 0, len(scores))
	for _, k := range slices.Sorted(maps.Keys(scores)) {
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
func (s *store) ReplaceCommunities(ctx context.Context, corpus string, cs []graphstore.Community) error {
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
