package boltgraph

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

var (
	bChunks     = []byte("chunks")
	bEnts       = []byte("ents")
	bEntChunks  = []byte("entchunks")
	bEntDescs   = []byte("entdescs")
	bRelDescs   = []byte("reldescs")
	bRels       = []byte("rels")
	bRelChunks  = []byte("relchunks")
	bAdj        = []byte("adj")
	bComms      = []byte("comms")
	bMembership = []byte("membership")
	bMeta       = []byte("meta")
	kLevels     = []byte("levels")

	allBuckets = [][]byte{bChunks, bEnts, bEntChunks, bEntDescs, bRels, bRelChunks, bRelDescs, bAdj, bComms, bMembership, bMeta}
)

// corpusTx holds the buckets of one corpus inside one transaction.
type corpusTx struct {
	chunks, ents, entChunks, entDescs, rels, relChunks, relDescs, adj, comms, membership, meta *bolt.Bucket
}

// openCorpus returns the corpus buckets, or nil when the corpus does not exist and
// create is false.
func openCorpus(tx *bolt.Tx, corpus string, create bool) (*corpusTx, error) {
	root := tx.Bucket(bucketCorpora)
	if root == nil {
		return nil, fmt.Errorf("store file has no %q bucket", bucketCorpora)
	}
	cb := root.Bucket([]byte(corpus))
	if cb == nil {
		if !create {
			return nil, nil
		}
		var err error
		if cb, err = root.CreateBucket([]byte(corpus)); err != nil {
			return nil, fmt.Errorf("creating corpus bucket: %w", err)
		}
		for _, name := range allBuckets {
			if _, err := cb.CreateBucket(name); err != nil {
				return nil, fmt.Errorf("creating bucket %s: %w", name, err)
			}
		}
	}
	c := &corpusTx{
		chunks: cb.Bucket(bChunks), ents: cb.Bucket(bEnts), entChunks: cb.Bucket(bEntChunks), entDescs: cb.Bucket(bEntDescs),
		rels: cb.Bucket(bRels), relChunks: cb.Bucket(bRelChunks), relDescs: cb.Bucket(bRelDescs), adj: cb.Bucket(bAdj),
		comms: cb.Bucket(bComms), membership: cb.Bucket(bMembership), meta: cb.Bucket(bMeta),
	}
	for _, b := range []*bolt.Bucket{c.chunks, c.ents, c.entChunks, c.entDescs, c.rels, c.relChunks, c.relDescs, c.adj, c.comms, c.membership, c.meta} {
		if b == nil {
			return nil, fmt.Errorf("corpus %q is missing a bucket: file damaged", corpus)
		}
	}
	return c, nil
}

// lp appends s prefixed by its length, so that composite keys need no separator.
func lp(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// splitLP reads one length-prefixed component and returns it and the rest.
func splitLP(b []byte) (string, []byte, error) {
	n, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) < n {
		return "", nil, fmt.Errorf("corrupt composite key %x", b)
	}
	return string(b[w : w+int(n)]), b[w+int(n):], nil
}

func pairKey(src, dst string) []byte { return append(lp(nil, src), dst...) }

// scanPrefix calls fn with the rest of every key starting with prefix, in order.
func scanPrefix(b *bolt.Bucket, prefix []byte, fn func(rest, v []byte) error) error {
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if err := fn(k[len(prefix):], v); err != nil {
			return err
		}
	}
	return nil
}

// entRec is the stored aggregate of one entity; counts are numbers of chunks. The
// descriptions themselves live in entdescs so the record does not grow with every
// chunk that describes a hub entity differently.
type entRec struct {
	Names     counts
	Types     counts
	Descs     descSet
	Mentions  int
	PageRank  float64
	Summary   string
	SummaryFP uint64
}

// relRec is the stored aggregate of one directed relationship; its descriptions
// live in reldescs.
type relRec struct {
	Types  counts
	Descs  descSet
	Chunks int
	Weight float64
}

// descSet summarizes the distinct descriptions counted under one prefix of a
// *descs bucket (description -> number of chunks giving it).
type descSet struct {
	N       int    // distinct descriptions
	Sum     uint64 // sum of their hashes: an order-free set fingerprint
	Longest string
	stale   bool // Longest was removed; recomputed before the record is written
}

func descHash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// fingerprint identifies the set of descriptions a summary was written from; a
// summary is current while the set is unchanged.
func (d *descSet) fingerprint() uint64 { return d.Sum + uint64(d.N)*0x9e3779b97f4a7c15 }

// longer reports whether a beats b under the Description rule (longest, then
// smallest).
func longer(a, b string) bool { return len(a) > len(b) || (len(a) == len(b) && a < b) }

// countDescs adds (sign 1) or removes (sign -1) one chunk's descriptions under
// prefix and keeps d in step.
func countDescs(b *bolt.Bucket, prefix []byte, d *descSet, descs []string, sign int) error {
	for _, s := range descs {
		k := append(slices.Clip(prefix), s...)
		prev := 0
		if v := b.Get(k); v != nil {
			n, w := binary.Uvarint(v)
			if w <= 0 {
				return fmt.Errorf("corrupt description count %x", v)
			}
			prev = int(n)
		}
		next := prev + sign
		var err error
		if next > 0 {
			err = b.Put(k, binary.AppendUvarint(nil, uint64(next)))
		} else {
			err = b.Delete(k)
		}
		if err != nil {
			return fmt.Errorf("counting description: %w", err)
		}
		switch {
		case prev == 0 && next == 1:
			d.N++
			d.Sum += descHash(s)
			if longer(s, d.Longest) {
				d.Longest = s
			}
		case prev == 1 && next <= 0:
			d.N--
			d.Sum -= descHash(s)
			if s == d.Longest {
				d.stale = true
			}
		}
	}
	return nil
}

// refreshLongest recomputes d.Longest after its description was removed.
func refreshLongest(b *bolt.Bucket, prefix []byte, d *descSet) error {
	if !d.stale {
		return nil
	}
	d.Longest, d.stale = "", false
	return scanPrefix(b, prefix, func(rest, _ []byte) error {
		if longer(string(rest), d.Longest) {
			d.Longest = string(rest)
		}
		return nil
	})
}

// firstDescs returns the MaxDescriptions smallest descriptions under prefix.
func firstDescs(b *bolt.Bucket, prefix []byte) []string {
	var out []string
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(out) < graphstore.MaxDescriptions; k, _ = c.Next() {
		out = append(out, string(k[len(prefix):]))
	}
	return out
}

func keyPrefix(key string) []byte       { return lp(nil, key) }
func pairPrefix(src, dst string) []byte { return lp(lp(nil, src), dst) }

func getEnt(c *corpusTx, key string) (*entRec, error) {
	v := c.ents.Get([]byte(key))
	if v == nil {
		return nil, nil
	}
	r := new(entRec)
	if err := decodeEnt(v, r); err != nil {
		return nil, fmt.Errorf("entity %q: %w", key, err)
	}
	return r, nil
}

func getRel(c *corpusTx, src, dst string) (*relRec, error) {
	v := c.rels.Get(pairKey(src, dst))
	if v == nil {
		return nil, nil
	}
	r := new(relRec)
	if err := decodeRel(v, r); err != nil {
		return nil, fmt.Errorf("relationship %q>%q: %w", src, dst, err)
	}
	return r, nil
}

// entLists says which lists of an entity to read: each is one more lookup per item,
// which at 100k chunks is a page read from disk more often than not.
type entLists uint8

const (
	entDescs entLists = 1 << iota // Descriptions
	entRefs                       // ChunkIDs and Communities

	entBrief entLists = 0 // graphstore.Brief
	entAll            = entDescs | entRefs
)

// listsFor maps the read options of Entities to the lists read.
func listsFor(opts []graphstore.ReadOption) entLists {
	if graphstore.IsBrief(opts) {
		return entBrief
	}
	return entAll
}

// entity builds the public view of a stored entity with the lists asked for.
func entity(c *corpusTx, key string, r *entRec, lists entLists) (graphstore.Entity, error) {
	e := graphstore.Entity{
		Key:          key,
		Name:         r.Names.mostFrequent(),
		Type:         r.Types.mostFrequentType(),
		MentionCount: r.Mentions,
		PageRank:     r.PageRank,
		Description:  r.Descs.Longest,
	}
	if e.Name == "" {
		e.Name = key // only ever implied by relationships
	}
	if r.Summary != "" && r.SummaryFP == r.Descs.fingerprint() {
		e.Description = r.Summary
	}
	if lists&entDescs != 0 {
		e.Descriptions = firstDescs(c.entDescs, keyPrefix(key))
	}
	if lists&entRefs == 0 {
		return e, nil
	}
	e.ChunkIDs = make([]string, 0, r.Mentions)
	if err := scanPrefix(c.entChunks, lp(nil, key), func(rest, _ []byte) error {
		e.ChunkIDs = append(e.ChunkIDs, string(rest))
		return nil
	}); err != nil {
		return e, err
	}
	if v := c.membership.Get([]byte(key)); v != nil {
		var err error
		if e.Communities, err = decodeStrs(v, "membership"); err != nil {
			return e, fmt.Errorf("entity %q: %w", key, err)
		}
	}
	return e, nil
}

// relationship builds the public view of a stored relationship; brief leaves
// out the lists (graphstore.Brief), which are two more lookups.
func relationship(c *corpusTx, src, dst string, r *relRec, brief bool) graphstore.Relationship {
	rel := graphstore.Relationship{
		SourceKey: src, TargetKey: dst,
		Type:        r.Types.mostFrequentType(),
		Description: r.Descs.Longest,
		Weight:      r.Weight,
	}
	if brief {
		return rel
	}
	rel.Descriptions = firstDescs(c.relDescs, pairPrefix(src, dst))
	rel.ChunkIDs = make([]string, 0, r.Chunks)
	// The callback cannot fail, so neither can the scan.
	_ = scanPrefix(c.relChunks, pairPrefix(src, dst), func(rest, _ []byte) error {
		rel.ChunkIDs = append(rel.ChunkIDs, string(rest))
		return nil
	})
	return rel
}

func putFloat(f float64) []byte { return binary.BigEndian.AppendUint64(nil, math.Float64bits(f)) }

func getFloat(b []byte) (float64, error) {
	if len(b) < 8 {
		return 0, fmt.Errorf("corrupt float value %x", b)
	}
	return math.Float64frombits(binary.BigEndian.Uint64(b)), nil
}

// adjValue is the undirected weight of a pair and how many directed relationships
// (1 or 2) it sums.
func adjValue(w float64, n int) []byte { return binary.AppendUvarint(putFloat(w), uint64(n)) }

func readAdj(v []byte) (float64, int, error) {
	w, err := getFloat(v)
	if err != nil {
		return 0, 0, err
	}
	n, k := binary.Uvarint(v[8:])
	if k <= 0 {
		return 0, 0, fmt.Errorf("corrupt adjacency value %x", v)
	}
	return w, int(n), nil
}
