package wgraph

import (
	"fmt"
	"math"
	"slices"

	"github.com/graphrag/graphrag/pkg/errkind"
)

// MaxNodes is the largest node count a Graph can hold: neighbours are stored
// as int32 to halve the memory of the adjacency arrays.
const MaxNodes = math.MaxInt32

var (
	// ErrNodeOutOfRange reports an edge or membership entry naming a node outside 0..N-1.
	ErrNodeOutOfRange = errkind.New(errkind.Invalid, "wgraph: node out of range")
	// ErrInvalidWeight reports a negative, NaN or infinite edge weight.
	ErrInvalidWeight = errkind.New(errkind.Invalid, "wgraph: invalid edge weight")
	// ErrTooManyNodes reports a node count above MaxNodes or below zero.
	ErrTooManyNodes = errkind.New(errkind.Invalid, "wgraph: invalid node count")
	// ErrBadMembership reports a membership slice of the wrong length or with negative ids.
	ErrBadMembership = errkind.New(errkind.Invalid, "wgraph: invalid membership")
)

// Edge is an undirected weighted edge between U and V.
type Edge struct {
	U, V int
	W    float64
}

// Graph is an immutable undirected weighted graph in CSR form.
// The zero value is the empty graph.
type Graph struct {
	offsets    []int     // len n+1; neighbours of u are neighbors[offsets[u]:offsets[u+1]]
	neighbors  []int32   // sorted ascending per node, no self loops, no duplicates
	weights    []float64 // parallel to neighbors
	loops      []float64 // self-loop weight per node
	degrees    []float64 // weighted degree: sum of incident weights + 2*loop
	nodeWeight []float64 // size of the node (1 for an original node; summed by Aggregate)
	total      float64   // total edge weight m (each edge and loop once)
	edges      int       // distinct undirected edges including loops
}

// N returns the number of nodes.
func (g *Graph) N() int { return len(g.degrees) }

// EdgeCount returns the number of distinct undirected edges, self loops included.
func (g *Graph) EdgeCount() int { return g.edges }

// Neighbors returns the neighbours of u (ascending, self excluded) and the
// weights of the edges to them. The slices alias the graph: do not modify them.
func (g *Graph) Neighbors(u int) ([]int32, []float64) {
	lo, hi := g.offsets[u], g.offsets[u+1]
	return g.neighbors[lo:hi:hi], g.weights[lo:hi:hi]
}

// Degree returns the weighted degree of u; a self loop counts twice.
func (g *Graph) Degree(u int) float64 { return g.degrees[u] }

// SelfLoop returns the weight of the self loop on u (0 if none).
func (g *Graph) SelfLoop(u int) float64 { return g.loops[u] }

// NodeWeight returns the size of u: 1 for nodes of a built graph, the sum of
// the members' sizes for nodes of an aggregated graph.
func (g *Graph) NodeWeight(u int) float64 { return g.nodeWeight[u] }

// TotalWeight returns m, the sum of all edge weights with each undirected edge
// and each loop counted once (the sum of degrees is 2m).
func (g *Graph) TotalWeight() float64 { return g.total }

// Builder accumulates edges for a Graph. It is not safe for concurrent use.
type Builder struct {
	n     int
	edges []Edge
	err   error
}

// NewBuilder returns a builder for a graph of n nodes.
func NewBuilder(n int) *Builder {
	b := &Builder{n: n}
	if n < 0 || n > MaxNodes {
		b.err = fmt.Errorf("creating builder for %d nodes: %w", n, ErrTooManyNodes)
	}
	return b
}

// AddEdge adds an undirected edge. Zero-weight edges are ignored since they
// connect nothing in a weighted sense. The first invalid edge is reported by
// AddEdge and again by Build.
func (b *Builder) AddEdge(u, v int, w float64) error {
	if b.err != nil {
		return b.err
	}
	if u < 0 || u >= b.n || v < 0 || v >= b.n {
		b.err = fmt.Errorf("adding edge (%d,%d) to a graph of %d nodes: %w", u, v, b.n, ErrNodeOutOfRange)
		return b.err
	}
	if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
		b.err = fmt.Errorf("adding edge (%d,%d) with weight %v: %w", u, v, w, ErrInvalidWeight)
		return b.err
	}
	if w == 0 {
		return nil
	}
	b.edges = append(b.edges, Edge{U: u, V: v, W: w})
	return nil
}

// Build returns the graph. The builder may be reused afterwards.
func (b *Builder) Build() (*Graph, error) {
	if b.err != nil {
		return nil, b.err
	}
	return build(b.n, b.edges, nil), nil
}

// FromEdges builds a graph of n nodes from edges.
func FromEdges(n int, edges []Edge) (*Graph, error) {
	b := NewBuilder(n)
	b.edges = make([]Edge, 0, len(edges))
	for _, e := range edges {
		if err := b.AddEdge(e.U, e.V, e.W); err != nil {
			return nil, err
		}
	}
	return b.Build()
}

// build assembles the CSR arrays from valid edges. nodeWeight may be nil (all 1).
func build(n int, edges []Edge, nodeWeight []float64) *Graph {
	// Raw CSR with both directions of each non-loop edge, in input order.
	offsets := make([]int, n+1)
	loops := make([]float64, n)
	for _, e := range edges {
		if e.U == e.V {
			continue
		}
		offsets[e.U+1]++
		offsets[e.V+1]++
	}
	for i := range n {
		offsets[i+1] += offsets[i]
	}
	nb := make([]int32, offsets[n])
	wt := make([]float64, offsets[n])
	pos := slices.Clone(offsets[:n])
	for _, e := range edges {
		if e.U == e.V {
			loops[e.U] += e.W
			continue
		}
		nb[pos[e.U]], wt[pos[e.U]] = int32(e.V), e.W
		pos[e.U]++
		nb[pos[e.V]], wt[pos[e.V]] = int32(e.U), e.W
		pos[e.V]++
	}
	return compress(n, len(nb), loops, nodeWeight, func(u int, add func(v int32, w float64)) {
		for k := offsets[u]; k < offsets[u+1]; k++ {
			add(nb[k], wt[k])
		}
	})
}

// compress builds a Graph whose row u holds the entries that row(u, add)
// emits (capHint bounds their total), with duplicates summed (in emission order, so sums are reproducible)
// and neighbours sorted. Entries with v == u are added to the loop of u.
func compress(n, capHint int, loops, nodeWeight []float64, row func(u int, add func(v int32, w float64))) *Graph {
	if nodeWeight == nil {
		nodeWeight = make([]float64, n)
		for i := range nodeWeight {
			nodeWeight[i] = 1
		}
	}
	g := &Graph{
		offsets:    make([]int, n+1),
		neighbors:  make([]int32, 0, capHint),
		weights:    make([]float64, 0, capHint),
		loops:      loops,
		degrees:    make([]float64, n),
		nodeWeight: nodeWeight,
	}
	acc := make([]float64, n)
	touched := make([]int32, 0, 64)
	var cur int
	add := func(v int32, w float64) {
		if int(v) == cur {
			g.loops[cur] += w / 2 // each inner edge is emitted from both ends
			return
		}
		if acc[v] == 0 {
			touched = append(touched, v)
		}
		acc[v] += w
	}
	for u := range n {
		cur = u
		touched = touched[:0]
		row(u, add)
		slices.Sort(touched)
		for _, v := range touched {
			g.neighbors = append(g.neighbors, v)
			g.weights = append(g.weights, acc[v])
			acc[v] = 0
		}
		g.offsets[u+1] = len(g.neighbors)
	}
	g.neighbors = slices.Clip(g.neighbors)
	g.weights = slices.Clip(g.weights)
	for u := range n {
		deg := 2 * g.loops[u]
		for _, w := range g.weights[g.offsets[u]:g.offsets[u+1]] {
			deg += w
		}
		g.degrees[u] = deg
		g.total += deg
		if g.loops[u] > 0 {
			g.edges++
		}
	}
	g.total /= 2
	g.edges += len(g.neighbors) / 2
	return g
}
