package neo4jgraph

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/klauspost/compress/flate"
	"hash/fnv"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

// This file holds the pure half of the driver: turning contributions into
// changes of the counter states that aggregates derive from, and states into
// statement parameters. It follows the rules of package graphstore with its
// helpers, so the aggregates are the ones boltgraph computes.

// chunkWrite is one chunk of a Merge after validation, or a removal when
// contribution is nil.
type chunkWrite struct {
	id      string
	ct      *graphstore.Contribution
	contrib []byte // ct as deflated JSON, stored on the Chunk to subtract it later
	hash    string
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
		b, h, err := encodeContribution(&ct)
		if err != nil {
			return nil, err
		}
		w := chunkWrite{id: ct.ChunkID, ct: &ct, contrib: b, hash: h}
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

// encodeContribution returns the contribution as stored, deflated JSON, and
// the hash of the JSON, which identifies its content so that a replayed chunk
// is recognized with one read and changes nothing. Deflate shrinks the
// benchmark's repetitive JSON six times: contrib was the largest property a
// Merge writes (see ADR 0036). klauspost/compress writes the same format as
// compress/flate, 17% faster here (ADR 0041).
func encodeContribution(ct *graphstore.Contribution) ([]byte, string, error) {
	b, err := json.Marshal(ct)
	if err != nil {
		return nil, "", fmt.Errorf("encoding contribution of chunk %q: %w", ct.ChunkID, err)
	}
	sum := sha256.Sum256(b)
	var z bytes.Buffer
	w := deflaters.Get().(*flate.Writer)
	defer deflaters.Put(w)
	w.Reset(&z)
	_, err = w.Write(b)
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		return nil, "", fmt.Errorf("compressing contribution of chunk %q: %w", ct.ChunkID, err)
	}
	return z.Bytes(), hex.EncodeToString(sum[:]), nil
}

// deflaters recycles compressors: a new flate.Writer allocates about 1 MiB,
// which made a 1000-chunk Merge spend 0.65 s allocating them.
var deflaters = sync.Pool{New: func() any {
	w, err := flate.NewWriter(nil, flate.BestSpeed)
	if err != nil {
		panic(err) // only for an invalid level
	}
	return w
}}

// pairKey is a directed relationship identity.
type pairKey struct{ src, dst string }

// pairHash is the indexed pk property of a pair's RELATED relationship:
// FNV-1a of the length-prefixed corpus and keys. It only narrows an index
// seek, whose ends are then checked, so collisions are safe.
func pairHash(corpus string, p pairKey) int64 {
	h := fnv.New64a()
	for _, s := range []string{corpus, p.src, p.dst} {
		var n [binary.MaxVarintLen64]byte
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
		h.Write([]byte(s))
	}
	return int64(h.Sum64())
}

// oldChunk is what the database holds about a chunk before the write.
type oldChunk struct {
	exists bool
	hash   string
	ct     *graphstore.Contribution // the stored contribution, nil for a new chunk
}

// decodeContribution reads a chunk's stored contribution: deflated JSON, or
// the plain JSON string that graphs of ADR 0029 hold.
func decodeContribution(id string, stored any) (*graphstore.Contribution, error) {
	var b []byte
	switch v := stored.(type) {
	case string:
		b = []byte(v)
	case []byte:
		var err error
		if b, err = io.ReadAll(flate.NewReader(bytes.NewReader(v))); err != nil {
			return nil, fmt.Errorf("chunk %q: decompressing stored contribution: %w", id, err)
		}
	default:
		return nil, fmt.Errorf("chunk %q has no stored contribution: %w", id, errOldLayout)
	}
	ct := new(graphstore.Contribution)
	if err := json.Unmarshal(b, ct); err != nil {
		return nil, fmt.Errorf("chunk %q: decoding stored contribution: %w", id, err)
	}
	return ct, nil
}

// plan is what one Merge or RemoveChunks changes: the chunks whose contribution
// is replaced (or removed), with the old one, and the entities and pairs whose
// aggregates that moves.
type plan struct {
	changed []chunkWrite // chunks whose provenance is replaced (or removed)
	old     []*graphstore.Contribution
	keys    []string  // affected entities, sorted
	pairs   []pairKey // affected relationships, sorted
}

// makePlan compares the new contributions with the stored ones and lists what
// must be rewritten; chunks whose content hash is unchanged are left alone.
func makePlan(writes []chunkWrite, old map[string]oldChunk) plan {
	var p plan
	keys := map[string]struct{}{}
	pairs := map[pairKey]struct{}{}
	touch := func(ct *graphstore.Contribution) {
		if ct == nil {
			return
		}
		for _, e := range ct.Entities {
			keys[e.Key] = struct{}{}
		}
		for _, r := range ct.Relations {
			pairs[pairKey{r.SourceKey, r.TargetKey}] = struct{}{}
		}
	}
	for _, w := range writes {
		o := old[w.id]
		if w.ct != nil && o.exists && o.hash == w.hash {
			continue // a replay: nothing to change
		}
		if w.ct == nil && !o.exists {
			continue // removing an unknown chunk
		}
		p.changed = append(p.changed, w)
		p.old = append(p.old, o.ct)
		touch(o.ct)
		touch(w.ct)
	}
	p.keys = slices.Sorted(maps.Keys(keys))
	p.pairs = slices.SortedFunc(maps.Keys(pairs), comparePairs)
	return p
}

// fold subtracts each changed chunk's old contribution from the states and adds
// its new one. Every key and pair of the plan must have a state.
func (p *plan) fold(ents map[string]*entState, rels map[pairKey]*relState) {
	apply := func(ct *graphstore.Contribution, sign int) {
		if ct == nil {
			return
		}
		for _, e := range ct.Entities {
			ents[e.Key].add(e, sign)
		}
		for _, r := range ct.Relations {
			rels[pairKey{r.SourceKey, r.TargetKey}].add(r.Strength, r.Types, r.Descriptions, sign)
		}
	}
	for i, w := range p.changed {
		apply(p.old[i], -1)
		apply(w.ct, 1)
		if o := p.old[i]; o != nil {
			for _, r := range o.Relations {
				st := rels[pairKey{r.SourceKey, r.TargetKey}]
				st.gone = append(st.gone, w.id)
			}
		}
		if w.ct != nil {
			for _, r := range w.ct.Relations {
				st := rels[pairKey{r.SourceKey, r.TargetKey}]
				st.added = append(st.added, evidenceRow{chunk: w.id, strength: r.Strength})
			}
		}
	}
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

// optional and optionalList leave an empty aggregate out (nil: SET x += props
// removes the property), which reads back as empty. Most relationships have no
// description: storing "" and [] was 3-7% of the bytes a Merge wrote.
func optional(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func optionalList(l []string) any {
	if len(l) == 0 {
		return nil
	}
	return l
}

// tally is a multiset of strings: how many chunks gave each one.
type tally map[string]int

func (c *tally) add(ss []string, sign int) {
	if len(ss) == 0 {
		return
	}
	if *c == nil {
		*c = tally{}
	}
	for _, s := range ss {
		if n := (*c)[s] + sign; n > 0 {
			(*c)[s] = n
		} else {
			delete(*c, s)
		}
	}
}

// entState is the counter state of one entity, stored as JSON in Entity.agg:
// the number of chunks mentioning it and, per name, type and description, the
// number of chunks giving it. A Merge reads it instead of the mentions, so its
// cost does not grow with the chunks that mention the entity.
type entState struct {
	Mentions int   `json:"m"`
	Names    tally `json:"n,omitempty"`
	Types    tally `json:"t,omitempty"`
	Descs    tally `json:"d,omitempty"`
}

func (s *entState) add(e graphstore.EntityContribution, sign int) {
	s.Mentions += sign
	s.Names.add(e.Names, sign)
	s.Types.add(e.Types, sign)
	s.Descs.add(e.Descriptions, sign)
}

// params are the Entity properties derived from the state, agg included.
func (s *entState) params(key string) (map[string]any, error) {
	agg, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encoding state of entity %q: %w", key, err)
	}
	name := graphstore.MostFrequent(s.Names)
	if name == "" {
		name = key // only ever implied by relationships
	}
	d := summarizeDescs(s.Descs)
	return map[string]any{
		"name": name, "type": optional(graphstore.MostFrequentType(s.Types)),
		"longest": optional(d.longest), "descriptions": optionalList(d.first), "descFP": d.fp,
		"mentions": s.Mentions, "agg": string(agg),
	}, nil
}

// maxExactWeight bounds the weights kept by adding and subtracting whole
// strengths: below 2^53 every such float64 sum is exact, whatever the order.
const maxExactWeight = 1 << 53

// relState is the counter state of one relationship, stored as JSON in
// RELATED.agg, plus its weight (the RELATED.weight property).
type relState struct {
	Chunks int `json:"c"`
	// Frac counts the chunks whose strength is not a whole number.
	Frac  int   `json:"f,omitempty"`
	Types tally `json:"t,omitempty"`
	Descs tally `json:"d,omitempty"`
	// Last is the index of the last evidence bucket and LastLen its length
	// when Last > 0 (bucket 0 then holds all Chunks); see evidence.go.
	Last    int `json:"b,omitempty"`
	LastLen int `json:"l,omitempty"`

	weight float64
	// resum is set when weight can no longer be updated exactly in place and must
	// be re-summed from the evidence in chunk id order, as graphstore specifies.
	resum bool
	// gone are the changed chunks whose old contribution had the pair, added the
	// strengths their new contributions give it: the edit of the evidence.
	gone  []string
	added []evidenceRow
	// buckets, when set by rebucket, is the pair's whole evidence after the
	// Merge, and dirty the buckets to write; otherwise cyEditRelations edits
	// the stored lists.
	buckets [][]evidenceRow
	dirty   map[int]bool
}

// loaded marks a state read from the database: a weight summed from fractional
// strengths is only exact in chunk id order.
func (s *relState) loaded() { s.resum = s.Frac > 0 }

func (s *relState) add(strength float64, types, descs []string, sign int) {
	s.Chunks += sign
	s.Types.add(types, sign)
	s.Descs.add(descs, sign)
	if strength != math.Trunc(strength) {
		s.Frac += sign
		s.resum = true
	}
	s.weight += float64(sign) * strength
	if s.weight >= maxExactWeight {
		s.resum = true
	}
}

// params are the RELATED properties derived from the state, agg included.
func (s *relState) params() (map[string]any, error) {
	agg, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encoding relationship state: %w", err)
	}
	d := summarizeDescs(s.Descs)
	return map[string]any{
		"type": optional(graphstore.MostFrequentType(s.Types)), "longest": optional(d.longest),
		"descriptions": optionalList(d.first), "weight": s.weight, "agg": string(agg),
	}, nil
}

// evidenceRow is one entry of RELATED.chunks and RELATED.ws: a chunk's
// strength for a pair.
type evidenceRow struct {
	chunk    string
	strength float64
}

// evidenceLists splits evidence into the chunks and ws list properties.
func evidenceLists(ev []evidenceRow) ([]string, []float64) {
	chunks, ws := make([]string, len(ev)), make([]float64, len(ev))
	for i, e := range ev {
		chunks[i], ws[i] = e.chunk, e.strength
	}
	return chunks, ws
}

// sumEvidence sums strengths in chunk id order, as boltgraph does, so a weight
// does not depend on the order chunks arrived in.
func sumEvidence(rows []evidenceRow) float64 {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b evidenceRow) int { return strings.Compare(a.chunk, b.chunk) })
	var w float64
	for _, r := range rows {
		w += r.strength
	}
	return w
}

// descSummary is the Descriptions/Description part of an aggregate.
type descSummary struct {
	first   []string // the MaxDescriptions smallest, sorted
	longest string
	fp      int64 // fingerprint of the whole set, see fingerprint
}

func summarizeDescs(set tally) descSummary {
	all := slices.Sorted(maps.Keys(set))
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

// entityView builds the public entity from its stored properties and the ids
// of the chunks mentioning it (any order).
func entityView(key string, v map[string]any, chunkIDs, communities []string) graphstore.Entity {
	slices.Sort(chunkIDs)
	e := graphstore.Entity{
		Key:          key,
		Name:         asString(v["name"]),
		Type:         asString(v["type"]),
		Description:  asString(v["longest"]),
		Descriptions: asStrings(v["descriptions"]),
		ChunkIDs:     chunkIDs,
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
