package community

import (
	"context"
	"fmt"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/leiden"
	"github.com/graphrag/graphrag/pkg/pagerank"
	"github.com/graphrag/graphrag/pkg/wgraph"
)

// Where the algorithms ran, in Result.Method.
const (
	MethodStore = "store" // the graph store's native algorithms (Neo4j GDS)
	MethodGo    = "go"    // packages leiden and pagerank on a snapshot
)

// Options parameterize detection. The grapher's flags set them; the zero value is not
// useful (MinSize 0 keeps every community, Damping 0 is rejected by PageRank).
type Options struct {
	// Resolution, Seed and MaxLevels parameterize Leiden.
	Resolution float64
	Seed       uint64
	MaxLevels  int
	// Damping is PageRank's damping factor.
	Damping float64
	// MinSize: communities with fewer members get no record (their members still
	// belong to the larger communities above them).
	MinSize int
	// Previous is the hierarchy of the last detection (graphstore.Store.Communities
	// at every level); when set, the Go path starts from it (see warm.go) so that
	// regions the graph did not change in keep their communities. The store's
	// algorithms ignore it.
	Previous []graphstore.Community
}

// Result is one detection.
type Result struct {
	// Snapshot is the graph the algorithms ran on.
	Snapshot graphstore.Snapshot
	// Communities are sorted by level, then id.
	Communities []graphstore.Community
	// PageRank is the score of every entity key; the scores sum to 1.
	PageRank map[string]float64
	// Levels is the number of levels of the hierarchy.
	Levels int
	// Method is MethodStore or MethodGo.
	Method string
}

// Snapshotter reads the whole graph of a corpus; graphstore.Store is one.
type Snapshotter interface {
	Snapshot(ctx context.Context, corpus string) (graphstore.Snapshot, error)
}

// Detect runs hierarchical Leiden and PageRank on a corpus's entity graph: with the
// store's algorithms when a is not nil and they are available now, else in pure Go on
// a snapshot read from g.
func Detect(ctx context.Context, g Snapshotter, a graphstore.Algorithms, corpus string, o Options) (Result, error) {
	if a != nil {
		avail, err := a.Available(ctx)
		if err != nil {
			return Result{}, fmt.Errorf("checking the store's graph algorithms: %w", err)
		}
		if avail {
			res, err := a.Communities(ctx, corpus, graphstore.AlgorithmOptions{Resolution: o.Resolution, Seed: o.Seed,
				MaxLevels: o.MaxLevels, Damping: o.Damping, MaxIterations: 20})
			if err != nil {
				return Result{}, fmt.Errorf("running the store's graph algorithms: %w", err)
			}
			return FromStore(res, o.MinSize), nil
		}
	}
	snap, err := g.Snapshot(ctx, corpus)
	if err != nil {
		return Result{}, fmt.Errorf("reading graph snapshot: %w", err)
	}
	return OnSnapshot(ctx, snap, o)
}

// FromStore turns the outcome of a store's native algorithms into a Result.
func FromStore(res graphstore.AlgorithmResult, minSize int) Result {
	scores := make(map[string]float64, len(res.Snapshot.Keys))
	for i, k := range res.Snapshot.Keys {
		scores[k] = res.PageRank[i]
	}
	return Result{Snapshot: res.Snapshot, Communities: Hierarchy(res.Snapshot, res.Levels, minSize),
		PageRank: scores, Levels: len(res.Levels), Method: MethodStore}
}

// OnSnapshot runs Leiden and PageRank in Go on snap and turns the hierarchy into
// community records.
func OnSnapshot(ctx context.Context, snap graphstore.Snapshot, o Options) (Result, error) {
	res := Result{Snapshot: snap, PageRank: make(map[string]float64, len(snap.Keys)), Method: MethodGo}
	if len(snap.Keys) == 0 {
		return res, nil
	}
	g, err := Graph(snap)
	if err != nil {
		return Result{}, err
	}
	pr, err := pagerank.Run(g, pagerank.WithDamping(o.Damping))
	if err != nil {
		return Result{}, fmt.Errorf("pagerank: %w", err)
	}
	for i, k := range snap.Keys {
		res.PageRank[k] = pr.Scores[i]
	}
	opts := []leiden.Option{leiden.WithResolution(o.Resolution), leiden.WithSeed(o.Seed), leiden.WithMaxLevels(o.MaxLevels)}
	var prev []map[string]int
	if len(o.Previous) > 0 {
		prev = previousLevels(o.Previous)
		opts = append(opts, leiden.WithInitialMembership(seedMembership(snap.Keys, prev[len(prev)-1])))
	}
	lr, err := leiden.Run(ctx, g, opts...)
	if err != nil {
		return Result{}, fmt.Errorf("leiden: %w", err)
	}
	memberships := make([][]int, len(lr.Levels))
	for i, l := range lr.Levels {
		memberships[i] = l.Membership
	}
	if prev != nil {
		memberships = keepLevels(g, snap.Keys, memberships, prev)
	}
	res.Communities, res.Levels = Hierarchy(snap, memberships, o.MinSize), len(lr.Levels)
	return res, nil
}

// Graph is the weighted graph of a snapshot: node i is snap.Keys[i].
func Graph(snap graphstore.Snapshot) (*wgraph.Graph, error) {
	edges := make([]wgraph.Edge, len(snap.Edges))
	for i, e := range snap.Edges {
		edges[i] = wgraph.Edge{U: e.Source, V: e.Target, W: e.Weight}
	}
	g, err := wgraph.FromEdges(len(snap.Keys), edges)
	if err != nil {
		return nil, fmt.Errorf("building graph: %w", err)
	}
	return g, nil
}
