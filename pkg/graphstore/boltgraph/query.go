package boltgraph

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

// read runs fn on the corpus buckets; fn is not called when the corpus does not
// exist.
func (s *store) read(ctx context.Context, doing, corpus string, fn func(*corpusTx) error) error {
	return s.view(ctx, doing+" in "+corpus, func(tx *bolt.Tx) error {
		c, err := openCorpus(tx, corpus, false)
		if c == nil || err != nil {
			return err
		}
		return fn(c)
	})
}

// Entity returns one entity or graphstore.ErrNotFound.
func (s *store) Entity(ctx context.Context, corpus, key string) (graphstore.Entity, error) {
	var e graphstore.Entity
	found := false
	err := s.read(ctx, "reading entity", corpus, func(c *corpusTx) error {
		r, err := getEnt(c, key)
		if r == nil || err != nil {
			return err
		}
		found = true
		e, err = entity(c, key, r, entAll)
		return err
	})
	if err == nil && !found {
		err = fmt.Errorf("entity %q in %s: %w", key, corpus, graphstore.ErrNotFound)
	}
	return e, err
}

// Entities returns the existing entities among keys in the order given, each once.
func (s *store) Entities(ctx context.Context, corpus string, keys []string, opts ...graphstore.ReadOption) ([]graphstore.Entity, error) {
	lists := listsFor(opts)
	var out []graphstore.Entity
	err := s.read(ctx, "reading entities", corpus, func(c *corpusTx) error {
		seen := make(map[string]struct{}, len(keys))
		for i, k := range keys {
			if _, dup := seen[k]; dup {
				continue
			}
			seen[k] = struct{}{}
			if i%256 == 255 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			r, err := getEnt(c, k)
			if err != nil {
				return err
			}
			if r == nil {
				continue
			}
			e, err := entity(c, k, r, lists)
			if err != nil {
				return err
			}
			out = append(out, e)
		}
		return nil
	})
	return out, err
}

func byWeight(a, b graphstore.Relationship) int {
	return cmp.Or(cmp.Compare(b.Weight, a.Weight),
		strings.Compare(a.SourceKey, b.SourceKey), strings.Compare(a.TargetKey, b.TargetKey))
}

// outRelations appends the relationships leaving src whose target passes keep: a
// prefix scan of rels, which holds them in one key range, decoding only the kept.
func outRelations(c *corpusTx, src string, keep func(dst []byte) bool, brief bool, out []graphstore.Relationship) ([]graphstore.Relationship, error) {
	err := scanPrefix(c.rels, lp(nil, src), func(dst, v []byte) error {
		if !keep(dst) {
			return nil
		}
		var r relRec
		if err := decodeRel(v, &r); err != nil {
			return fmt.Errorf("relationship %q>%q: %w", src, dst, err)
		}
		out = append(out, relationship(c, src, string(dst), &r, brief))
		return nil
	})
	return out, err
}

// relationsAround collects, each once and heaviest first, the relationships with
// both ends in keys (among) or with at least one end in keys.
func relationsAround(ctx context.Context, c *corpusTx, keys []string, among, brief bool) ([]graphstore.Relationship, error) {
	set := make(map[string]struct{}, len(keys))
	for _, k := range keys {
		set[k] = struct{}{}
	}
	inSet := func(n []byte) bool { _, in := set[string(n)]; return in }
	keep := inSet
	if !among {
		keep = func([]byte) bool { return true }
	}
	var out []graphstore.Relationship
	var err error
	for i, k := range slices.Sorted(maps.Keys(set)) {
		if i%256 == 255 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if out, err = outRelations(c, k, keep, brief, out); err != nil {
			return nil, err
		}
		if among {
			continue
		}
		// Entering relationships from outside keys (those from a key are listed as
		// leaving it); adjacency names every neighbor in either direction.
		err = scanPrefix(c.adj, lp(nil, k), func(n, _ []byte) error {
			if inSet(n) {
				return nil
			}
			r, err := getRel(c, string(n), k)
			if r != nil {
				out = append(out, relationship(c, string(n), k, r, brief))
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out, byWeight)
	return out, nil
}

// RelationshipsOf returns the relationships touching any key, heaviest first.
func (s *store) RelationshipsOf(ctx context.Context, corpus string, keys []string, limit int) ([]graphstore.Relationship, error) {
	var out []graphstore.Relationship
	err := s.read(ctx, "reading relationships", corpus, func(c *corpusTx) error {
		var err error
		out, err = relationsAround(ctx, c, keys, false, false)
		return err
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, err
}

// RelationshipsAmong returns the relationships with both ends in keys.
func (s *store) RelationshipsAmong(ctx context.Context, corpus string, keys []string, opts ...graphstore.ReadOption) ([]graphstore.Relationship, error) {
	brief := graphstore.IsBrief(opts)
	var out []graphstore.Relationship
	err := s.read(ctx, "reading relationships among keys", corpus, func(c *corpusTx) error {
		var err error
		out, err = relationsAround(ctx, c, keys, true, brief)
		return err
	})
	return out, err
}

// Neighborhood walks breadth first from start; see graphstore.Store.
func (s *store) Neighborhood(ctx context.Context, corpus string, start []string, depth, limit int) ([]graphstore.Neighbor, error) {
	if depth <= 0 {
		return nil, s.Ping(ctx)
	}
	var out []graphstore.Neighbor
	err := s.read(ctx, "walking neighborhood", corpus, func(c *corpusTx) error {
		parent := map[string]string{}
		dist := map[string]int{}
		var frontier []string
		for _, k := range start {
			if _, ok := dist[k]; ok || c.ents.Get([]byte(k)) == nil {
				continue
			}
			dist[k] = 0
			frontier = append(frontier, k)
		}
		// Reached entities are ranked by PageRank, read at its fixed offset; only
		// those kept are decoded.
		type found struct {
			key  string
			dist int
			pr   float64
		}
		var hits []found
		for d := 1; d <= depth && len(frontier) > 0; d++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			// Sorted frontier and sorted adjacency give each entity the smallest
			// predecessor, so paths are deterministic.
			slices.Sort(frontier)
			var next []string
			for _, u := range frontier {
				if err := scanPrefix(c.adj, lp(nil, u), func(nb, _ []byte) error {
					if _, ok := dist[string(nb)]; !ok {
						n := string(nb)
						dist[n], parent[n] = d, u
						next = append(next, n)
					}
					return nil
				}); err != nil {
					return err
				}
			}
			for _, n := range next {
				v := c.ents.Get([]byte(n))
				if v == nil {
					return fmt.Errorf("adjacency names missing entity %q: index damaged", n)
				}
				pr, err := entPageRank(v)
				if err != nil {
					return fmt.Errorf("entity %q: %w", n, err)
				}
				hits = append(hits, found{n, d, pr})
			}
			frontier = next
			if limit > 0 && len(hits) >= limit {
				break // farther entities sort after every one already found
			}
		}
		slices.SortFunc(hits, func(a, b found) int {
			return cmp.Or(cmp.Compare(a.dist, b.dist), cmp.Compare(b.pr, a.pr), strings.Compare(a.key, b.key))
		})
		if limit > 0 && len(hits) > limit {
			hits = hits[:limit]
		}
		out = make([]graphstore.Neighbor, 0, len(hits))
		for _, h := range hits {
			r, err := getEnt(c, h.key)
			if err != nil {
				return err
			}
			// No caller of a walk reads Descriptions (see graphstore.Store).
			e, err := entity(c, h.key, r, entRefs)
			if err != nil {
				return err
			}
			path := make([]string, h.dist+1)
			for i, k := h.dist, h.key; i >= 0; i, k = i-1, parent[k] {
				path[i] = k
			}
			out = append(out, graphstore.Neighbor{Entity: e, Distance: h.dist, Path: path})
		}
		return nil
	})
	return out, err
}

// Snapshot returns every key and every undirected weighted edge.
func (s *store) Snapshot(ctx context.Context, corpus string) (graphstore.Snapshot, error) {
	var snap graphstore.Snapshot
	err := s.read(ctx, "taking snapshot", corpus, func(c *corpusTx) error {
		idx := map[string]int{}
		if err := c.ents.ForEach(func(k, _ []byte) error {
			idx[string(k)] = len(snap.Keys)
			snap.Keys = append(snap.Keys, string(k))
			return nil
		}); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		// About two adjacency entries per edge: decode without allocating.
		if err := c.adj.ForEach(func(k, v []byte) error {
			n, w := binary.Uvarint(k)
			if w <= 0 || uint64(len(k)-w) < n {
				return fmt.Errorf("corrupt adjacency key %x", k)
			}
			a, b := k[w:w+int(n)], k[w+int(n):]
			if bytes.Compare(a, b) >= 0 {
				return nil // the mirror entry carries the same edge
			}
			wt, _, err := readAdj(v)
			if err != nil {
				return err
			}
			ia, oka := idx[string(a)]
			ib, okb := idx[string(b)]
			if !oka || !okb {
				return fmt.Errorf("adjacency %q-%q names a missing entity: index damaged", a, b)
			}
			snap.Edges = append(snap.Edges, graphstore.Edge{Source: ia, Target: ib, Weight: wt})
			return nil
		}); err != nil {
			return err
		}
		slices.SortFunc(snap.Edges, func(x, y graphstore.Edge) int {
			return cmp.Or(cmp.Compare(x.Source, y.Source), cmp.Compare(x.Target, y.Target))
		})
		return nil
	})
	return snap, err
}

// Communities returns the communities of one level, or all for level -1.
func (s *store) Communities(ctx context.Context, corpus string, level int) ([]graphstore.Community, error) {
	var out []graphstore.Community
	err := s.read(ctx, "listing communities", corpus, func(c *corpusTx) error {
		return c.comms.ForEach(func(_, v []byte) error {
			var cm graphstore.Community
			if err := decodeCommunity(v, &cm); err != nil {
				return err
			}
			if level == -1 || cm.Level == level {
				out = append(out, cm)
			}
			return nil
		})
	})
	slices.SortFunc(out, func(a, b graphstore.Community) int {
		return cmp.Or(cmp.Compare(a.Level, b.Level), strings.Compare(a.ID, b.ID))
	})
	return out, err
}

// Community returns one community or graphstore.ErrNotFound.
func (s *store) Community(ctx context.Context, corpus, id string) (graphstore.Community, error) {
	var cm graphstore.Community
	found := false
	err := s.read(ctx, "reading community", corpus, func(c *corpusTx) error {
		v := c.comms.Get([]byte(id))
		if v == nil {
			return nil
		}
		found = true
		return decodeCommunity(v, &cm)
	})
	if err == nil && !found {
		err = fmt.Errorf("community %q in %s: %w", id, corpus, graphstore.ErrNotFound)
	}
	return cm, err
}

// Stats counts what a corpus holds.
func (s *store) Stats(ctx context.Context, corpus string) (graphstore.Stats, error) {
	var st graphstore.Stats
	err := s.read(ctx, "counting", corpus, func(c *corpusTx) error {
		st.Entities = c.ents.Stats().KeyN
		st.Relationships = c.rels.Stats().KeyN
		st.Communities = c.comms.Stats().KeyN
		st.Chunks = c.chunks.Stats().KeyN
		var err error
		st.Levels, err = storedLevels(c)
		return err
	})
	return st, err
}

// Levels reads the level count ReplaceCommunities stored.
func (s *store) Levels(ctx context.Context, corpus string) (int, error) {
	var n int
	err := s.read(ctx, "reading the level count", corpus, func(c *corpusTx) error {
		var err error
		n, err = storedLevels(c)
		return err
	})
	return n, err
}

// storedLevels decodes the level count of a corpus (0 before any hierarchy).
func storedLevels(c *corpusTx) (int, error) {
	v := c.meta.Get(kLevels)
	if v == nil {
		return 0, nil
	}
	n, err := strconv.Atoi(string(v))
	if err != nil {
		return 0, fmt.Errorf("decoding level count: %w", err)
	}
	return n, nil
}

// ChunkEntities returns the entity keys each stored chunk contributed.
// Contributions returns the stored contributions of the given chunks that have one.
func (s *store) Contributions(ctx context.Context, corpus string, chunkIDs []string) (map[string]graphstore.Contribution, error) {
	out := make(map[string]graphstore.Contribution, len(chunkIDs))
	err := s.read(ctx, "reading chunk contributions", corpus, func(c *corpusTx) error {
		clear(out)
		for _, id := range chunkIDs {
			ct, err := loadContribution(c, id)
			if err != nil {
				return err
			}
			if ct != nil {
				out[id] = *ct
			}
		}
		return nil
	})
	return out, err
}

func (s *store) ChunkEntities(ctx context.Context, corpus string, chunkIDs []string) (map[string][]string, error) {
	out := make(map[string][]string, len(chunkIDs))
	err := s.read(ctx, "reading chunk entities", corpus, func(c *corpusTx) error {
		for _, id := range chunkIDs {
			v := c.chunks.Get([]byte(id))
			if v == nil {
				continue
			}
			keys, err := contributionKeys(v)
			if err != nil {
				return fmt.Errorf("chunk %q: %w", id, err)
			}
			out[id] = keys // Contribution keeps entities sorted by key
		}
		return nil
	})
	return out, err
}
