//go:build integration

package neo4jgraph

import (
	"fmt"
	mrand "math/rand"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
)

// TestEvidenceBucketsMatchBoltgraph runs random merges, re-merges and
// removals with tiny evidence buckets against the server and boltgraph, so
// that the Cypher of appending, editing, re-reading and repacking buckets is
// exercised, and compares what both return.
func TestEvidenceBucketsMatchBoltgraph(t *testing.T) {
	defer func(n int) { evidenceCap = n }(evidenceCap)
	s := openEmpty(t, "GRAPHRAG_TEST_NEO4J_URI")
	for seed := range uint64(6) {
		evidenceCap = 1 + int(seed%2)
		t.Run(fmt.Sprintf("%d/cap=%d", seed, evidenceCap), func(t *testing.T) {
			ctx := t.Context()
			corpus := fmt.Sprintf("buckets%d", seed)
			r := rand.New(rand.NewPCG(seed, 7))
			bolt, err := boltgraph.Open(filepath.Join(t.TempDir(), "g.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer bolt.Close()
			var most int64
			for range 40 {
				most = max(most, maxBucket(t, s, corpus))
				if r.IntN(5) == 0 {
					ids := []string{fmt.Sprintf("c%02d", r.IntN(12)), fmt.Sprintf("c%02d", r.IntN(12))}
					for _, g := range []graphstore.Store{bolt, s} {
						if err := g.RemoveChunks(ctx, corpus, ids); err != nil {
							t.Fatal(err)
						}
					}
					continue
				}
				var batch []graphstore.ChunkExtraction
				for range 1 + r.IntN(4) {
					batch = append(batch, randomChunk(r))
				}
				for _, g := range []graphstore.Store{bolt, s} {
					if err := g.Merge(ctx, corpus, batch); err != nil {
						t.Fatal(err)
					}
				}
			}
			want, err := bolt.Snapshot(ctx, corpus)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Snapshot(ctx, corpus)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("snapshots differ\n got %+v\nwant %+v", got, want)
			}
			wantRels, err := bolt.RelationshipsAmong(ctx, corpus, want.Keys)
			if err != nil {
				t.Fatal(err)
			}
			gotRels, err := s.RelationshipsAmong(ctx, corpus, want.Keys)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gotRels, wantRels) {
				t.Errorf("relationships differ\n got %+v\nwant %+v", gotRels, wantRels)
			}
			if evidenceCap == 1 && most == 0 {
				t.Errorf("no pair ever had a second evidence bucket: the test does not exercise them")
			}
		})
	}
}

// maxBucket returns the highest evidence bucket index of the corpus.
func maxBucket(t *testing.T, s *Store, corpus string) int64 {
	t.Helper()
	var n int64
	err := s.s.read(t.Context(), "counting buckets", func(tx neo4j.ManagedTransaction) error {
		recs, err := run(t.Context(), tx, `MATCH (:Entity {corpus: $corpus})-[x:RELATED]->()
UNWIND keys(x) AS k WITH k WHERE k STARTS WITH 'chunks' AND k <> 'chunks'
RETURN coalesce(max(toInteger(substring(k, 6))), 0)`, map[string]any{"corpus": corpus})
		if len(recs) > 0 {
			n = asInt(recs[0].Values[0])
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestEvidenceRewriteBound replays BenchmarkMerge's batches on the simulated
// store (agg_test.go) with the real bucket code and counts the list entries
// each batch rewrites: with one list per pair (ADR 0036) every touched pair's
// whole evidence, with buckets the written ones. It needs no server; it lives
// here for benchChunks. The figures are in ADR 0039.
func TestEvidenceRewriteBound(t *testing.T) {
	sim := newSimStore()
	r := mrand.New(mrand.NewSource(1))
	zipf := mrand.NewZipf(r, 1.1, 1, 19999)
	var whole, buckets int
	for b := range 30 {
		ws, err := prepareMerge(benchChunks(r, zipf, b*1000, 1000))
		if err != nil {
			t.Fatal(err)
		}
		whole, buckets = sim.applyCounting(t, ws)
	}
	t.Logf("batch 30 of 1,000 chunks rewrites %d list entries, %d with one list per pair (cap %d)", buckets, whole, evidenceCap)
	if buckets*3 > whole {
		t.Errorf("buckets rewrite %d entries, more than a third of the %d of whole lists", buckets, whole)
	}
}

// applyCounting is simStore.apply for batches of new chunks, counting the
// list entries written: whole lists, or the buckets writeRelations writes.
func (s *simStore) applyCounting(t *testing.T, writes []chunkWrite) (whole, buckets int) {
	t.Helper()
	p := makePlan(writes, s.chunks)
	ents := map[string]*entState{}
	for _, k := range p.keys {
		ents[k] = new(entState) // entity states do not matter here
	}
	rels := s.loadRels(t, p.pairs)
	p.fold(ents, rels)
	for _, w := range p.changed {
		s.chunks[w.id] = oldChunk{exists: true, hash: w.hash, ct: w.ct}
	}
	for pr, st := range rels {
		if _, exists := s.rels[pr]; !exists || st.needsBuckets() {
			st.rebucket(s.readBuckets(t, pr))
		}
		target := -1
		if st.buckets == nil {
			target = st.appendBucket()
		}
		s.writeRelation(t, pr, st, target)
		for _, b := range s.buckets[pr] {
			whole += len(b)
		}
		if target >= 0 {
			buckets += len(s.buckets[pr][target]) // new chunks only: nothing leaves bucket 0
			continue
		}
		for i := range st.dirty {
			buckets += len(s.buckets[pr][i])
		}
	}
	return whole, buckets
}
