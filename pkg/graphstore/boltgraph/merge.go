package boltgraph

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

// pair is a directed relationship identity.
type pair struct{ src, dst string }

// undirected returns the pair with its ends ordered, the identity of an adj entry.
func (p pair) undirected() pair {
	if p.dst < p.src {
		return pair{p.dst, p.src}
	}
	return p
}

// mergeTx caches the aggregates a write touches so that subtracting a chunk's old
// contribution and adding its new one costs one read and one write per record.
type mergeTx struct {
	c        *corpusTx
	ents     map[string]*entRec
	rels     map[pair]*relRec
	adjDirty map[pair]struct{}
	// Provenance entries are only written during a merge, so they wait here to be
	// written in key order (see writeSorted).
	entChunks, relChunks pending
}

func newMergeTx(c *corpusTx) *mergeTx {
	return &mergeTx{c: c, ents: map[string]*entRec{}, rels: map[pair]*relRec{}, adjDirty: map[pair]struct{}{},
		entChunks: pending{}, relChunks: pending{}}
}

// pending holds the last write per key: a value, or nil for a delete.
type pending map[string][]byte

var emptyValue = []byte{}

// writeSorted applies writes in key order. bbolt inserts into a node's sorted
// slice, shifting what follows; in key order a node taking many new keys in one
// transaction (a fresh corpus, a run of new entities) shifts nothing, where random
// order costs time quadratic in their number.
func writeSorted(b *bolt.Bucket, w pending) error {
	for _, k := range slices.Sorted(maps.Keys(w)) {
		var err error
		if v := w[k]; v == nil {
			err = b.Delete([]byte(k))
		} else {
			err = b.Put([]byte(k), v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (m *mergeTx) ent(key string) (*entRec, error) {
	if r, ok := m.ents[key]; ok {
		return r, nil
	}
	r, err := getEnt(m.c, key)
	if err != nil {
		return nil, err
	}
	if r == nil {
		r = &entRec{}
	}
	m.ents[key] = r
	return r, nil
}

func (m *mergeTx) rel(p pair) (*relRec, error) {
	if r, ok := m.rels[p]; ok {
		return r, nil
	}
	r, err := getRel(m.c, p.src, p.dst)
	if err != nil {
		return nil, err
	}
	if r == nil {
		r = &relRec{}
	}
	m.rels[p] = r
	return r, nil
}

// apply adds (sign 1) or subtracts (sign -1) one chunk's contribution.
func (m *mergeTx) apply(ct *graphstore.Contribution, sign int) error {
	for _, e := range ct.Entities {
		r, err := m.ent(e.Key)
		if err != nil {
			return err
		}
		r.Mentions += sign
		r.Names.add(e.Names, sign)
		r.Types.add(e.Types, sign)
		if err := countDescs(m.c.entDescs, keyPrefix(e.Key), &r.Descs, e.Descriptions, sign); err != nil {
			return err
		}
		k := string(append(lp(nil, e.Key), ct.ChunkID...))
		m.entChunks[k] = nil
		if sign > 0 {
			m.entChunks[k] = emptyValue
		}
	}
	for _, rc := range ct.Relations {
		p := pair{rc.SourceKey, rc.TargetKey}
		r, err := m.rel(p)
		if err != nil {
			return err
		}
		r.Chunks += sign
		r.Types.add(rc.Types, sign)
		if err := countDescs(m.c.relDescs, pairPrefix(p.src, p.dst), &r.Descs, rc.Descriptions, sign); err != nil {
			return err
		}
		k := string(append(lp(lp(nil, p.src), p.dst), ct.ChunkID...))
		m.relChunks[k] = nil
		if sign > 0 {
			m.relChunks[k] = putFloat(rc.Strength)
		}
		m.adjDirty[p.undirected()] = struct{}{}
	}
	return nil
}

// flush writes the provenance and the cached aggregates back, deleting the
// aggregates no chunk supports; every bucket is written in key order.
func (m *mergeTx) flush() error {
	if err := writeSorted(m.c.entChunks, m.entChunks); err != nil {
		return fmt.Errorf("indexing entity chunks: %w", err)
	}
	if err := writeSorted(m.c.relChunks, m.relChunks); err != nil {
		return fmt.Errorf("indexing relationship chunks: %w", err)
	}
	ents := pending{}
	for key, r := range m.ents {
		ents[key] = nil
		if r.Mentions > 0 {
			if err := refreshLongest(m.c.entDescs, keyPrefix(key), &r.Descs); err != nil {
				return err
			}
			ents[key] = encodeEnt(r)
		}
	}
	if err := writeSorted(m.c.ents, ents); err != nil {
		return fmt.Errorf("storing entities: %w", err)
	}
	rels := pending{}
	for p, r := range m.rels {
		pk := string(pairKey(p.src, p.dst))
		rels[pk] = nil
		if r.Chunks <= 0 {
			continue
		}
		if err := m.resum(p, r); err != nil {
			return err
		}
		rels[pk] = encodeRel(r)
	}
	if err := writeSorted(m.c.rels, rels); err != nil {
		return fmt.Errorf("storing relationships: %w", err)
	}
	return m.flushAdj()
}

// resum recomputes a relationship's weight from relchunks in chunk id order (exact
// for replays, independent of arrival order) and its longest description.
func (m *mergeTx) resum(p pair, r *relRec) error {
	r.Weight = 0
	if err := scanPrefix(m.c.relChunks, lp(lp(nil, p.src), p.dst), func(_, v []byte) error {
		s, err := getFloat(v)
		r.Weight += s
		return err
	}); err != nil {
		return err
	}
	return refreshLongest(m.c.relDescs, pairPrefix(p.src, p.dst), &r.Descs)
}

// flushAdj rewrites the adjacency entries, both directions, of the pairs touched.
func (m *mergeTx) flushAdj() error {
	adj := pending{}
	for p := range m.adjDirty {
		var w float64
		n := 0
		for _, d := range []pair{p, {p.dst, p.src}} {
			r, err := m.rel(d) // cached ones are current, others are read from the tx
			if err != nil {
				return err
			}
			if r.Chunks > 0 {
				w += r.Weight
				n++
			}
		}
		for _, d := range []pair{p, {p.dst, p.src}} {
			k := string(pairKey(d.src, d.dst))
			adj[k] = nil
			if n > 0 {
				adj[k] = adjValue(w, n)
			}
		}
	}
	if err := writeSorted(m.c.adj, adj); err != nil {
		return fmt.Errorf("updating adjacency: %w", err)
	}
	return nil
}

func loadContribution(c *corpusTx, chunkID string) (*graphstore.Contribution, error) {
	v := c.chunks.Get([]byte(chunkID))
	if v == nil {
		return nil, nil
	}
	ct := new(graphstore.Contribution)
	if err := decodeContribution(v, ct); err != nil {
		return nil, fmt.Errorf("chunk %q: %w", chunkID, err)
	}
	return ct, nil
}

// Merge replaces the contributions of the batch's chunks in one fsync'ed
// transaction.
func (s *store) Merge(ctx context.Context, corpus string, batch []graphstore.ChunkExtraction) error {
	cts := make([]graphstore.Contribution, len(batch))
	for i, ce := range batch {
		var err error
		if cts[i], err = graphstore.Contribute(ce); err != nil {
			return fmt.Errorf("merging into %s: %w", corpus, err)
		}
	}
	if len(cts) == 0 {
		return s.Ping(ctx)
	}
	// Chunk records then go in in key order (see writeSorted); the result does not
	// depend on the order, and a stable sort keeps the last of a repeated chunk last.
	slices.SortStableFunc(cts, func(a, b graphstore.Contribution) int { return strings.Compare(a.ChunkID, b.ChunkID) })
	return s.update(ctx, "merging into "+corpus, func(tx *bolt.Tx) error {
		c, err := openCorpus(tx, corpus, true)
		if err != nil {
			return err
		}
		m := newMergeTx(c)
		for i := range cts {
			if i%64 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			v := encodeContribution(&cts[i])
			stored := c.chunks.Get([]byte(cts[i].ChunkID))
			if bytes.Equal(stored, v) {
				continue // a replay (redelivered message): nothing to change
			}
			if stored != nil {
				old := new(graphstore.Contribution)
				if err := decodeContribution(stored, old); err != nil {
					return fmt.Errorf("chunk %q: %w", cts[i].ChunkID, err)
				}
				if err := m.apply(old, -1); err != nil {
					return err
				}
			}
			if err := m.apply(&cts[i], 1); err != nil {
				return err
			}
			if err := c.chunks.Put([]byte(cts[i].ChunkID), v); err != nil {
				return fmt.Errorf("storing chunk: %w", err)
			}
		}
		if err := ctx.Err(); err != nil {
			return err // a cancelled Merge leaves nothing behind
		}
		return m.flush()
	})
}

// RemoveChunks subtracts the contributions of the given chunks.
func (s *store) RemoveChunks(ctx context.Context, corpus string, chunkIDs []string) error {
	return s.update(ctx, "removing chunks from "+corpus, func(tx *bolt.Tx) error {
		c, err := openCorpus(tx, corpus, false)
		if c == nil || err != nil {
			return err
		}
		m := newMergeTx(c)
		for _, id := range chunkIDs {
			old, err := loadContribution(c, id)
			if err != nil {
				return err
			}
			if old == nil {
				continue
			}
			if err := m.apply(old, -1); err != nil {
				return err
			}
			if err := c.chunks.Delete([]byte(id)); err != nil {
				return fmt.Errorf("deleting chunk: %w", err)
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		return m.flush()
	})
}

// updateEnts rewrites the existing entities among keys with fn.
func (s *store) updateEnts(ctx context.Context, doing, corpus string, keys func(yield func(string) bool), fn func(string, *entRec)) error {
	return s.update(ctx, doing+" in "+corpus, func(tx *bolt.Tx) error {
		c, err := openCorpus(tx, corpus, false)
		if c == nil || err != nil {
			return err
		}
		for key := range keys {
			r, err := getEnt(c, key)
			if err != nil {
				return err
			}
			if r == nil {
				continue // the entity vanished since the caller computed its value
			}
			fn(key, r)
			if err := c.ents.Put([]byte(key), encodeEnt(r)); err != nil {
				return fmt.Errorf("storing entity: %w", err)
			}
		}
		return ctx.Err()
	})
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// SetDescriptions stores summaries; each stays current until the entity's set of
// mention descriptions changes.
func (s *store) SetDescriptions(ctx context.Context, corpus string, descs map[string]string) error {
	return s.updateEnts(ctx, "setting descriptions", corpus, mapKeys(descs), func(k string, r *entRec) {
		r.Summary = descs[k]
		r.SummaryFP = 0
		if r.Summary != "" {
			r.SummaryFP = r.Descs.fingerprint()
		}
	})
}

// SetPageRank stores PageRank scores.
func (s *store) SetPageRank(ctx context.Context, corpus string, scores map[string]float64) error {
	return s.updateEnts(ctx, "setting pagerank", corpus, mapKeys(scores), func(k string, r *entRec) {
		r.PageRank = scores[k]
	})
}

// ReplaceCommunities replaces the community hierarchy of a corpus.
func (s *store) ReplaceCommunities(ctx context.Context, corpus string, cs []graphstore.Community) error {
	norm, err := graphstore.NormalizeCommunities(cs)
	if err != nil {
		return fmt.Errorf("replacing communities of %s: %w", corpus, err)
	}
	return s.update(ctx, "replacing communities of "+corpus, func(tx *bolt.Tx) error {
		c, err := openCorpus(tx, corpus, true)
		if err != nil {
			return err
		}
		cb := tx.Bucket(bucketCorpora).Bucket([]byte(corpus))
		for _, name := range [][]byte{bComms, bMembership} {
			if err := cb.DeleteBucket(name); err != nil {
				return fmt.Errorf("clearing %s: %w", name, err)
			}
			if _, err := cb.CreateBucket(name); err != nil {
				return fmt.Errorf("recreating %s: %w", name, err)
			}
		}
		c.comms, c.membership = cb.Bucket(bComms), cb.Bucket(bMembership)
		// Both buckets are written whole, in key order: bbolt keeps a node's keys in one
		// sorted slice until commit, so keys in random order cost a copy of the slice
		// each (quadratic: 49 s of a 30k-chunk corpus's final detection); full pages
		// since nothing is inserted between these keys before the next rewrite.
		c.comms.FillPercent, c.membership.FillPercent = 1, 1
		slices.SortFunc(norm, func(a, b graphstore.Community) int { return strings.Compare(a.ID, b.ID) })
		membership := map[string][]string{}
		levels := 0
		for i := range norm {
			if i%64 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			cm := &norm[i]
			levels = max(levels, cm.Level+1)
			if cm.RelationshipCount, err = countAmong(c, cm.Members); err != nil {
				return err
			}
			if err := c.comms.Put([]byte(cm.ID), encodeCommunity(cm)); err != nil {
				return fmt.Errorf("storing community: %w", err)
			}
			for _, k := range cm.Members {
				ls := membership[k]
				for len(ls) <= cm.Level {
					ls = append(ls, "")
				}
				ls[cm.Level] = cm.ID
				membership[k] = ls
			}
		}
		for _, k := range slices.Sorted(maps.Keys(membership)) {
			if err := c.membership.Put([]byte(k), encodeStrs(membership[k])); err != nil {
				return fmt.Errorf("storing membership: %w", err)
			}
		}
		return c.meta.Put(kLevels, []byte(fmt.Sprint(levels)))
	})
}

// countAmong counts the directed relationships with both ends in sorted keys.
func countAmong(c *corpusTx, keys []string) (int, error) {
	set := make(map[string]struct{}, len(keys))
	for _, k := range keys {
		set[k] = struct{}{}
	}
	total := 0
	for _, k := range keys {
		err := scanPrefix(c.adj, lp(nil, k), func(rest, v []byte) error {
			if _, in := set[string(rest)]; !in || string(rest) < k {
				return nil // each pair once, from its smaller end
			}
			_, n, err := readAdj(v)
			total += n
			return err
		})
		if err != nil {
			return 0, err
		}
	}
	return total, nil
}
