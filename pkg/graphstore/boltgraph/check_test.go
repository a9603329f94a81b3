package boltgraph

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

// randomChunk draws a chunk over a small key space so that chunks overlap a lot.
func randomChunk(rng *rand.Rand, id string) graphstore.ChunkExtraction {
	key := func() string { return fmt.Sprintf("k%d", rng.IntN(12)) }
	c := graphstore.ChunkExtraction{ChunkID: id}
	for range rng.IntN(5) {
		c.Entities = append(c.Entities, graphstore.EntityMention{
			Key: key(), Name: fmt.Sprintf("N%d", rng.IntN(3)), Type: fmt.Sprintf("T%d", rng.IntN(3)),
			Description: fmt.Sprintf("D%d", rng.IntN(6)),
		})
	}
	for range rng.IntN(5) {
		c.Relations = append(c.Relations, graphstore.RelationMention{
			SourceKey: key(), TargetKey: key(), Description: fmt.Sprintf("R%d", rng.IntN(3)),
			Strength: float64(rng.IntN(4)) * 0.3,
		})
	}
	return c
}

// TestIncrementalMatchesRebuild applies random merges, replays and removals and
// checks after each step that the incrementally maintained state is exactly what
// the stored chunks imply.
func TestIncrementalMatchesRebuild(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			s := openTemp(t)
			ctx := t.Context()
			rng := rand.New(rand.NewPCG(seed, 99))
			for step := range 60 {
				var err error
				switch op := rng.IntN(10); {
				case op < 7:
					var batch []graphstore.ChunkExtraction
					for range 1 + rng.IntN(4) {
						batch = append(batch, randomChunk(rng, fmt.Sprintf("c%d", rng.IntN(20))))
					}
					err = s.Merge(ctx, "k", batch)
				case op < 9:
					err = s.RemoveChunks(ctx, "k", []string{fmt.Sprintf("c%d", rng.IntN(20))})
				default:
					err = s.SetPageRank(ctx, "k", map[string]float64{"k1": rng.Float64()})
				}
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				if err := s.Check(ctx); err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
			}
		})
	}
}

func TestCheckDetectsDamage(t *testing.T) {
	damages := []struct {
		name string
		fn   func(c *corpusTx) error
	}{
		{"entity deleted", func(c *corpusTx) error { return c.ents.Delete([]byte("a")) }},
		{"entity miscounted", func(c *corpusTx) error {
			return c.ents.Put([]byte("a"), encodeEnt(&entRec{Mentions: 7, Names: counts{{"A", 1}}}))
		}},
		{"provenance lost", func(c *corpusTx) error { return c.entChunks.Delete(append(lp(nil, "a"), "c1"...)) }},
		{"strength changed", func(c *corpusTx) error {
			return c.relChunks.Put(append(lp(lp(nil, "a"), "b"), "c1"...), putFloat(42))
		}},
		{"description count changed", func(c *corpusTx) error {
			return c.entDescs.Put(append(keyPrefix("a"), "about a"...), []byte{3})
		}},
		{"description missing", func(c *corpusTx) error {
			return c.relDescs.Delete(append(pairPrefix("a", "b"), "a to b"...))
		}},
		{"relationship deleted", func(c *corpusTx) error { return c.rels.Delete(pairKey("a", "b")) }},
		{"adjacency extra", func(c *corpusTx) error { return c.adj.Put(pairKey("a", "zz"), adjValue(1, 1)) }},
		{"adjacency weight", func(c *corpusTx) error { return c.adj.Put(pairKey("b", "a"), adjValue(99, 1)) }},
	}
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			s := openTemp(t)
			ctx := t.Context()
			if err := s.Merge(ctx, "k", []graphstore.ChunkExtraction{{
				ChunkID:   "c1",
				Entities:  []graphstore.EntityMention{{Key: "a", Name: "A", Description: "about a"}, {Key: "b", Name: "B"}},
				Relations: []graphstore.RelationMention{{SourceKey: "a", TargetKey: "b", Strength: 2, Description: "a to b"}},
			}}); err != nil {
				t.Fatal(err)
			}
			if err := s.Check(ctx); err != nil {
				t.Fatalf("Check before damage: %v", err)
			}
			if err := s.s.db.Update(func(tx *bolt.Tx) error {
				c, err := openCorpus(tx, "k", false)
				if err != nil {
					return err
				}
				return d.fn(c)
			}); err != nil {
				t.Fatal(err)
			}
			if err := s.Check(ctx); !errors.Is(err, ErrInconsistent) {
				t.Fatalf("Check after damage = %v, want ErrInconsistent", err)
			}
		})
	}
}
