package boltgraph

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

// ErrInconsistent is returned by Check when derived state disagrees with the
// stored chunk contributions.
var ErrInconsistent = errors.New("boltgraph: derived state inconsistent")

// Check verifies every corpus: the entity, relationship, provenance and adjacency
// records must be exactly what the stored chunk contributions imply, and every
// community member list must be sorted. It reads the whole file (an fsck, for
// tests, operators and crash recovery drills), so it is slow on big graphs.
func (st *Store) Check(ctx context.Context) error { return st.s.check(ctx) }

func (s *store) check(ctx context.Context) error {
	corpora, err := s.Corpora(ctx)
	if err != nil {
		return err
	}
	for _, corpus := range corpora {
		err := s.read(ctx, "checking", corpus, func(c *corpusTx) error { return checkCorpusTx(ctx, c) })
		if err != nil {
			return fmt.Errorf("checking corpus %s: %w", corpus, err)
		}
	}
	return nil
}

func inconsistent(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrInconsistent)
}

func checkCorpusTx(ctx context.Context, c *corpusTx) error {
	ents := map[string]*entRec{}
	rels := map[pair]*relRec{}
	entChunks := map[string]struct{}{}
	relChunks := map[string]string{}
	// Description counts keyed by the full entdescs / reldescs key.
	entDescs, relDescs := map[string]int{}, map[string]int{}
	err := c.chunks.ForEach(func(k, v []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		var ct graphstore.Contribution
		if err := decodeContribution(v, &ct); err != nil {
			return err
		}
		if ct.ChunkID != string(k) {
			return inconsistent("chunk record %q holds chunk %q", k, ct.ChunkID)
		}
		for _, e := range ct.Entities {
			r := ents[e.Key]
			if r == nil {
				r = &entRec{}
				ents[e.Key] = r
			}
			r.Mentions++
			r.Names.add(e.Names, 1)
			r.Types.add(e.Types, 1)
			for _, d := range e.Descriptions {
				k := string(keyPrefix(e.Key)) + d
				if entDescs[k]++; entDescs[k] == 1 {
					addExpected(&r.Descs, d)
				}
			}
			entChunks[string(append(lp(nil, e.Key), ct.ChunkID...))] = struct{}{}
		}
		for _, rc := range ct.Relations {
			p := pair{rc.SourceKey, rc.TargetKey}
			r := rels[p]
			if r == nil {
				r = &relRec{}
				rels[p] = r
			}
			r.Chunks++
			r.Types.add(rc.Types, 1)
			for _, d := range rc.Descriptions {
				k := string(pairPrefix(p.src, p.dst)) + d
				if relDescs[k]++; relDescs[k] == 1 {
					addExpected(&r.Descs, d)
				}
			}
			relChunks[string(append(lp(lp(nil, p.src), p.dst), ct.ChunkID...))] = string(putFloat(rc.Strength))
		}
		return nil
	})
	if err != nil {
		return err
	}

	n := 0
	if err := c.ents.ForEach(func(k, v []byte) error {
		n++
		want := ents[string(k)]
		if want == nil {
			return inconsistent("entity %q has no chunk mentioning it", k)
		}
		var got entRec
		if err := decodeEnt(v, &got); err != nil {
			return err
		}
		if got.Mentions != want.Mentions || !slices.Equal(got.Names, want.Names) ||
			!slices.Equal(got.Types, want.Types) || got.Descs != want.Descs {
			return inconsistent("entity %q is %+v, chunks say %+v", k, got, *want)
		}
		return nil
	}); err != nil {
		return err
	}
	if n != len(ents) {
		return inconsistent("%d entities stored, chunks mention %d", n, len(ents))
	}
	if err := sameKeys(c.entChunks, "entity provenance", func(k, v []byte) bool {
		_, ok := entChunks[string(k)]
		return ok && len(v) == 0
	}, len(entChunks)); err != nil {
		return err
	}
	for _, d := range []struct {
		b    *bolt.Bucket
		what string
		want map[string]int
	}{{c.entDescs, "entity descriptions", entDescs}, {c.relDescs, "relationship descriptions", relDescs}} {
		if err := sameKeys(d.b, d.what, func(k, v []byte) bool {
			n, w := binary.Uvarint(v)
			return w > 0 && int(n) == d.want[string(k)]
		}, len(d.want)); err != nil {
			return err
		}
	}
	if err := sameKeys(c.relChunks, "relationship provenance", func(k, v []byte) bool {
		want, ok := relChunks[string(k)]
		return ok && want == string(v)
	}, len(relChunks)); err != nil {
		return err
	}

	// Weights are re-summed in chunk id order, exactly as flush does.
	for _, k := range slices.Sorted(maps.Keys(relChunks)) {
		src, rest, err := splitLP([]byte(k))
		if err != nil {
			return err
		}
		dst, _, err := splitLP(rest)
		if err != nil {
			return err
		}
		w, _ := getFloat([]byte(relChunks[k]))
		rels[pair{src, dst}].Weight += w
	}
	n = 0
	if err := c.rels.ForEach(func(k, v []byte) error {
		n++
		src, rest, err := splitLP(k)
		if err != nil {
			return err
		}
		want := rels[pair{src, string(rest)}]
		if want == nil {
			return inconsistent("relationship %q>%q has no chunk", src, rest)
		}
		var got relRec
		if err := decodeRel(v, &got); err != nil {
			return err
		}
		if got.Chunks != want.Chunks || got.Weight != want.Weight ||
			!slices.Equal(got.Types, want.Types) || got.Descs != want.Descs {
			return inconsistent("relationship %q>%q is %+v, chunks say %+v", src, rest, got, *want)
		}
		return nil
	}); err != nil {
		return err
	}
	if n != len(rels) {
		return inconsistent("%d relationships stored, chunks give %d", n, len(rels))
	}

	adj := map[string][]byte{}
	for p := range rels {
		u := p.undirected()
		if _, done := adj[string(pairKey(u.src, u.dst))]; done {
			continue
		}
		var w float64
		cnt := 0
		for _, d := range []pair{u, {u.dst, u.src}} {
			if r := rels[d]; r != nil {
				w += r.Weight
				cnt++
			}
		}
		adj[string(pairKey(u.src, u.dst))] = adjValue(w, cnt)
		adj[string(pairKey(u.dst, u.src))] = adjValue(w, cnt)
	}
	if err := sameKeys(c.adj, "adjacency", func(k, v []byte) bool {
		return bytes.Equal(adj[string(k)], v)
	}, len(adj)); err != nil {
		return err
	}
	return c.comms.ForEach(func(k, v []byte) error {
		var cm graphstore.Community
		if err := decodeCommunity(v, &cm); err != nil {
			return err
		}
		if cm.ID != string(k) || !slices.IsSorted(cm.Members) {
			return inconsistent("community record %q malformed", k)
		}
		return nil
	})
}

// addExpected adds a new distinct description to an expected descSet.
func addExpected(d *descSet, s string) {
	d.N++
	d.Sum += descHash(s)
	if longer(s, d.Longest) {
		d.Longest = s
	}
}

// sameKeys checks that b holds exactly want entries, each accepted by ok.
func sameKeys(b *bolt.Bucket, what string, ok func(k, v []byte) bool, want int) error {
	n := 0
	if err := b.ForEach(func(k, v []byte) error {
		n++
		if !ok(k, v) {
			return inconsistent("%s entry %x (value %x) not implied by the chunks", what, k, v)
		}
		return nil
	}); err != nil {
		return err
	}
	if n != want {
		return inconsistent("%d %s entries stored, chunks imply %d", n, what, want)
	}
	return nil
}
