package boltgraph

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

// The realistic benchmarks use only the public API so that the same file measures
// an older layout (before/after ratios come from two test binaries run alternately).

const (
	realChunks       = 10_000
	realFreshPerChk  = 8  // entities only this chunk names
	realHubsPerChk   = 2  // entities drawn from a Zipf law over earlier ones: hubs
	realRelsPerChunk = 30 // directed pairs drawn among the chunk's entities
)

// realChunk is chunk j of the realistic corpus: 8 fresh entities, 2 popular ones and
// 30 drawn pairs (about 23 distinct relationships), about the density of the 10k realistic corpus (86k entities,
// 242k relationships, a few hubs named by thousands of chunks).
func realChunk(rng *rand.Rand, zipf *rand.Zipf, j int, variant string) graphstore.ChunkExtraction {
	c := graphstore.ChunkExtraction{ChunkID: fmt.Sprintf("chunk-%05d", j), DocumentID: fmt.Sprintf("doc-%04d", j/4)}
	keys := make([]string, 0, realFreshPerChk+realHubsPerChk)
	for i := range realFreshPerChk {
		keys = append(keys, fmt.Sprintf("entity %06d", j*realFreshPerChk+i))
	}
	for range realHubsPerChk {
		// Hubs are early entities, which later chunks keep naming.
		keys = append(keys, fmt.Sprintf("entity %06d", int(zipf.Uint64())))
	}
	for _, k := range keys {
		c.Entities = append(c.Entities, graphstore.EntityMention{
			Key: k, Name: "Name of " + k, Type: []string{"person", "place", "organization", "concept"}[len(k)%4],
			Description: "what " + c.ChunkID + " says about " + k + variant,
		})
	}
	for range realRelsPerChunk {
		a, b := keys[rng.IntN(len(keys))], keys[rng.IntN(len(keys))]
		c.Relations = append(c.Relations, graphstore.RelationMention{
			SourceKey: a, TargetKey: b, Type: "related to", Strength: float64(1 + rng.IntN(9)),
			Description: a + " relates to " + b + " in " + c.ChunkID + variant,
		})
	}
	return c
}

func newRealGen(seed uint64) (*rand.Rand, *rand.Zipf) {
	rng := rand.New(rand.NewPCG(seed, seed))
	return rng, rand.NewZipf(rng, 1.1, 4, 20_000)
}

var realGraph struct {
	once sync.Once
	dir  string
	s    *Store
	err  error
}

// realisticGraph builds, once per test binary, the realistic corpus "real" with
// PageRank scores and one level of communities.
func realisticGraph(b testing.TB) *Store {
	realGraph.once.Do(func() {
		// BOLTGRAPH_REAL_DB keeps the corpus in a file across runs, so that short
		// runs of two binaries can alternate (each needs a file of its own layout).
		path := os.Getenv("BOLTGRAPH_REAL_DB")
		if path == "" {
			if realGraph.dir, realGraph.err = os.MkdirTemp("", "boltgraph-real"); realGraph.err != nil {
				return
			}
			path = filepath.Join(realGraph.dir, "real.db")
		}
		s, err := Open(path)
		if err != nil {
			realGraph.err = err
			return
		}
		realGraph.s = s
		if st, err := s.Stats(b.Context(), "real"); err == nil && st.Chunks == realChunks && st.Communities > 0 {
			return // built by an earlier run
		}
		rng, zipf := newRealGen(11)
		for start := 0; start < realChunks; start += 500 {
			batch := make([]graphstore.ChunkExtraction, 0, 500)
			for j := start; j < start+500; j++ {
				batch = append(batch, realChunk(rng, zipf, j, ""))
			}
			if realGraph.err = s.Merge(b.Context(), "real", batch); realGraph.err != nil {
				return
			}
		}
		snap, err := s.Snapshot(b.Context(), "real")
		if err != nil {
			realGraph.err = err
			return
		}
		scores := make(map[string]float64, len(snap.Keys))
		var comms []graphstore.Community
		for i, k := range snap.Keys {
			scores[k] = rng.Float64()
			if i%50 == 0 {
				comms = append(comms, graphstore.Community{ID: fmt.Sprintf("c%05d", i/50)})
			}
			comms[len(comms)-1].Members = append(comms[len(comms)-1].Members, k)
		}
		if realGraph.err = s.SetPageRank(b.Context(), "real", scores); realGraph.err != nil {
			return
		}
		if realGraph.err = s.ReplaceCommunities(b.Context(), "real", comms); realGraph.err != nil {
			return
		}
		st, err := s.Stats(b.Context(), "real")
		realGraph.err = err
		b.Logf("realistic graph: %+v", st)
	})
	if realGraph.err != nil {
		b.Fatalf("building the realistic graph: %v", realGraph.err)
	}
	return realGraph.s
}

func cleanupRealGraph() {
	if realGraph.s != nil {
		_ = realGraph.s.Close()
	}
	if realGraph.dir != "" {
		_ = os.RemoveAll(realGraph.dir)
	}
}

// realQuestion is what the query engine's graph list reads for one question
// (services/query/engine/graph.go): the linked entities, a depth 2 walk limited
// to 200, the entities of 5 seed passages, and the relationships among all of them.
type realQuestion struct {
	linked, passages []string
}

func realQuestions(n int) []realQuestion {
	rng := rand.New(rand.NewPCG(5, 5))
	out := make([]realQuestion, n)
	for i := range out {
		for range 3 {
			// Linked entities are named in the question: mostly specific ones.
			out[i].linked = append(out[i].linked, fmt.Sprintf("entity %06d", rng.IntN(realChunks*realFreshPerChk)))
		}
		for range 5 {
			out[i].passages = append(out[i].passages, fmt.Sprintf("chunk-%05d", rng.IntN(realChunks)))
		}
	}
	return out
}

// askGraph performs the graph store reads of one question and returns how many
// relationships the local graph gets.
func askGraph(b *testing.B, s *Store, q realQuestion) int {
	ctx := b.Context()
	starts, err := s.Entities(ctx, "real", q.linked)
	if err != nil {
		b.Fatal(err)
	}
	nb, err := s.Neighborhood(ctx, "real", q.linked, 2, 200)
	if err != nil {
		b.Fatal(err)
	}
	have := map[string]bool{}
	var keys []string
	for _, e := range starts {
		have[e.Key] = true
		keys = append(keys, e.Key)
	}
	for _, n := range nb {
		have[n.Entity.Key] = true
		keys = append(keys, n.Entity.Key)
	}
	ce, err := s.ChunkEntities(ctx, "real", q.passages)
	if err != nil {
		b.Fatal(err)
	}
	var more []string
	for _, id := range q.passages {
		for _, k := range ce[id] {
			if !have[k] {
				have[k] = true
				more = append(more, k)
			}
		}
	}
	extra, err := s.Entities(ctx, "real", more)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range extra {
		keys = append(keys, e.Key)
	}
	rels, err := s.RelationshipsAmong(ctx, "real", keys)
	if err != nil {
		b.Fatal(err)
	}
	return len(rels)
}

// BenchmarkRealRead measures the graph reads of the query engine on the realistic
// corpus: a whole question, and its two heaviest calls alone.
func BenchmarkRealRead(b *testing.B) {
	s := realisticGraph(b)
	qs := realQuestions(256)
	b.Run("question", func(b *testing.B) {
		b.ReportAllocs()
		i, rels := 0, 0
		for b.Loop() {
			rels += askGraph(b, s, qs[i%len(qs)])
			i++
		}
		b.ReportMetric(float64(rels)/float64(i), "rels/op")
	})
	b.Run("neighborhood", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := s.Neighborhood(b.Context(), "real", qs[i%len(qs)].linked, 2, 200); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	among := make([][]string, len(qs))
	for i, q := range qs {
		nb, err := s.Neighborhood(b.Context(), "real", q.linked, 2, 200)
		if err != nil {
			b.Fatal(err)
		}
		among[i] = slices.Clone(q.linked)
		for _, n := range nb {
			among[i] = append(among[i], n.Entity.Key)
		}
	}
	b.Run("among", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := s.RelationshipsAmong(b.Context(), "real", among[i%len(among)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("of", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := s.RelationshipsOf(b.Context(), "real", qs[i%len(qs)].linked, 20); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkRealMerge measures what the grapher does: Merge batches of realistic
// chunks into a corpus that already holds 2,000, new chunks (add) and chunks merged
// again with other text (replace: the old contribution is read and subtracted).
func BenchmarkRealMerge(b *testing.B) {
	for _, mode := range []string{"add", "replace"} {
		for _, size := range []int{10, 256} {
			b.Run(fmt.Sprintf("%s/batch=%d", mode, size), func(b *testing.B) {
				s, err := Open(filepath.Join(b.TempDir(), "merge.db"))
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				rng, zipf := newRealGen(13)
				const prefill = 2000
				for start := 0; start < prefill; start += 500 {
					var batch []graphstore.ChunkExtraction
					for j := start; j < start+500; j++ {
						batch = append(batch, realChunk(rng, zipf, j, ""))
					}
					if err := s.Merge(b.Context(), "m", batch); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportAllocs()
				next, round := prefill, 0
				for b.Loop() {
					b.StopTimer()
					batch := make([]graphstore.ChunkExtraction, size)
					for i := range batch {
						if mode == "add" {
							batch[i] = realChunk(rng, zipf, next, "")
							next++
						} else {
							batch[i] = realChunk(rng, zipf, (next+i)%prefill, fmt.Sprintf(" (take %d)", round))
						}
					}
					if mode == "replace" {
						next += size
						round++
					}
					b.StartTimer()
					if err := s.Merge(b.Context(), "m", batch); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "chunks/s")
			})
		}
	}
}

// TestRealDigest prints a digest of everything the query reads return on the
// realistic corpus (BOLTGRAPH_DIGEST=1): the same file run against two layouts
// tells whether their results differ, ordering included.
func TestRealDigest(t *testing.T) {
	if os.Getenv("BOLTGRAPH_DIGEST") == "" {
		t.Skip("set BOLTGRAPH_DIGEST=1 to build the realistic corpus and print the digest")
	}
	s := realisticGraph(t)
	ctx := t.Context()
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, q := range realQuestions(256) {
		starts, err1 := s.Entities(ctx, "real", q.linked)
		nb, err2 := s.Neighborhood(ctx, "real", q.linked, 2, 200)
		ce, err3 := s.ChunkEntities(ctx, "real", q.passages)
		of, err4 := s.RelationshipsOf(ctx, "real", q.linked, 20)
		keys := slices.Clone(q.linked)
		for _, n := range nb {
			keys = append(keys, n.Entity.Key)
		}
		for _, id := range q.passages {
			keys = append(keys, ce[id]...)
		}
		among, err5 := s.RelationshipsAmong(ctx, "real", keys)
		if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
			t.Fatal(err)
		}
		if err := enc.Encode([]any{starts, nb, ce, of, among}); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("digest of the realistic reads: %x", h.Sum(nil))
}
