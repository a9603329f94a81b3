package boltgraph

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

const benchEntitiesPerChunk = 10

// benchChunk is a chunk of 10 entities and 9 relations; entity keys come from a
// space of keySpace so that later chunks revisit earlier entities.
func benchChunk(rng *rand.Rand, id string, keySpace int) graphstore.ChunkExtraction {
	c := graphstore.ChunkExtraction{ChunkID: id, DocumentID: "doc"}
	for i := range benchEntitiesPerChunk {
		k := "entity " + strconv.Itoa(rng.IntN(keySpace))
		c.Entities = append(c.Entities, graphstore.EntityMention{
			Key: k, Name: k, Type: "concept", Description: "a description of " + k + " as seen in " + id,
		})
		if i > 0 {
			c.Relations = append(c.Relations, graphstore.RelationMention{
				SourceKey: c.Entities[i-1].Key, TargetKey: k, Type: "related", Description: "co-occur", Strength: 1,
			})
		}
	}
	return c
}

// BenchmarkMerge measures Merge throughput for batches of 1..1000 chunks (10
// entities each); every Merge is one fsync'ed transaction.
func BenchmarkMerge(b *testing.B) {
	for _, size := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			s, err := Open(filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			rng := rand.New(rand.NewPCG(1, uint64(size)))
			next := 0
			batch := func() []graphstore.ChunkExtraction {
				out := make([]graphstore.ChunkExtraction, size)
				for i := range out {
					out[i] = benchChunk(rng, "chunk-"+strconv.Itoa(next), 1_000_000)
					next++
				}
				return out
			}
			ctx := b.Context()
			for b.Loop() {
				b.StopTimer()
				in := batch()
				b.StartTimer()
				if err := s.Merge(ctx, "bench", in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(next*benchEntitiesPerChunk)/b.Elapsed().Seconds(), "entities/s")
		})
	}
}

// BenchmarkMergeHub merges chunks that all mention one hub entity with a new
// description each; the cost per Merge must not grow with the hub's history.
func BenchmarkMergeHub(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "hub.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := b.Context()
	n := 0
	for b.Loop() {
		batch := make([]graphstore.ChunkExtraction, 10)
		for i := range batch {
			id := "chunk-" + strconv.Itoa(n)
			n++
			batch[i] = graphstore.ChunkExtraction{ChunkID: id, Entities: []graphstore.EntityMention{
				{Key: "hub", Name: "Hub", Description: "the hub as described in " + id},
				{Key: "leaf " + id, Name: "Leaf"},
			}, Relations: []graphstore.RelationMention{{SourceKey: "hub", TargetKey: "leaf " + id, Description: "links " + id}}}
		}
		if err := s.Merge(ctx, "hub", batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n), "hub-mentions")
}

var bench100k struct {
	once sync.Once
	dir  string
	s    *Store
	err  error
}

// benchGraph builds, once per test binary, a corpus of exactly 100k entities
// (10k chunks of 10 fresh entities, chained) plus 200k random cross links, an
// average degree of about 5.8.
func benchGraph(b *testing.B) *Store {
	bench100k.once.Do(func() {
		bench100k.dir, bench100k.err = os.MkdirTemp("", "boltgraph-bench")
		if bench100k.err != nil {
			return
		}
		s, err := Open(filepath.Join(bench100k.dir, "100k.db"))
		if err != nil {
			bench100k.err = err
			return
		}
		bench100k.s = s
		rng := rand.New(rand.NewPCG(7, 7))
		const chunks = 10_000
		for start := 0; start < chunks; start += 1000 {
			var batch []graphstore.ChunkExtraction
			for j := start; j < start+1000; j++ {
				c := graphstore.ChunkExtraction{ChunkID: fmt.Sprintf("chunk-%05d", j)}
				for i := range benchEntitiesPerChunk {
					k := fmt.Sprintf("entity %06d", j*benchEntitiesPerChunk+i)
					c.Entities = append(c.Entities, graphstore.EntityMention{Key: k, Name: k, Type: "concept", Description: "about " + k})
					if i > 0 {
						c.Relations = append(c.Relations, graphstore.RelationMention{SourceKey: c.Entities[i-1].Key, TargetKey: k, Strength: 1})
					}
				}
				for range 20 {
					c.Relations = append(c.Relations, graphstore.RelationMention{
						SourceKey: c.Entities[rng.IntN(benchEntitiesPerChunk)].Key,
						TargetKey: fmt.Sprintf("entity %06d", rng.IntN(chunks*benchEntitiesPerChunk)),
						Strength:  2,
					})
				}
				batch = append(batch, c)
			}
			if bench100k.err = s.Merge(b.Context(), "big", batch); bench100k.err != nil {
				return
			}
		}
		scores := map[string]float64{}
		for i := range chunks * benchEntitiesPerChunk {
			scores[fmt.Sprintf("entity %06d", i)] = rng.Float64()
		}
		bench100k.err = s.SetPageRank(b.Context(), "big", scores)
	})
	if bench100k.err != nil {
		b.Fatalf("building the 100k graph: %v", bench100k.err)
	}
	return bench100k.s
}

func cleanupBenchGraph() {
	if bench100k.s != nil {
		_ = bench100k.s.Close()
	}
	if bench100k.dir != "" {
		_ = os.RemoveAll(bench100k.dir)
	}
}

// BenchmarkNeighborhood measures a depth 2 walk from one random entity of a 100k
// entity graph, unlimited and with the limit the query service uses.
func BenchmarkNeighborhood(b *testing.B) {
	s := benchGraph(b)
	st, err := s.Stats(b.Context(), "big")
	if err != nil || st.Entities != 100_000 {
		b.Fatalf("bench graph stats %+v, %v", st, err)
	}
	for _, limit := range []int{0, 20} {
		b.Run(fmt.Sprintf("depth=2/limit=%d", limit), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 3))
			found := 0
			for b.Loop() {
				start := fmt.Sprintf("entity %06d", rng.IntN(100_000))
				ns, err := s.Neighborhood(b.Context(), "big", []string{start}, 2, limit)
				if err != nil {
					b.Fatal(err)
				}
				found += len(ns)
			}
			b.ReportMetric(float64(found)/float64(b.N), "neighbors/op")
		})
	}
}

// BenchmarkSnapshot measures reading the whole 100k entity graph, what every Leiden
// and PageRank run starts with.
func BenchmarkSnapshot(b *testing.B) {
	s := benchGraph(b)
	for b.Loop() {
		snap, err := s.Snapshot(b.Context(), "big")
		if err != nil {
			b.Fatal(err)
		}
		if len(snap.Keys) != 100_000 {
			b.Fatalf("%d keys", len(snap.Keys))
		}
	}
}

// BenchmarkCodec compares the entity record codecs: JSON (layout 1), gob, and the
// binary codec of layout 2.
func BenchmarkCodec(b *testing.B) {
	v1 := &entRecV1{
		Names: map[string]int{"Dopamine": 3, "dopamine": 1}, Types: map[string]int{"chemical": 4},
		Descs:    descSetV1{N: 2, Sum: 0x1234567890, Longest: "a neurotransmitter of the reward system"},
		Mentions: 4, PageRank: 0.0123, Summary: "dopamine is a neurotransmitter", SummaryFP: 12345,
	}
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			v, err := json.Marshal(v1)
			if err != nil {
				b.Fatal(err)
			}
			var out entRecV1
			if err := json.Unmarshal(v, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gob", func(b *testing.B) {
		b.ReportAllocs()
		// One value per stored record, so each needs its own encoder and type header.
		for b.Loop() {
			var buf bytes.Buffer
			if err := gob.NewEncoder(&buf).Encode(v1); err != nil {
				b.Fatal(err)
			}
			var out entRecV1
			if err := gob.NewDecoder(&buf).Decode(&out); err != nil {
				b.Fatal(err)
			}
		}
	})
	rec := &entRec{Names: countsFromMap(v1.Names), Types: countsFromMap(v1.Types), Descs: v1.Descs.v2(),
		Mentions: v1.Mentions, PageRank: v1.PageRank, Summary: v1.Summary, SummaryFP: v1.SummaryFP}
	b.Run("binary", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var out entRec
			if err := decodeEnt(encodeEnt(rec), &out); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkReplaceCommunities writes a three-level hierarchy over the 100k entity graph
// (communities of 10, 100 and 1,000 members, members drawn in random order), what every
// detection run ends with.
func BenchmarkReplaceCommunities(b *testing.B) {
	s := benchGraph(b)
	snap, err := s.Snapshot(b.Context(), "big")
	if err != nil {
		b.Fatal(err)
	}
	keys := slices.Clone(snap.Keys)
	rand.New(rand.NewPCG(3, 3)).Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	var cs []graphstore.Community
	for level, size := range []int{10, 100, 1000} {
		for i := 0; i < len(keys); i += size {
			c := graphstore.Community{ID: fmt.Sprintf("c%d-%d", level, i/size), Level: level, Members: keys[i:min(i+size, len(keys))]}
			if level < 2 {
				c.ParentID = fmt.Sprintf("c%d-%d", level+1, i/(size*10))
			}
			cs = append(cs, c)
		}
	}
	for b.Loop() {
		if err := s.ReplaceCommunities(b.Context(), "big", cs); err != nil {
			b.Fatal(err)
		}
	}
}
