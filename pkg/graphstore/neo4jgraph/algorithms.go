package neo4jgraph

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/graphrag/graphrag/pkg/community"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/wgraph"
)

// ErrNoGDS is returned by GDS.Communities when the server has no Graph Data
// Science library; callers fall back to the pure Go algorithms.
var ErrNoGDS = errors.New("neo4jgraph: Graph Data Science is not installed")

// GDS runs Leiden and PageRank inside Neo4j with the Graph Data Science library.
// It is a separate type from Store because graphstore.Store and
// graphstore.Algorithms both name a method Communities.
type GDS struct{ s *store }

var _ graphstore.Algorithms = (*GDS)(nil)

// Algorithms returns the GDS-backed graphstore.Algorithms of the store, behind
// graphstore.ValidatingAlgorithms.
func (st *Store) Algorithms() graphstore.Algorithms {
	return graphstore.ValidatingAlgorithms(&GDS{s: st.s})
}

// Defaults for zero AlgorithmOptions fields, those of packages leiden and
// pagerank, so that both paths behave alike.
const (
	defaultResolution    = 1.0
	defaultMaxLevels     = 3
	defaultDamping       = 0.85
	defaultMaxIterations = 20
	// pageRankTolerance is GDS's per-node change threshold; 1e-7 is its default.
	pageRankTolerance = 1e-7
)

const (
	cyGDSVersion = `CALL gds.version() YIELD gdsVersion RETURN gdsVersion`

	// Each RELATED relationship becomes an undirected weighted one, so a pair
	// related both ways becomes two parallel relationships, whose weights Leiden
	// and PageRank add up as the snapshot does; folding them in Cypher first
	// doubled the projection time (2.1s against 1.0s at 100k relationships). An
	// entity without relationships still becomes a node through the null target.
	// RELATED only links entities of one corpus, so b needs no corpus check. Rows go
	// in key order: GDS numbers nodes in the order they first appear, and Leiden's
	// result depends on that numbering even with a fixed seed, so without the order two
	// stores holding the same graph (written in another order: a re-index, replicas
	// merging in another interleaving) got different communities.
	cyProject = `
MATCH (a:Entity {corpus: $corpus})
OPTIONAL MATCH (a)-[r:RELATED]->(b:Entity)
WITH a, r, b ORDER BY a.key, b.key
WITH gds.graph.project($graph, a, b,
       {relationshipProperties: CASE WHEN b IS NULL THEN {} ELSE {weight: r.weight} END},
       {undirectedRelationshipTypes: ['*']}) AS g
RETURN g.nodeCount AS nodes, g.relationshipCount AS relationships`

	cyDropGraph = `CALL gds.graph.drop($graph, false) YIELD graphName RETURN graphName`

	cyLeiden = `
CALL gds.leiden.stream($graph, {
  relationshipWeightProperty: 'weight', gamma: $gamma, randomSeed: $seed, concurrency: 1,
  includeIntermediateCommunities: true})
YIELD nodeId, intermediateCommunityIds
RETURN nodeId, gds.util.asNode(nodeId).key AS key, intermediateCommunityIds`

	// cyNodes stands in for cyLeiden on a graph without relationships, where
	// every node is its own community.
	cyNodes = `
CALL gds.degree.stream($graph)
YIELD nodeId
RETURN nodeId, gds.util.asNode(nodeId).key AS key, [nodeId] AS intermediateCommunityIds`

	cyPageRank = `
CALL gds.pageRank.stream($graph, {
  relationshipWeightProperty: 'weight', dampingFactor: $damping, maxIterations: $iterations,
  tolerance: $tolerance, concurrency: 1})
YIELD nodeId, score
RETURN nodeId, score`

	cyProjectedEdges = `
CALL gds.graph.relationshipProperty.stream($graph, 'weight')
YIELD sourceNodeId, targetNodeId, propertyValue
RETURN sourceNodeId, targetNodeId, propertyValue`
)

// Available reports whether the GDS procedures are installed.
func (g *GDS) Available(ctx context.Context) (bool, error) {
	err := g.s.read(ctx, "checking for Graph Data Science", func(tx neo4j.ManagedTransaction) error {
		_, err := run(ctx, tx, cyGDSVersion, nil)
		return err
	})
	if isNoProcedure(err) {
		return false, nil
	}
	return err == nil, err
}

func isNoProcedure(err error) bool {
	var nerr *neo4j.Neo4jError
	return errors.As(err, &nerr) && nerr.Code == codeProcedureNotFound
}

type algoConfig struct {
	gamma, damping        float64
	seed                  int64
	maxLevels, iterations int
}

func algorithmConfig(o graphstore.AlgorithmOptions) (algoConfig, error) {
	c := algoConfig{
		gamma: cmp.Or(o.Resolution, defaultResolution), damping: cmp.Or(o.Damping, defaultDamping),
		// GDS takes a signed 64-bit seed; the conversion keeps every seed distinct.
		seed:      int64(o.Seed),
		maxLevels: cmp.Or(o.MaxLevels, defaultMaxLevels), iterations: cmp.Or(o.MaxIterations, defaultMaxIterations),
	}
	switch {
	case !(c.gamma > 0) || math.IsInf(c.gamma, 0):
		return c, fmt.Errorf("resolution %v: %w", o.Resolution, graphstore.ErrInvalid)
	case !(c.damping > 0 && c.damping < 1):
		return c, fmt.Errorf("damping %v: %w", o.Damping, graphstore.ErrInvalid)
	case c.maxLevels < 1:
		return c, fmt.Errorf("max levels %d: %w", o.MaxLevels, graphstore.ErrInvalid)
	case c.iterations < 1:
		return c, fmt.Errorf("max iterations %d: %w", o.MaxIterations, graphstore.ErrInvalid)
	}
	return c, nil
}

// Communities projects the corpus's entity graph into the GDS catalog, streams
// Leiden (with its intermediate levels) and PageRank, and drops the projection
// again, also when a step fails. The snapshot returned is the projected graph,
// read back from the catalog, so memberships and scores index exactly the graph
// the algorithms saw even while merges go on.
func (g *GDS) Communities(ctx context.Context, corpus string, o graphstore.AlgorithmOptions) (graphstore.AlgorithmResult, error) {
	cfg, err := algorithmConfig(o)
	if err != nil {
		return graphstore.AlgorithmResult{}, fmt.Errorf("running GDS on %s: %w", corpus, err)
	}
	res, err := g.communities(ctx, corpus, cfg)
	if err != nil {
		if isNoProcedure(err) {
			err = fmt.Errorf("%w: %w", ErrNoGDS, err)
		}
		return graphstore.AlgorithmResult{}, fmt.Errorf("running GDS on %s: %w", corpus, err)
	}
	return res, nil
}

func (g *GDS) communities(ctx context.Context, corpus string, cfg algoConfig) (res graphstore.AlgorithmResult, err error) {
	name, err := graphName()
	if err != nil {
		return res, err
	}
	params := map[string]any{"graph": name, "corpus": corpus}
	var nodes, rels int64
	err = g.s.read(ctx, "projecting the entity graph", func(tx neo4j.ManagedTransaction) error {
		// A retried attempt must not trip over the graph of the failed one.
		if _, err := run(ctx, tx, cyDropGraph, params); err != nil {
			return err
		}
		recs, err := run(ctx, tx, cyProject, params)
		if err != nil || len(recs) == 0 {
			return err
		}
		nodes, rels = asInt(recs[0].Values[0]), asInt(recs[0].Values[1])
		return nil
	})
	defer func() {
		// Dropping must happen even when ctx is what failed.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		derr := g.s.read(dctx, "dropping the projection", func(tx neo4j.ManagedTransaction) error {
			_, err := run(dctx, tx, cyDropGraph, params)
			return err
		})
		if err == nil && derr != nil {
			err = derr
		}
	}()
	if err != nil || nodes == 0 {
		return res, err
	}
	var nodeIDs []int64
	var keys []string
	var levels [][]int64
	var ranks map[int64]float64
	var edges [][2]int64
	var weights []float64
	err = g.s.read(ctx, "streaming Leiden", func(tx neo4j.ManagedTransaction) error {
		q := cyLeiden
		if rels == 0 {
			q = cyNodes // GDS 2.13 Leiden fails on a graph without relationships
		}
		recs, err := run(ctx, tx, q, map[string]any{"graph": name, "gamma": cfg.gamma, "seed": cfg.seed})
		if err != nil {
			return err
		}
		nodeIDs, keys, levels = nil, nil, nil
		for _, r := range recs {
			if r.Values[1] == nil {
				continue // the entity was deleted after the projection
			}
			nodeIDs = append(nodeIDs, asInt(r.Values[0]))
			keys = append(keys, asString(r.Values[1]))
			levels = append(levels, asInts(r.Values[2]))
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	err = g.s.read(ctx, "streaming PageRank", func(tx neo4j.ManagedTransaction) error {
		recs, err := run(ctx, tx, cyPageRank, map[string]any{
			"graph": name, "damping": cfg.damping, "iterations": cfg.iterations, "tolerance": pageRankTolerance,
		})
		if err != nil {
			return err
		}
		ranks = make(map[int64]float64, len(recs))
		for _, r := range recs {
			ranks[asInt(r.Values[0])] = asFloat(r.Values[1])
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	if rels == 0 {
		return assemble(nodeIDs, keys, levels, ranks, nil, nil, cfg.maxLevels)
	}
	err = g.s.read(ctx, "streaming the projected relationships", func(tx neo4j.ManagedTransaction) error {
		recs, err := run(ctx, tx, cyProjectedEdges, params)
		if err != nil {
			return err
		}
		edges, weights = make([][2]int64, len(recs)), make([]float64, len(recs))
		for i, r := range recs {
			edges[i] = [2]int64{asInt(r.Values[0]), asInt(r.Values[1])}
			weights[i] = asFloat(r.Values[2])
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	return assemble(nodeIDs, keys, levels, ranks, edges, weights, cfg.maxLevels)
}

func graphName() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("naming the projection: %w", err)
	}
	return "graphrag-" + hex.EncodeToString(b[:]), nil
}

func asInts(v any) []int64 {
	l, _ := v.([]any)
	out := make([]int64, len(l))
	for i, x := range l {
		out[i] = asInt(x)
	}
	return out
}

// assemble turns the streamed GDS results (indexed by GDS node id) into an
// AlgorithmResult indexed by sorted key.
func assemble(nodeIDs []int64, keys []string, levels [][]int64, ranks map[int64]float64,
	edges [][2]int64, weights []float64, maxLevels int) (graphstore.AlgorithmResult, error) {
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(keys[a], keys[b]) })
	var res graphstore.AlgorithmResult
	idx := make(map[int64]int, len(keys))
	sortedLevels := make([][]int64, len(keys))
	res.PageRank = make([]float64, len(keys))
	var total float64
	for pos, i := range order {
		res.Snapshot.Keys = append(res.Snapshot.Keys, keys[i])
		idx[nodeIDs[i]] = pos
		sortedLevels[pos] = levels[i]
		res.PageRank[pos] = ranks[nodeIDs[i]]
		total += res.PageRank[pos]
	}
	// GDS scores are not normalized; graphstore scores sum to 1 like package
	// pagerank's.
	if total > 0 {
		for i := range res.PageRank {
			res.PageRank[i] /= total
		}
	}
	// An undirected relationship streams once per direction: keep the
	// smaller-to-larger one, and add up parallel ones (a pair related both ways).
	sums := map[[2]int]float64{}
	for i, e := range edges {
		a, oka := idx[e[0]]
		b, okb := idx[e[1]]
		if !oka || !okb || a >= b {
			continue
		}
		sums[[2]int{a, b}] += weights[i]
	}
	for k, w := range sums {
		res.Snapshot.Edges = append(res.Snapshot.Edges, graphstore.Edge{Source: k[0], Target: k[1], Weight: w})
	}
	slices.SortFunc(res.Snapshot.Edges, func(x, y graphstore.Edge) int {
		return cmp.Or(cmp.Compare(x.Source, y.Source), cmp.Compare(x.Target, y.Target))
	})
	g, err := community.Graph(res.Snapshot)
	if err != nil {
		return res, fmt.Errorf("building the projected graph: %w", err)
	}
	res.Levels, err = hierarchy(g, sortedLevels, maxLevels)
	return res, err
}

// hierarchy turns per-node intermediate community ids into nested levels,
// finest first. GDS lists the ids in the order of its passes; the order is
// detected from the community counts rather than assumed, since a finer level
// never has fewer communities. Levels are renumbered by smallest member,
// repeated ones dropped and at most maxLevels kept (the finest, the coarsest and
// evenly spaced ones between, as package leiden does).
//
// GDS reports each pass's partition before refinement, and a refined piece of a
// community may join a different community in the next pass, so GDS's levels
// need not nest (they do not on 100k-edge graphs). The coarsest level, the final
// Leiden partition, is kept as is; every finer level is intersected with the one
// above it and split into connected pieces, which makes the hierarchy nest and
// every community connected without changing the final partition.
func hierarchy(g *wgraph.Graph, ids [][]int64, maxLevels int) ([][]int, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	n := len(ids[0])
	for i, l := range ids {
		if len(l) != n || n == 0 {
			return nil, fmt.Errorf("node %d has %d community levels, node 0 has %d", i, len(l), n)
		}
	}
	raw := make([][]int, n)
	for l := range n {
		m := make([]int, len(ids))
		dense := map[int64]int{}
		for i := range ids {
			c, ok := dense[ids[i][l]]
			if !ok {
				c = len(dense)
				dense[ids[i][l]] = c
			}
			m[i] = c
		}
		raw[l], _ = wgraph.Renumber(m)
	}
	if count(raw[0]) < count(raw[n-1]) {
		slices.Reverse(raw)
	}
	levels := dropRepeats(raw)
	if len(levels) > maxLevels {
		kept := make([][]int, 0, maxLevels)
		last := len(levels) - 1
		for i := range maxLevels {
			j := last
			if maxLevels > 1 {
				j = int(math.Round(float64(i) * float64(last) / float64(maxLevels-1)))
			}
			kept = append(kept, levels[j])
		}
		levels = kept
	}
	for l := len(levels) - 2; l >= 0; l-- {
		pair := make([]int, len(levels[l]))
		pairIDs := map[[2]int]int{}
		for i, c := range levels[l] {
			k := [2]int{c, levels[l+1][i]}
			id, ok := pairIDs[k]
			if !ok {
				id = len(pairIDs)
				pairIDs[k] = id
			}
			pair[i] = id
		}
		split, _, err := wgraph.SplitDisconnected(g, pair)
		if err != nil {
			return nil, fmt.Errorf("splitting level %d into connected communities: %w", l, err)
		}
		levels[l] = split
	}
	return dropRepeats(levels), nil
}

// dropRepeats removes levels equal to the one before them.
func dropRepeats(levels [][]int) [][]int {
	var out [][]int
	for _, m := range levels {
		if len(out) > 0 && slices.Equal(out[len(out)-1], m) {
			continue
		}
		out = append(out, m)
	}
	return out
}

func count(m []int) int {
	n := 0
	for _, c := range m {
		n = max(n, c+1)
	}
	return n
}
