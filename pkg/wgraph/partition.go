package wgraph

import (
	"fmt"
	"slices"
)

// DisconnectedError reports a community whose members do not form one
// connected subgraph.
type DisconnectedError struct {
	Community  int // community id in the membership
	Components int // number of connected pieces it falls into
}

func (e *DisconnectedError) Error() string {
	return fmt.Sprintf("wgraph: community %d is split into %d disconnected parts", e.Community, e.Components)
}

// checkMembership validates membership against g and returns the number of
// community ids used (max id + 1).
func checkMembership(g *Graph, membership []int) (int, error) {
	if len(membership) != g.N() {
		return 0, fmt.Errorf("membership has %d entries for %d nodes: %w", len(membership), g.N(), ErrBadMembership)
	}
	count := 0
	for u, c := range membership {
		if c < 0 {
			return 0, fmt.Errorf("node %d has community %d: %w", u, c, ErrBadMembership)
		}
		count = max(count, c+1)
	}
	return count, nil
}

// Modularity returns the modularity of membership on g with resolution γ:
//
//	Q = Σ_c [ L_c/m − γ (d_c / 2m)² ]
//
// where L_c is the weight inside community c (loops once), d_c the sum of its
// degrees and m the total edge weight. A graph without edges has modularity 0.
// It panics if membership does not have one entry per node or holds negative ids.
func Modularity(g *Graph, membership []int, resolution float64) float64 {
	count, err := checkMembership(g, membership)
	if err != nil {
		panic(err)
	}
	m := g.total
	if m == 0 {
		return 0
	}
	inside := make([]float64, count)
	degree := make([]float64, count)
	for u := 0; u < g.N(); u++ {
		c := membership[u]
		degree[c] += g.degrees[u]
		inside[c] += 2 * g.loops[u]
		nb, wt := g.Neighbors(u)
		for k, v := range nb {
			if membership[v] == c {
				inside[c] += wt[k] // each inner edge is seen from both ends
			}
		}
	}
	var q float64
	for c := range count {
		// float64() forbids FMA fusion so that Q is bit-identical on every platform.
		q += inside[c]/(2*m) - float64(resolution*(degree[c]/(2*m))*(degree[c]/(2*m)))
	}
	return q
}

// ConnectedComponents labels every node with its component; components are
// numbered 0..count-1 in order of their smallest node.
func ConnectedComponents(g *Graph) (membership []int, count int) {
	n := g.N()
	membership = make([]int, n)
	for i := range membership {
		membership[i] = -1
	}
	stack := make([]int32, 0, 64)
	for s := range n {
		if membership[s] >= 0 {
			continue
		}
		membership[s] = count
		stack = append(stack[:0], int32(s))
		for len(stack) > 0 {
			u := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			nb, _ := g.Neighbors(int(u))
			for _, v := range nb {
				if membership[v] < 0 {
					membership[v] = count
					stack = append(stack, v)
				}
			}
		}
		count++
	}
	return membership, count
}

// SplitDisconnected returns a membership in which every community of the given
// one is replaced by its connected pieces (edges leaving a community are not
// followed). New ids are numbered in order of each piece's smallest node, so
// the result is also canonical: equal partitions give equal slices.
func SplitDisconnected(g *Graph, membership []int) ([]int, int, error) {
	if _, err := checkMembership(g, membership); err != nil {
		return nil, 0, fmt.Errorf("splitting disconnected communities: %w", err)
	}
	n := g.N()
	out := make([]int, n)
	for i := range out {
		out[i] = -1
	}
	count := 0
	stack := make([]int32, 0, 64)
	for s := range n {
		if out[s] >= 0 {
			continue
		}
		c := membership[s]
		out[s] = count
		stack = append(stack[:0], int32(s))
		for len(stack) > 0 {
			u := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			nb, _ := g.Neighbors(int(u))
			for _, v := range nb {
				if out[v] < 0 && membership[v] == c {
					out[v] = count
					stack = append(stack, v)
				}
			}
		}
		count++
	}
	return out, count, nil
}

// CheckConnected returns nil if every community of membership induces a
// connected subgraph of g, a *DisconnectedError naming the first (smallest id)
// offending community otherwise, or an ErrBadMembership error.
func CheckConnected(g *Graph, membership []int) error {
	count, err := checkMembership(g, membership)
	if err != nil {
		return fmt.Errorf("checking community connectivity: %w", err)
	}
	pieces, _, err := SplitDisconnected(g, membership)
	if err != nil {
		return err
	}
	// Pieces never straddle communities, so a community is connected iff
	// exactly one piece lies in it.
	parts := make([]int, count)
	counted := make([]bool, len(membership))
	for u, c := range membership {
		if !counted[pieces[u]] {
			counted[pieces[u]] = true
			parts[c]++
		}
	}
	for c := range count {
		if parts[c] > 1 {
			return &DisconnectedError{Community: c, Components: parts[c]}
		}
	}
	return nil
}

// Renumber maps community ids to 0..count-1 in order of each community's
// smallest node, so that equal partitions get equal membership slices.
func Renumber(membership []int) (out []int, count int) {
	out = make([]int, len(membership))
	ids := make(map[int]int)
	for u, c := range membership {
		id, ok := ids[c]
		if !ok {
			id = len(ids)
			ids[c] = id
		}
		out[u] = id
	}
	return out, len(ids)
}

// Aggregate collapses every community of membership (ids 0..count-1, all used
// or not) into one node. Edges between communities are summed; edges inside a
// community become its self loop, so degrees, total weight and modularity are
// preserved. Node weights are summed.
func Aggregate(g *Graph, membership []int, count int) (*Graph, error) {
	got, err := checkMembership(g, membership)
	if err != nil {
		return nil, fmt.Errorf("aggregating graph: %w", err)
	}
	if got > count {
		return nil, fmt.Errorf("aggregating graph: community id %d not below count %d: %w", got-1, count, ErrBadMembership)
	}
	if count > MaxNodes {
		return nil, fmt.Errorf("aggregating graph into %d nodes: %w", count, ErrTooManyNodes)
	}
	// Group nodes by community (counting sort keeps node order inside each).
	start := make([]int, count+1)
	nodeWeight := make([]float64, count)
	loops := make([]float64, count)
	for u, c := range membership {
		start[c+1]++
		nodeWeight[c] += g.nodeWeight[u]
		loops[c] += g.loops[u]
	}
	for c := range count {
		start[c+1] += start[c]
	}
	members := make([]int32, g.N())
	pos := slices.Clone(start[:count])
	for u, c := range membership {
		members[pos[c]] = int32(u)
		pos[c]++
	}
	return compress(count, len(g.neighbors), loops, nodeWeight, func(c int, add func(v int32, w float64)) {
		for _, u := range members[start[c]:start[c+1]] {
			nb, wt := g.Neighbors(int(u))
			for k, v := range nb {
				add(int32(membership[v]), wt[k])
			}
		}
	}), nil
}
