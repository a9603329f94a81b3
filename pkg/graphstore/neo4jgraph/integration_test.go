//go:build integration

package neo4jgraph

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/graphrag/graphrag/pkg/community"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/graphstoretest"
	"github.com/graphrag/graphrag/pkg/pagerank"
	"github.com/graphrag/graphrag/pkg/wgraph"
	"github.com/graphrag/graphrag/pkg/wgraph/wgraphtest"
)

// serverURI returns the Bolt URI start.sh exported in env, or skips.
func serverURI(tb testing.TB, env string) string {
	tb.Helper()
	u := os.Getenv(env)
	if u == "" {
		tb.Skipf("%s is not set: start a server with scripts/integration/neo4j/start.sh and eval its output", env)
	}
	return u
}

func authOptions() []Option {
	if p := os.Getenv("GRAPHRAG_TEST_NEO4J_PASSWORD"); p != "" {
		return []Option{WithBasicAuth(os.Getenv("GRAPHRAG_TEST_NEO4J_USER"), p)}
	}
	return nil
}

// openEmpty connects to the test server and deletes everything the store
// writes, so that each case starts from an empty database.
func openEmpty(tb testing.TB, env string) *Store {
	tb.Helper()
	ctx := context.Background()
	s, err := Open(ctx, serverURI(tb, env), authOptions()...)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	if err := wipe(ctx, s); err != nil {
		tb.Fatalf("wiping the test database: %v", err)
	}
	return s
}

func wipe(ctx context.Context, s *Store) error {
	return s.s.write(ctx, "wiping", func(tx neo4j.ManagedTransaction) error {
		_, err := run(ctx, tx, `MATCH (n) WHERE n:Entity OR n:Chunk OR n:Community OR n:Membership OR n:Corpus
DETACH DELETE n`, nil)
		return err
	})
}

func TestConformance(t *testing.T) {
	uri := serverURI(t, "GRAPHRAG_TEST_NEO4J_URI")
	graphstoretest.Run(t, graphstoretest.Features{
		Persistent: true,
		Reopen: func(t *testing.T, s graphstore.Store) graphstore.Store {
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			r, err := Open(t.Context(), uri, authOptions()...)
			if err != nil {
				t.Fatalf("reopening: %v", err)
			}
			t.Cleanup(func() { _ = r.Close() })
			return r
		},
	}, func(t *testing.T) graphstore.Store { return openEmpty(t, "GRAPHRAG_TEST_NEO4J_URI") })
}

// mergeGraph stores g as one chunk per node, each holding that node's edges to
// higher nodes; keys are zero padded so that key order is node order.
func mergeGraph(tb testing.TB, s *Store, corpus string, edges []wgraph.Edge, n int) {
	tb.Helper()
	byNode := make([][]graphstore.RelationMention, n)
	for _, e := range edges {
		u, v := min(e.U, e.V), max(e.U, e.V)
		byNode[u] = append(byNode[u], graphstore.RelationMention{SourceKey: nodeKey(u), TargetKey: nodeKey(v), Strength: e.W})
	}
	var batch []graphstore.ChunkExtraction
	for u := range n {
		batch = append(batch, graphstore.ChunkExtraction{
			ChunkID:   fmt.Sprintf("chunk-%07d", u),
			Entities:  []graphstore.EntityMention{{Key: nodeKey(u), Name: nodeKey(u)}},
			Relations: byNode[u],
		})
		if len(batch) == 1000 || u == n-1 {
			if err := s.Merge(context.Background(), corpus, batch); err != nil {
				tb.Fatalf("Merge: %v", err)
			}
			batch = batch[:0]
		}
	}
}

func nodeKey(u int) string { return fmt.Sprintf("n%07d", u) }

func snapshotGraph(tb testing.TB, snap graphstore.Snapshot) *wgraph.Graph {
	tb.Helper()
	g, err := community.Graph(snap)
	if err != nil {
		tb.Fatalf("building graph from snapshot: %v", err)
	}
	return g
}

func TestGDSLeidenKarate(t *testing.T) {
	s := openEmpty(t, "GRAPHRAG_TEST_NEO4J_URI")
	karate := wgraphtest.KarateEdges()
	mergeGraph(t, s, "karate", karate, 34)
	// A pair related both ways: the projection must add both directions up as
	// Store.Snapshot does (karate has the edge 0-1).
	if err := s.Merge(t.Context(), "karate", []graphstore.ChunkExtraction{{ChunkID: "reverse",
		Relations: []graphstore.RelationMention{{SourceKey: nodeKey(1), TargetKey: nodeKey(0), Strength: 2}}}}); err != nil {
		t.Fatal(err)
	}
	algo := s.Algorithms()
	if ok, err := algo.Available(t.Context()); !ok || err != nil {
		t.Fatalf("Available = %v, %v; want true (the server was started with GDS)", ok, err)
	}
	res, err := algo.Communities(t.Context(), "karate", graphstore.AlgorithmOptions{Seed: 7, MaxLevels: 4})
	if err != nil {
		t.Fatalf("Communities: %v", err)
	}
	if len(res.Snapshot.Keys) != 34 || len(res.Snapshot.Edges) != len(karate) {
		t.Fatalf("snapshot has %d keys, %d edges; want 34, %d", len(res.Snapshot.Keys), len(res.Snapshot.Edges), len(karate))
	}
	want, err := s.Snapshot(t.Context(), "karate")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(want) != fmt.Sprint(res.Snapshot) {
		t.Errorf("projected snapshot differs from Store.Snapshot:\n got %v\nwant %v", res.Snapshot, want)
	}
	g := snapshotGraph(t, res.Snapshot)
	if len(res.Levels) == 0 || len(res.Levels) > 4 {
		t.Fatalf("%d levels, want 1..4", len(res.Levels))
	}
	for l, m := range res.Levels {
		if err := wgraph.CheckConnected(g, m); err != nil {
			t.Errorf("level %d: %v", l, err)
		}
		if l > 0 && count(m) > count(res.Levels[l-1]) {
			t.Errorf("level %d has %d communities, more than the finer level %d (%d)", l, count(m), l-1, count(res.Levels[l-1]))
		}
		if l > 0 {
			assertNested(t, res.Levels[l-1], m)
		}
	}
	top := res.Levels[len(res.Levels)-1]
	if q := wgraph.Modularity(g, top, 1); q < 0.37 {
		t.Errorf("modularity of the coarsest level = %.4f, want >= 0.37", q)
	}
	t.Logf("levels: %d, communities per level: %v, modularity %.4f", len(res.Levels), counts(res.Levels), wgraph.Modularity(g, top, 1))
	again, err := algo.Communities(t.Context(), "karate", graphstore.AlgorithmOptions{Seed: 7, MaxLevels: 4})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(again.Levels) != fmt.Sprint(res.Levels) {
		t.Errorf("same seed, different communities:\n%v\n%v", again.Levels, res.Levels)
	}
	assertNoProjections(t, s)
}

// assertNested checks that every community of fine lies inside one of coarse.
func assertNested(t *testing.T, fine, coarse []int) {
	t.Helper()
	parent := map[int]int{}
	for i, c := range fine {
		if p, ok := parent[c]; ok && p != coarse[i] {
			t.Errorf("community %d spans communities %d and %d one level up", c, p, coarse[i])
			return
		}
		parent[c] = coarse[i]
	}
}

func counts(levels [][]int) []int {
	out := make([]int, len(levels))
	for i, m := range levels {
		out[i] = count(m)
	}
	return out
}

// assertNoProjections checks that every GDS run dropped its projection.
func assertNoProjections(t *testing.T, s *Store) {
	t.Helper()
	err := s.s.read(t.Context(), "listing projections", func(tx neo4j.ManagedTransaction) error {
		recs, err := run(t.Context(), tx, `CALL gds.graph.list() YIELD graphName RETURN graphName`, nil)
		if err == nil && len(recs) > 0 {
			t.Errorf("%d GDS projections left in the catalog", len(recs))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestGDSPageRankMatchesGo(t *testing.T) {
	s := openEmpty(t, "GRAPHRAG_TEST_NEO4J_URI")
	// A small weighted graph without isolated nodes (GDS does not redistribute the
	// mass of nodes without edges, package pagerank does).
	edges := []wgraph.Edge{
		{U: 0, V: 1, W: 1}, {U: 0, V: 2, W: 2}, {U: 1, V: 2, W: 1}, {U: 2, V: 3, W: 3},
		{U: 3, V: 4, W: 1}, {U: 4, V: 5, W: 0.5}, {U: 3, V: 5, W: 1}, {U: 5, V: 6, W: 4}, {U: 1, V: 6, W: 1},
	}
	mergeGraph(t, s, "pr", edges, 7)
	for _, damping := range []float64{0.85, 0.6} {
		t.Run(fmt.Sprint(damping), func(t *testing.T) {
			res, err := s.Algorithms().Communities(t.Context(), "pr", graphstore.AlgorithmOptions{Damping: damping, MaxIterations: 200})
			if err != nil {
				t.Fatalf("Communities: %v", err)
			}
			want, err := pagerank.Run(snapshotGraph(t, res.Snapshot), pagerank.WithDamping(damping),
				pagerank.WithMaxIterations(200), pagerank.WithTolerance(1e-12))
			if err != nil {
				t.Fatal(err)
			}
			for i, k := range res.Snapshot.Keys {
				if d := math.Abs(res.PageRank[i] - want.Scores[i]); d > 1e-3 {
					t.Errorf("%s: GDS %.5f, pagerank %.5f", k, res.PageRank[i], want.Scores[i])
				}
			}
		})
	}
}

func TestGDSEmptyCorpusAndBadOptions(t *testing.T) {
	s := openEmpty(t, "GRAPHRAG_TEST_NEO4J_URI")
	res, err := s.Algorithms().Communities(t.Context(), "nothing", graphstore.AlgorithmOptions{})
	if err != nil || len(res.Snapshot.Keys) != 0 || len(res.Levels) != 0 {
		t.Errorf("Communities on an empty corpus = %+v, %v; want empty", res, err)
	}
	mergeGraph(t, s, "lonely", nil, 3) // nodes without edges
	res, err = s.Algorithms().Communities(t.Context(), "lonely", graphstore.AlgorithmOptions{})
	if err != nil || len(res.Snapshot.Keys) != 3 || len(res.Levels) != 1 || count(res.Levels[0]) != 3 {
		t.Errorf("Communities on edgeless graph = %+v, %v; want 3 singletons", res, err)
	}
	for _, o := range []graphstore.AlgorithmOptions{{Damping: 1}, {Resolution: -1}, {MaxLevels: -1}, {MaxIterations: -2}} {
		if _, err := s.Algorithms().Communities(t.Context(), "lonely", o); !errors.Is(err, graphstore.ErrInvalid) {
			t.Errorf("Communities(%+v) error = %v, want ErrInvalid", o, err)
		}
	}
	assertNoProjections(t, s)
}

func TestAvailableWithoutGDS(t *testing.T) {
	s := openEmpty(t, "GRAPHRAG_TEST_NEO4J_NOGDS_URI")
	ok, err := s.Algorithms().Available(t.Context())
	if ok || err != nil {
		t.Fatalf("Available = %v, %v; want false, nil", ok, err)
	}
	mergeGraph(t, s, "k", wgraphtest.KarateEdges(), 34)
	if _, err := s.Algorithms().Communities(t.Context(), "k", graphstore.AlgorithmOptions{}); !errors.Is(err, ErrNoGDS) {
		t.Fatalf("Communities without GDS: %v, want ErrNoGDS", err)
	}
}
