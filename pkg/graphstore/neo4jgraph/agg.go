package neo4jgraph

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

// This file holds the pure half of the driver: turning contributions into
// statement parameters and provenance rows back into aggregates. It follows the
// rules of package graphstore with its helpers, so the aggregates are the ones
// boltgraph computes.

// chunkWrite is one chunk of a Merge after validation, or a removal when
// contribution is nil.
type chunkWrite struct {
	id   string
	ct   *graphstore.Contribution
	hash string
}

// prepareMerge validates the batch and keeps, per chunk id, the last occurrence
// (applying a batch in order means the last one wins), sorted by id so that
// every transaction locks chunks in the same order.
func prepareMerge(batch []graphstore.ChunkExtraction) ([]chunkWrite, error) {
	byID := make(map[string]int, len(batch))
	var out []chunkWrite
	for _, ce := range batch {
		ct, err := graphstore.Contribute(ce)
		if err != nil {
			return nil, err
		}
		h, err := contributionHash(&ct)
		if err != nil {
			return nil, err
		}
		w := chunkWrite{id: ct.ChunkID, ct: &ct, hash: h}
		if i, ok := byID[ct.ChunkID]; ok {
			out[i] = w
			continue
		}
		byID[ct.ChunkID] = len(out)
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b chunkWrite) int { return strings.Compare(a.id, b.id) })
	return out, nil
}

// prepareRemove dedupes and sorts chunk ids for removal.
func prepareRemove(ids []string) []chunkWrite {
	s := slices.Clone(ids)
	slices.Sort(s)
	s = slices.Compact(s)
	out := make([]chunkWrite, len(s))
	for i, id := range s {
		out[i] = chunkWrite{id: id}
	}
	return out
}

// contributionHash identifies a contribution's content, so that a replayed
// chunk is recognized with one read and changes nothing.
func contributionHash(ct *graphstore.Contribution) (string, error) {
	b, err := json.Marshal(ct)
	if err != nil {
		return "", fmt.Errorf("encoding contribution of chunk %q: %w", ct.ChunkID, err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// pairKey is a directed relationship identity.
type pairKey struct{ src, dst string }

// oldChunk is what the database holds about a chunk before the write.
type oldChunk struct {
	exists bool
	hash   string
	keys   []string  // entities it mentions
	pairs  []pairKey // relationships it supports
}

// plan is the set of rows one Merge or RemoveChunks sends.
type plan struct {
	changed     []chunkWrite // chunks whose provenance is replaced (or removed)
	keys        []string     // affected entities, sorted
	pairs       []pairKey    // affected relationships, sorted
	oldEvidence []map[string]any
	chunkRows   []map[string]any
	mentions    []map[string]any
	evidence    []map[string]any
}

// makePlan compares the new contributions with the stored ones and lists what
// must be rewritten; chunks whose content hash is unchanged are left alone.
func makePlan(writes []chunkWrite, old map[string]oldChunk) plan {
	var p plan
	keys := map[string]struct{}{}
	pairs := map[pairKey]struct{}{}
	for _, w := range writes {
		o := old[w.id]
		if w.ct != nil && o.exists && o.hash == w.hash {
			continue // a replay: nothing to change
		}
		if w.ct == nil && !o.exists {
			continue // removing an unknown chunk
		}
		p.changed = append(p.changed, w)
		for _, k := range o.keys {
			keys[k] = struct{}{}
		}
		for _, pr := range o.pairs {
			pairs[pr] = struct{}{}
			p.oldEvidence = append(p.oldEvidence, map[string]any{"chunk": w.id, "s": pr.src, "t": pr.dst})
		}
		if w.ct == nil {
			continue
		}
		var src, dst []string
		for _, r := range w.ct.Relations {
			src, dst = append(src, r.SourceKey), append(dst, r.TargetKey)
		}
		p.chunkRows = append(p.chunkRows, map[string]any{
			"id": w.id, "document": w.ct.DocumentID, "hash": w.hash,
			"relSrc": orEmpty(src), "relDst": orEmpty(dst),
		})
		for _, e := range w.ct.Entities {
			keys[e.Key] = struct{}{}
			p.mentions = append(p.mentions, map[string]any{
				"chunk": w.id, "key": e.Key,
				"names": orEmpty(e.Names), "types": orEmpty(e.Types), "descs": orEmpty(e.Descriptions),
			})
		}
		for _, r := range w.ct.Relations {
			pairs[pairKey{r.SourceKey, r.TargetKey}] = struct{}{}
			p.evidence = append(p.evidence, map[string]any{
				"chunk": w.id, "s": r.SourceKey, "t": r.TargetKey, "strength": r.Strength,
				"types": orEmpty(r.Types), "descs": orEmpty(r.Descriptions),
			})
		}
	}
	for k := range keys {
		p.keys = append(p.keys, k)
	}
	slices.Sort(p.keys)
	for pr := range pairs {
		p.pairs = append(p.pairs, pr)
	}
	slices.SortFunc(p.pairs, comparePairs)
	return p
}

func comparePairs(a, b pairKey) int {
	return cmp.Or(strings.Compare(a.src, b.src), strings.Compare(a.dst, b.dst))
}

// orEmpty turns nil into an empty list, which Neo4j stores as a property
// (a nil slice would be sent as null and remove it).
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// mentionRow is one MENTIONS relationship: what one chunk says about an entity.
type mentionRow struct {
	chunk               string
	names, types, descs []string
}

// evidenceRow is one EVIDENCE relationship: what one chunk says about a pair.
type evidenceRow struct {
	chunk        string
	strength     float64
	types, descs []string
}

// descSummary is the Descriptions/Description part of an aggregate.
type descSummary struct {
	first   []string // the MaxDescriptions smallest, sorted
	longest string
	fp      int64 // fingerprint of the whole set, see fingerprint
}

func summarizeDescs(set map[string]struct{}) descSummary {
	all := make([]string, 0, len(set))
	for d := range set {
		all = append(all, d)
	}
	slices.Sort(all)
	var d descSummary
	if len(all) > 0 {
		d.first = slices.Clone(all[:min(len(all), graphstore.MaxDescriptions)])
	}
	d.longest = graphstore.Longest(all)
	d.fp = fingerprint(all)
	return d
}

// fingerprint identifies a set of descriptions, so that a summary stays current
// while the set it was written from is unchanged. It is order free: a sum of
// FNV-1a hashes plus a multiple of the count, as boltgraph computes it.
func fingerprint(descs []string) int64 {
	var sum uint64
	for _, s := range descs {
		h := fnv.New64a()
		h.Write([]byte(s))
		sum += h.Sum64()
	}
	return int64(sum + uint64(len(descs))*0x9e3779b97f4a7c15)
}

// entityAgg is the stored aggregate of one entity.
type entityAgg struct {
	key, name, typ string
	descs          descSummary
	mentions       int
	chunkIDs       []string
}

// aggregateEntity applies the Name, Type, Description and provenance rules of
// package graphstore to an entity's mentions.
func aggregateEntity(key string, rows []mentionRow) entityAgg {
	names, types := map[string]int{}, map[string]int{}
	descs := map[string]struct{}{}
	a := entityAgg{key: key, mentions: len(rows), chunkIDs: make([]string, 0, len(rows))}
	for _, r := range rows {
		a.chunkIDs = append(a.chunkIDs, r.chunk)
		for _, n := range r.names {
			names[n]++
		}
		for _, t := range r.types {
			types[t]++
		}
		for _, d := range r.descs {
			descs[d] = struct{}{}
		}
	}
	slices.Sort(a.chunkIDs)
	a.name = graphstore.MostFrequent(names)
	if a.name == "" {
		a.name = key // only ever implied by relationships
	}
	a.typ = graphstore.MostFrequent(types)
	a.descs = summarizeDescs(descs)
	return a
}

func (a entityAgg) params() map[string]any {
	return map[string]any{
		"key": a.key, "name": a.name, "type": a.typ, "longest": a.descs.longest,
		"descriptions": orEmpty(a.descs.first), "descFP": a.descs.fp,
		"mentions": a.mentions, "chunkIds": orEmpty(a.chunkIDs),
	}
}

// relAgg is the stored aggregate of one directed relationship.
type relAgg struct {
	pair     pairKey
	typ      string
	descs    descSummary
	weight   float64
	chunkIDs []string
}

// aggregateRelation applies the relationship rules: the weight is the sum of the
// chunks' strengths taken in chunk id order, so it is exact for replays and does
// not depend on the order chunks arrived in.
func aggregateRelation(p pairKey, rows []evidenceRow) relAgg {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b evidenceRow) int { return strings.Compare(a.chunk, b.chunk) })
	types := map[string]int{}
	descs := map[string]struct{}{}
	a := relAgg{pair: p, chunkIDs: make([]string, 0, len(rows))}
	for _, r := range rows {
		a.chunkIDs = append(a.chunkIDs, r.chunk)
		a.weight += r.strength
		for _, t := range r.types {
			types[t]++
		}
		for _, d := range r.descs {
			descs[d] = struct{}{}
		}
	}
	a.typ = graphstore.MostFrequent(types)
	a.descs = summarizeDescs(descs)
	return a
}

func (a relAgg) params() map[string]any {
	return map[string]any{
		"s": a.pair.src, "t": a.pair.dst, "type": a.typ, "longest": a.descs.longest,
		"descriptions": orEmpty(a.descs.first), "weight": a.weight, "chunkIds": orEmpty(a.chunkIDs),
	}
}

// entityView builds the public entity from its stored properties.
func entityView(key string, v map[string]any, communities []string) graphstore.Entity {
	e := graphstore.Entity{
		Key:          key,
		Name:         asString(v["name"]),
		Type:         asString(v["type"]),
		Description:  asString(v["longest"]),
		Descriptions: asStrings(v["descriptions"]),
		ChunkIDs:     asStrings(v["chunkIds"]),
		MentionCount: int(asInt(v["mentions"])),
		PageRank:     asFloat(v["pagerank"]),
		Communities:  communities,
	}
	if sum := asString(v["summary"]); sum != "" && asInt(v["summaryFP"]) == asInt(v["descFP"]) {
		e.Description = sum
	}
	return e
}

// Conversions of driver values; a missing property reads as the zero value.

func asString(v any) string {
	s, _ := v.(string)
	return s
}

func asInt(v any) int64 {
	i, _ := v.(int64)
	return i
}

func asFloat(v any) float64 {
	switch f := v.(type) {
	case float64:
		return f
	case int64:
		return float64(f)
	}
	return 0
}

// asStrings converts a list value; an empty or missing list is nil, as
// boltgraph returns it.
func asStrings(v any) []string {
	l, _ := v.([]any)
	if len(l) == 0 {
		return nil
	}
	out := make([]string, len(l))
	for i, x := range l {
		out[i] = asString(x)
	}
	return out
}
