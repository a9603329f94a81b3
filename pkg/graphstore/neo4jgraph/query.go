package neo4jgraph

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

// Ordering and limits are applied in Go, not in Cypher: graphstore sorts by
// byte-wise string order, which Cypher's string ordering does not promise.
const (
	// cyEvidenceChunks collects the chunk ids of all evidence buckets of the
	// RELATED r (see evidence.go).
	cyEvidenceChunks = "reduce(a = [], k IN keys(r) | CASE WHEN k STARTS WITH 'chunks' THEN a + r[k] ELSE a END)"

	cyEntities = `
UNWIND $rows AS k
MATCH (e:Entity {corpus: $corpus, key: k})
OPTIONAL MATCH (m:Membership {corpus: $corpus, key: k})
RETURN k, e {.name, .type, .longest, .descriptions, .mentions, .pagerank, .summary, .summaryFP, .descFP} AS e,
       m.communities AS communities, [(c:Chunk)-[:MENTIONS]->(e) | c.id] AS chunks`

	// cyNeighborEntities is cyEntities without the descriptions (graphstore.Store.Neighborhood).
	cyNeighborEntities = `
UNWIND $rows AS k
MATCH (e:Entity {corpus: $corpus, key: k})
OPTIONAL MATCH (m:Membership {corpus: $corpus, key: k})
RETURN k, e {.name, .type, .longest, .mentions, .pagerank, .summary, .summaryFP, .descFP} AS e,
       m.communities AS communities, [(c:Chunk)-[:MENTIONS]->(e) | c.id] AS chunks`

	cyRelationshipsOf = `
UNWIND $rows AS k
MATCH (:Entity {corpus: $corpus, key: k})-[r:RELATED]-(:Entity)
WITH DISTINCT r
WITH r, startNode(r) AS a, endNode(r) AS b
RETURN a.key AS s, b.key AS t, r {.type, .longest, .descriptions, .weight, chunks: ` + cyEvidenceChunks + `} AS r`

	cyRelationshipsAmong = `
UNWIND $rows AS k
MATCH (a:Entity {corpus: $corpus, key: k})-[r:RELATED]->(b:Entity)
WHERE b.key IN $keys
RETURN k AS s, b.key AS t, r {.type, .longest, .descriptions, .weight, chunks: ` + cyEvidenceChunks + `} AS r`

	cyExisting = `
UNWIND $rows AS k
MATCH (e:Entity {corpus: $corpus, key: k})
RETURN k`

	cyNeighbors = `
UNWIND $rows AS k
MATCH (:Entity {corpus: $corpus, key: k})-[:RELATED]-(n:Entity)
RETURN DISTINCT k, n.key AS n, coalesce(n.pagerank, 0.0) AS pagerank`

	cySnapshotKeys  = `MATCH (e:Entity {corpus: $corpus}) RETURN e.key`
	cySnapshotEdges = `MATCH (a:Entity {corpus: $corpus})-[r:RELATED]->(b:Entity) RETURN a.key, b.key, r.weight`

	cyCommunities = `
MATCH (x:Community {corpus: $corpus})
WHERE $level = -1 OR x.level = $level
RETURN properties(x)`

	cyCommunity = `MATCH (x:Community {corpus: $corpus, id: $id}) RETURN properties(x)`

	cyStats = `
OPTIONAL MATCH (c:Corpus {name: $corpus})
CALL { MATCH (e:Entity {corpus: $corpus}) RETURN count(e) AS entities }
CALL { MATCH (:Entity {corpus: $corpus})-[r:RELATED]->() RETURN count(r) AS relationships }
CALL { MATCH (x:Community {corpus: $corpus}) RETURN count(x) AS communities }
CALL { MATCH (x:Chunk {corpus: $corpus}) RETURN count(x) AS chunks }
RETURN entities, relationships, communities, chunks, coalesce(c.levels, 0) AS levels`

	cyLevels = `OPTIONAL MATCH (c:Corpus {name: $corpus}) RETURN coalesce(c.levels, 0) AS levels`

	cyCorpora = `MATCH (c:Corpus) RETURN c.name`
)

// dropCorpus lists the statements of DropCorpus; the Corpus node goes last.
var dropCorpus = []string{
	`MATCH (x:Chunk {corpus: $corpus}) DETACH DELETE x`,
	`MATCH (x:Entity {corpus: $corpus}) DETACH DELETE x`,
	`MATCH (x:Community {corpus: $corpus}) DETACH DELETE x`,
	`MATCH (x:Membership {corpus: $corpus}) DETACH DELETE x`,
	`MATCH (c:Corpus {name: $corpus}) DELETE c`,
}

// entities reads the existing entities among keys (distinct), by key, with cy:
// cyEntities or cyNeighborEntities.
func (s *store) entities(ctx context.Context, tx neo4j.ManagedTransaction, cy, corpus string, keys []string) (map[string]graphstore.Entity, error) {
	recs, err := runBatched(ctx, s, tx, cy, map[string]any{"corpus": corpus}, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[string]graphstore.Entity, len(recs))
	for _, r := range recs {
		k := asString(r.Values[0])
		props, _ := r.Values[1].(map[string]any)
		// Membership lists keep "" for levels where the key is in no community.
		out[k] = entityView(k, props, asStrings(r.Values[3]), asStrings(r.Values[2]))
	}
	return out, nil
}

func distinct(keys []string) []string {
	seen := make(map[string]struct{}, len(keys))
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if _, dup := seen[k]; !dup {
			seen[k] = struct{}{}
			out = append(out, k)
		}
	}
	return out
}

// Entity returns one entity or graphstore.ErrNotFound.
func (s *store) Entity(ctx context.Context, corpus, key string) (graphstore.Entity, error) {
	var e graphstore.Entity
	found := false
	err := s.read(ctx, "reading entity in "+corpus, func(tx neo4j.ManagedTransaction) error {
		m, err := s.entities(ctx, tx, cyEntities, corpus, []string{key})
		e, found = m[key]
		return err
	})
	if err == nil && !found {
		err = fmt.Errorf("entity %q in %s: %w", key, corpus, graphstore.ErrNotFound)
	}
	return e, err
}

// Entities returns the existing entities among keys in the order given, each once.
// It fills in every field whatever opts say: the lists come back in the same
// query, not from more lookups (graphstore.Brief).
func (s *store) Entities(ctx context.Context, corpus string, keys []string, _ ...graphstore.ReadOption) ([]graphstore.Entity, error) {
	keys = distinct(keys)
	var out []graphstore.Entity
	err := s.read(ctx, "reading entities in "+corpus, func(tx neo4j.ManagedTransaction) error {
		m, err := s.entities(ctx, tx, cyEntities, corpus, keys)
		if err != nil {
			return err
		}
		out = nil // the function may be retried
		for _, k := range keys {
			if e, ok := m[k]; ok {
				out = append(out, e)
			}
		}
		return nil
	})
	return out, err
}

func byWeight(a, b graphstore.Relationship) int {
	return cmp.Or(cmp.Compare(b.Weight, a.Weight),
		strings.Compare(a.SourceKey, b.SourceKey), strings.Compare(a.TargetKey, b.TargetKey))
}

// relationshipView builds the public relationship from its stored properties
// and the ids of the chunks giving evidence for it (any order).
func relationshipView(src, dst string, v map[string]any, chunkIDs []string) graphstore.Relationship {
	slices.Sort(chunkIDs)
	return graphstore.Relationship{
		SourceKey: src, TargetKey: dst,
		Type:         asString(v["type"]),
		Description:  asString(v["longest"]),
		Descriptions: asStrings(v["descriptions"]),
		Weight:       asFloat(v["weight"]),
		ChunkIDs:     chunkIDs,
	}
}

func (s *store) relationships(ctx context.Context, doing, corpus, cypher string, params map[string]any, keys []string) ([]graphstore.Relationship, error) {
	keys = distinct(keys)
	var out []graphstore.Relationship
	err := s.read(ctx, doing+" in "+corpus, func(tx neo4j.ManagedTransaction) error {
		params["corpus"] = corpus
		recs, err := runBatched(ctx, s, tx, cypher, params, keys)
		if err != nil {
			return err
		}
		out = make([]graphstore.Relationship, 0, len(recs))
		seen := make(map[pairKey]struct{}, len(recs))
		for _, r := range recs {
			p := pairKey{asString(r.Values[0]), asString(r.Values[1])}
			if _, dup := seen[p]; dup {
				continue // one relationship reached from both ends in different batches
			}
			seen[p] = struct{}{}
			props, _ := r.Values[2].(map[string]any)
			out = append(out, relationshipView(p.src, p.dst, props, asStrings(props["chunks"])))
		}
		return nil
	})
	slices.SortFunc(out, byWeight)
	return out, err
}

// RelationshipsOf returns the relationships touching any key, heaviest first.
func (s *store) RelationshipsOf(ctx context.Context, corpus string, keys []string, limit int) ([]graphstore.Relationship, error) {
	out, err := s.relationships(ctx, "reading relationships", corpus, cyRelationshipsOf, map[string]any{}, keys)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, err
}

// RelationshipsAmong returns the relationships with both ends in keys, every
// field filled in whatever opts say (see Entities).
func (s *store) RelationshipsAmong(ctx context.Context, corpus string, keys []string, _ ...graphstore.ReadOption) ([]graphstore.Relationship, error) {
	return s.relationships(ctx, "reading relationships among keys", corpus, cyRelationshipsAmong,
		map[string]any{"keys": orEmpty(keys)}, keys)
}

// Neighborhood walks breadth first from start; see graphstore.Store. The walk
// runs one query per hop in a single read transaction.
func (s *store) Neighborhood(ctx context.Context, corpus string, start []string, depth, limit int) ([]graphstore.Neighbor, error) {
	if depth <= 0 {
		return nil, s.Ping(ctx)
	}
	var out []graphstore.Neighbor
	err := s.read(ctx, "walking neighborhood in "+corpus, func(tx neo4j.ManagedTransaction) error {
		base := map[string]any{"corpus": corpus}
		recs, err := runBatched(ctx, s, tx, cyExisting, base, distinct(start))
		if err != nil {
			return err
		}
		w := newWalk()
		for _, r := range recs {
			w.start(asString(r.Values[0]))
		}
		for d := 1; d <= depth && len(w.frontier) > 0; d++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			recs, err := runBatched(ctx, s, tx, cyNeighbors, base, w.frontier)
			if err != nil {
				return err
			}
			edges := make([]hop, len(recs))
			for i, r := range recs {
				edges[i] = hop{from: asString(r.Values[0]), to: asString(r.Values[1]), pagerank: asFloat(r.Values[2])}
			}
			w.step(d, edges)
			if limit > 0 && len(w.hits) >= limit {
				break // farther entities sort after every one already found
			}
		}
		hits := w.ordered(limit)
		keys := make([]string, len(hits))
		for i, h := range hits {
			keys[i] = h.key
		}
		ents, err := s.entities(ctx, tx, cyNeighborEntities, corpus, keys)
		if err != nil {
			return err
		}
		out = make([]graphstore.Neighbor, 0, len(hits))
		for _, h := range hits {
			e, ok := ents[h.key]
			if !ok {
				continue // removed by a concurrent write since the walk reached it
			}
			out = append(out, graphstore.Neighbor{Entity: e, Distance: h.dist, Path: w.path(h.key, h.dist)})
		}
		return nil
	})
	return out, err
}

// hop is one relationship seen from the frontier.
type hop struct {
	from, to string
	pagerank float64
}

type found struct {
	key      string
	dist     int
	pagerank float64
}

// walk is the pure breadth-first bookkeeping of Neighborhood.
type walk struct {
	dist     map[string]int
	parent   map[string]string
	frontier []string
	hits     []found
}

func newWalk() *walk { return &walk{dist: map[string]int{}, parent: map[string]string{}} }

func (w *walk) start(k string) {
	if _, ok := w.dist[k]; !ok {
		w.dist[k] = 0
		w.frontier = append(w.frontier, k)
	}
}

// step adds the entities first reached at distance d; each one's parent is the
// smallest frontier key adjacent to it, which makes paths deterministic.
func (w *walk) step(d int, edges []hop) {
	next := map[string]found{}
	for _, e := range edges {
		if _, seen := w.dist[e.to]; seen {
			continue
		}
		if p, ok := w.parent[e.to]; !ok || e.from < p {
			w.parent[e.to] = e.from
		}
		next[e.to] = found{key: e.to, dist: d, pagerank: e.pagerank}
	}
	w.frontier = w.frontier[:0]
	for k, f := range next {
		w.dist[k] = d
		w.frontier = append(w.frontier, k)
		w.hits = append(w.hits, f)
	}
	slices.Sort(w.frontier)
}

// ordered sorts the hits by distance, PageRank descending, key, and cuts them.
func (w *walk) ordered(limit int) []found {
	slices.SortFunc(w.hits, func(a, b found) int {
		return cmp.Or(cmp.Compare(a.dist, b.dist), cmp.Compare(b.pagerank, a.pagerank), strings.Compare(a.key, b.key))
	})
	if limit > 0 && len(w.hits) > limit {
		return w.hits[:limit]
	}
	return w.hits
}

func (w *walk) path(key string, dist int) []string {
	p := make([]string, dist+1)
	for i, k := dist, key; i >= 0; i, k = i-1, w.parent[k] {
		p[i] = k
	}
	return p
}

// Snapshot returns every key and every undirected weighted edge.
func (s *store) Snapshot(ctx context.Context, corpus string) (graphstore.Snapshot, error) {
	var snap graphstore.Snapshot
	err := s.read(ctx, "taking snapshot of "+corpus, func(tx neo4j.ManagedTransaction) error {
		base := map[string]any{"corpus": corpus}
		keys, err := run(ctx, tx, cySnapshotKeys, base)
		if err != nil {
			return err
		}
		edges, err := run(ctx, tx, cySnapshotEdges, base)
		if err != nil {
			return err
		}
		directed := make([]directedEdge, len(edges))
		for i, r := range edges {
			directed[i] = directedEdge{asString(r.Values[0]), asString(r.Values[1]), asFloat(r.Values[2])}
		}
		ks := make([]string, len(keys))
		for i, r := range keys {
			ks[i] = asString(r.Values[0])
		}
		snap = buildSnapshot(ks, directed)
		return nil
	})
	return snap, err
}

type directedEdge struct {
	src, dst string
	weight   float64
}

// buildSnapshot sorts the keys and folds both directions of each pair into one
// undirected edge, adding the weight of the smaller-to-larger direction first as
// boltgraph does, so that both drivers produce the same floats. Keys and edges
// come from two reads, which a concurrent Merge may separate (Neo4j reads are
// read committed): an edge end missing from keys is an entity created in
// between, and is added.
func buildSnapshot(keys []string, edges []directedEdge) graphstore.Snapshot {
	set := make(map[string]struct{}, len(keys))
	for _, k := range keys {
		set[k] = struct{}{}
	}
	for _, e := range edges {
		set[e.src], set[e.dst] = struct{}{}, struct{}{}
	}
	var snap graphstore.Snapshot
	if len(set) > 0 {
		snap.Keys = slices.Sorted(maps.Keys(set))
	}
	idx := make(map[string]int, len(snap.Keys))
	for i, k := range snap.Keys {
		idx[k] = i
	}
	type half struct {
		fwd, rev       float64
		hasFwd, hasRev bool
	}
	pairs := map[[2]int]*half{}
	for _, e := range edges {
		a, b := idx[e.src], idx[e.dst]
		if a == b {
			continue
		}
		k := [2]int{min(a, b), max(a, b)}
		h := pairs[k]
		if h == nil {
			h = &half{}
			pairs[k] = h
		}
		if a < b {
			h.fwd, h.hasFwd = e.weight, true
		} else {
			h.rev, h.hasRev = e.weight, true
		}
	}
	for k, h := range pairs {
		var w float64
		if h.hasFwd {
			w += h.fwd
		}
		if h.hasRev {
			w += h.rev
		}
		snap.Edges = append(snap.Edges, graphstore.Edge{Source: k[0], Target: k[1], Weight: w})
	}
	slices.SortFunc(snap.Edges, func(x, y graphstore.Edge) int {
		return cmp.Or(cmp.Compare(x.Source, y.Source), cmp.Compare(x.Target, y.Target))
	})
	return snap
}

func communityView(v map[string]any) graphstore.Community {
	return graphstore.Community{
		ID:                asString(v["id"]),
		Level:             int(asInt(v["level"])),
		ParentID:          asString(v["parentId"]),
		ChildIDs:          asStrings(v["childIds"]),
		Members:           asStrings(v["members"]),
		RelationshipCount: int(asInt(v["relationshipCount"])),
	}
}

// Communities returns the communities of one level, or all for level -1.
func (s *store) Communities(ctx context.Context, corpus string, level int) ([]graphstore.Community, error) {
	var out []graphstore.Community
	err := s.read(ctx, "listing communities of "+corpus, func(tx neo4j.ManagedTransaction) error {
		recs, err := run(ctx, tx, cyCommunities, map[string]any{"corpus": corpus, "level": level})
		if err != nil {
			return err
		}
		out = nil
		for _, r := range recs {
			props, _ := r.Values[0].(map[string]any)
			out = append(out, communityView(props))
		}
		return nil
	})
	slices.SortFunc(out, func(a, b graphstore.Community) int {
		return cmp.Or(cmp.Compare(a.Level, b.Level), strings.Compare(a.ID, b.ID))
	})
	return out, err
}

// Community returns one community or graphstore.ErrNotFound.
func (s *store) Community(ctx context.Context, corpus, id string) (graphstore.Community, error) {
	var c graphstore.Community
	found := false
	err := s.read(ctx, "reading community in "+corpus, func(tx neo4j.ManagedTransaction) error {
		recs, err := run(ctx, tx, cyCommunity, map[string]any{"corpus": corpus, "id": id})
		if err != nil || len(recs) == 0 {
			return err
		}
		props, _ := recs[0].Values[0].(map[string]any)
		c, found = communityView(props), true
		return nil
	})
	if err == nil && !found {
		err = fmt.Errorf("community %q in %s: %w", id, corpus, graphstore.ErrNotFound)
	}
	return c, err
}

// Stats counts what a corpus holds.
func (s *store) Stats(ctx context.Context, corpus string) (graphstore.Stats, error) {
	var st graphstore.Stats
	err := s.read(ctx, "counting "+corpus, func(tx neo4j.ManagedTransaction) error {
		recs, err := run(ctx, tx, cyStats, map[string]any{"corpus": corpus})
		if err != nil {
			return err
		}
		if len(recs) != 1 {
			return fmt.Errorf("stats query returned %d rows", len(recs))
		}
		v := recs[0].Values
		st = graphstore.Stats{
			Entities: int(asInt(v[0])), Relationships: int(asInt(v[1])), Communities: int(asInt(v[2])),
			Chunks: int(asInt(v[3])), Levels: int(asInt(v[4])),
		}
		return nil
	})
	return st, err
}

// Levels reads the level count of the corpus node.
func (s *store) Levels(ctx context.Context, corpus string) (int, error) {
	var n int
	err := s.read(ctx, "reading the level count of "+corpus, func(tx neo4j.ManagedTransaction) error {
		recs, err := run(ctx, tx, cyLevels, map[string]any{"corpus": corpus})
		if err != nil {
			return err
		}
		if len(recs) != 1 {
			return fmt.Errorf("levels query returned %d rows", len(recs))
		}
		n = int(asInt(recs[0].Values[0]))
		return nil
	})
	return n, err
}

// Corpora lists the corpora written to and not dropped, sorted.
func (s *store) Corpora(ctx context.Context) ([]string, error) {
	var out []string
	err := s.read(ctx, "listing corpora", func(tx neo4j.ManagedTransaction) error {
		recs, err := run(ctx, tx, cyCorpora, nil)
		if err != nil {
			return err
		}
		out = nil
		for _, r := range recs {
			out = append(out, asString(r.Values[0]))
		}
		return nil
	})
	slices.Sort(out)
	return out, err
}

// DropCorpus deletes a corpus and everything in it, in one transaction.
func (s *store) DropCorpus(ctx context.Context, corpus string) error {
	return s.write(ctx, "dropping corpus "+corpus, func(tx neo4j.ManagedTransaction) error {
		for _, q := range dropCorpus {
			if _, err := run(ctx, tx, q, map[string]any{"corpus": corpus}); err != nil {
				return err
			}
		}
		return nil
	})
}

const cyContributions = `
UNWIND $rows AS id
MATCH (c:Chunk {corpus: $corpus, id: id})
WHERE c.hash IS NOT NULL
RETURN id, c.contrib AS contrib`

// Contributions returns the stored contributions of the given chunks that have one.
func (s *store) Contributions(ctx context.Context, corpus string, chunkIDs []string) (map[string]graphstore.Contribution, error) {
	out := make(map[string]graphstore.Contribution, len(chunkIDs))
	err := s.read(ctx, "reading chunk contributions in "+corpus, func(tx neo4j.ManagedTransaction) error {
		recs, err := runBatched(ctx, s, tx, cyContributions, map[string]any{"corpus": corpus}, distinct(chunkIDs))
		if err != nil {
			return err
		}
		clear(out)
		for _, r := range recs {
			id := asString(r.Values[0])
			ct, err := decodeContribution(id, r.Values[1])
			if err != nil {
				return err
			}
			out[id] = *ct
		}
		return nil
	})
	return out, err
}

const cyChunkEntities = `
UNWIND $rows AS id
MATCH (c:Chunk {corpus: $corpus, id: id})
RETURN id, [(c)-[:MENTIONS]->(e:Entity) | e.key] AS keys`

// ChunkEntities returns the entity keys each stored chunk mentions, sorted.
func (s *store) ChunkEntities(ctx context.Context, corpus string, chunkIDs []string) (map[string][]string, error) {
	out := make(map[string][]string, len(chunkIDs))
	err := s.read(ctx, "reading chunk entities in "+corpus, func(tx neo4j.ManagedTransaction) error {
		recs, err := runBatched(ctx, s, tx, cyChunkEntities, map[string]any{"corpus": corpus}, distinct(chunkIDs))
		if err != nil {
			return err
		}
		clear(out)
		for _, r := range recs {
			keys := asStrings(r.Values[1])
			if keys == nil {
				keys = []string{} // a stored chunk that mentions nothing
			}
			slices.Sort(keys)
			out[asString(r.Values[0])] = keys
		}
		return nil
	})
	return out, err
}
