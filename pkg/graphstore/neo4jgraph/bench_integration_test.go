//go:build integration

package neo4jgraph

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/leiden"
	"github.com/graphrag/graphrag/pkg/pagerank"
	"github.com/graphrag/graphrag/pkg/wgraph"
	"github.com/graphrag/graphrag/pkg/wgraph/wgraphtest"
)

// benchChunks builds n chunks of 10 entities drawn Zipf-like from a 20k-key
// vocabulary (so a few hub entities recur, as in text) and 9 relations each,
// of whole strengths 1..5.
func benchChunks(r *rand.Rand, zipf *rand.Zipf, first, n int) []graphstore.ChunkExtraction {
	out := make([]graphstore.ChunkExtraction, n)
	for i := range out {
		ce := graphstore.ChunkExtraction{ChunkID: fmt.Sprintf("chunk-%09d", first+i), DocumentID: "doc"}
		for j := range 10 {
			k := fmt.Sprintf("entity-%05d", zipf.Uint64())
			ce.Entities = append(ce.Entities, graphstore.EntityMention{
				Key: k, Name: k, Type: "concept", Description: fmt.Sprintf("said in chunk %d", (first+i)%97),
			})
			if j > 0 {
				ce.Relations = append(ce.Relations, graphstore.RelationMention{
					SourceKey: ce.Entities[j-1].Key, TargetKey: k, Type: "related", Strength: float64(1 + r.Intn(5)),
				})
			}
		}
		out[i] = ce
	}
	return out
}

// BenchmarkMerge measures Merge throughput by batch size; every op merges one
// batch of new chunks into a corpus that grows over the run.
func BenchmarkMerge(b *testing.B) { benchmarkMerge(b, 1) }

// BenchmarkMergeTenths is BenchmarkMerge with the strengths the extractor
// gives (1..10 scaled to 0.1..1): fractional, so every touched pair's weight
// is re-summed from its evidence in chunk id order.
func BenchmarkMergeTenths(b *testing.B) { benchmarkMerge(b, 0.1) }

func benchmarkMerge(b *testing.B, scale float64) {
	s := openEmpty(b, "GRAPHRAG_TEST_NEO4J_URI")
	for _, size := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("chunks=%d", size), func(b *testing.B) {
			if err := wipe(context.Background(), s); err != nil {
				b.Fatal(err)
			}
			r := rand.New(rand.NewSource(1))
			zipf := rand.NewZipf(r, 1.1, 1, 19999)
			next := 0
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				batch := benchChunks(r, zipf, next, size)
				for _, ce := range batch {
					for i := range ce.Relations {
						ce.Relations[i].Strength *= scale
					}
				}
				next += size
				b.StartTimer()
				if err := s.Merge(context.Background(), "bench", batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*size*10)/b.Elapsed().Seconds(), "entities/s")
		})
	}
}

// BenchmarkLeiden compares GDS Leiden + PageRank (Algorithms.Communities:
// projection, both algorithms, streaming back) with the pure Go path the
// grapher takes without GDS (Snapshot, then packages leiden and pagerank), on
// the same synthetic graphs, and reports the modularity each reaches.
func BenchmarkLeiden(b *testing.B) {
	s := openEmpty(b, "GRAPHRAG_TEST_NEO4J_URI")
	for _, edges := range []int{10_000, 100_000} {
		g, _ := wgraphtest.Sparse(edges, 10, 50, 0.2, 1)
		corpus := fmt.Sprintf("sparse-%d", edges)
		mergeGraph(b, s, corpus, graphEdges(g), g.N())
		b.Run(fmt.Sprintf("gds/edges=%d", edges), func(b *testing.B) {
			var q float64
			var levels int
			for range b.N {
				res, err := s.Algorithms().Communities(context.Background(), corpus, graphstore.AlgorithmOptions{Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				top := res.Levels[len(res.Levels)-1]
				sg := snapshotGraph(b, res.Snapshot)
				if err := wgraph.CheckConnected(sg, top); err != nil {
					b.Fatalf("GDS final partition: %v", err)
				}
				q = wgraph.Modularity(sg, top, 1)
				levels = len(res.Levels)
			}
			b.ReportMetric(q, "modularity")
			b.ReportMetric(float64(levels), "levels")
		})
		b.Run(fmt.Sprintf("go/edges=%d", edges), func(b *testing.B) {
			var q float64
			var levels int
			for range b.N {
				snap, err := s.Snapshot(context.Background(), corpus)
				if err != nil {
					b.Fatal(err)
				}
				sg := snapshotGraph(b, snap)
				res, err := leiden.Run(context.Background(), sg, leiden.WithSeed(1))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := pagerank.Run(sg); err != nil {
					b.Fatal(err)
				}
				q = wgraph.Modularity(sg, res.Levels[len(res.Levels)-1].Membership, 1)
				levels = len(res.Levels)
			}
			b.ReportMetric(q, "modularity")
			b.ReportMetric(float64(levels), "levels")
		})
	}
}

// graphEdges lists the edges of g once each.
func graphEdges(g *wgraph.Graph) []wgraph.Edge {
	var out []wgraph.Edge
	for u := range g.N() {
		ns, ws := g.Neighbors(u)
		for i, v := range ns {
			if u < int(v) {
				out = append(out, wgraph.Edge{U: u, V: int(v), W: ws[i]})
			}
		}
	}
	return out
}

// BenchmarkPrepareMerge measures the client side of a 1000-chunk Merge before
// any statement: validation, JSON, hashing and compressing the contributions.
func BenchmarkPrepareMerge(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	batch := benchChunks(r, rand.NewZipf(r, 1.1, 1, 19999), 0, 1000)
	b.ReportAllocs()
	for range b.N {
		if _, err := prepareMerge(batch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkProvenanceFloor writes what no Merge of a batch of new chunks can
// avoid: per chunk a node with its deflated contribution and 10 MENTIONS to
// Zipf-chosen entities among 20k, and nothing else (no reads, no locks, no
// aggregates, no RELATED), in one transaction per batch. It bounds from below
// what BenchmarkMerge can reach on the same server.
func BenchmarkProvenanceFloor(b *testing.B) {
	ctx := context.Background()
	s := openEmpty(b, "GRAPHRAG_TEST_NEO4J_URI")
	var ents []string
	err := s.s.write(ctx, "creating entities", func(tx neo4j.ManagedTransaction) error {
		recs, err := run(ctx, tx, `UNWIND range(0, 19999) AS i CREATE (e:Entity {corpus: 'floor', key: toString(i)})
RETURN elementId(e)`, nil)
		ents = ents[:0]
		for _, r := range recs {
			ents = append(ents, asString(r.Values[0]))
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	const cyFloor = `
UNWIND $rows AS r
CREATE (c:Chunk {corpus: 'floor', id: r.id, contrib: r.contrib})
WITH c, r
UNWIND r.ents AS eid
MATCH (e) WHERE elementId(e) = eid
CREATE (c)-[:MENTIONS]->(e)`
	const size = 1000
	r := rand.New(rand.NewSource(1))
	zipf := rand.NewZipf(r, 1.1, 1, 19999)
	next := 0
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		writes, err := prepareMerge(benchChunks(r, zipf, next, size))
		if err != nil {
			b.Fatal(err)
		}
		next += size
		rows := make([]any, len(writes))
		for i, w := range writes {
			eids := make([]string, len(w.ct.Entities))
			for j, e := range w.ct.Entities {
				var k int
				_, _ = fmt.Sscanf(e.Key, "entity-%d", &k)
				eids[j] = ents[k]
			}
			rows[i] = map[string]any{"id": w.id, "contrib": w.contrib, "ents": eids}
		}
		b.StartTimer()
		if err := s.s.write(ctx, "writing the floor", func(tx neo4j.ManagedTransaction) error {
			_, err := runBatched(ctx, s.s, tx, cyFloor, nil, rows)
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*size*10)/b.Elapsed().Seconds(), "entities/s")
}
