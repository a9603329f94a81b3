package leiden

import "github.com/graphrag/graphrag/pkg/wgraph"

// graph is the solver's adjacency: CSR with int32 node ids and no self loops
// (a loop adds the same amount to every choice of a node, so the local moving
// never needs it; node weights carry the degrees). The aggregate graphs of a
// run are built into two buffers used in turn, so a run allocates them once.
type graph struct {
	off []int // len n+1; the neighbours of u are nb[off[u]:off[u+1]]
	nb  []int32
	wt  []float64 // > 0, parallel to nb
}

func (g *graph) n() int { return len(g.off) - 1 }

func (g *graph) neighbors(u int32) ([]int32, []float64) {
	lo, hi := g.off[u], g.off[u+1]
	return g.nb[lo:hi], g.wt[lo:hi]
}

// fromWGraph copies the adjacency of g, keeping its (ascending) row order.
func fromWGraph(g *wgraph.Graph) *graph {
	n := g.N()
	off := make([]int, n+1)
	for u := range n {
		nb, _ := g.Neighbors(u)
		off[u+1] = off[u] + len(nb)
	}
	out := &graph{off: off, nb: make([]int32, off[n]), wt: make([]float64, off[n])}
	for u := range n {
		nb, wt := g.Neighbors(u)
		copy(out.nb[off[u]:], nb)
		copy(out.wt[off[u]:], wt)
	}
	return out
}

// scratch returns (*buf)[:n] zeroed, growing *buf when it is too small.
func scratch[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n)
	}
	out := (*buf)[:n]
	clear(out)
	return out
}

// aggregate collapses every community of memb (ids 0..k-1) of g into one node
// of dst, reusing dst's arrays. Weights between communities are summed in
// node order; weights inside a community are dropped (see graph). A row lists
// its neighbours in the order they are first met (members in node order, their
// rows in order): deterministic, and cheaper than sorting each row.
func (s *solver) aggregate(g *graph, memb []int32, k int, dst *graph) {
	start := scratch(&s.buf.start, k+1)
	for _, c := range memb {
		start[c+1]++
	}
	for c := range k {
		start[c+1] += start[c]
	}
	fill := scratch(&s.buf.fill, k)
	copy(fill, start[:k])
	members := scratch(&s.buf.members, len(memb))
	for u, c := range memb {
		members[fill[c]] = int32(u)
		fill[c]++
	}
	acc := scratch(&s.buf.edgeW, k)
	touched := s.buf.neigh[:0]
	if cap(dst.off) < k+1 {
		dst.off = make([]int, k+1)
	}
	dst.off = dst.off[:k+1]
	dst.off[0] = 0
	if cap(dst.nb) < len(g.nb) { // the aggregate never has more entries than g
		dst.nb, dst.wt = make([]int32, 0, len(g.nb)), make([]float64, 0, len(g.nb))
	}
	dst.nb, dst.wt = dst.nb[:0], dst.wt[:0]
	for c := range int32(k) {
		touched = touched[:0]
		for _, u := range members[start[c]:start[c+1]] {
			nb, wt := g.neighbors(u)
			for i, v := range nb {
				d := memb[v]
				if d == c {
					continue
				}
				if acc[d] == 0 { // weights are > 0, so 0 means not met yet
					touched = append(touched, d)
				}
				acc[d] += wt[i]
			}
		}
		for _, d := range touched {
			dst.nb = append(dst.nb, d)
			dst.wt = append(dst.wt, acc[d])
			acc[d] = 0
		}
		dst.off[c+1] = len(dst.nb)
	}
	s.buf.neigh = touched
}

// split writes into out (len g.n(), distinct from memb) the connected pieces
// of the communities of memb, numbered by their smallest node, and returns
// their count. Edges leaving a community are not followed.
func (s *solver) split(g *graph, memb, out []int32) int {
	for i := range out {
		out[i] = -1
	}
	stack := s.buf.stack[:0]
	var count int32
	for u := range int32(len(out)) {
		if out[u] >= 0 {
			continue
		}
		c := memb[u]
		out[u] = count
		stack = append(stack[:0], u)
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			nb, _ := g.neighbors(x)
			for _, v := range nb {
				if out[v] < 0 && memb[v] == c {
					out[v] = count
					stack = append(stack, v)
				}
			}
		}
		count++
	}
	s.buf.stack = stack
	return int(count)
}

// compact renumbers ids (all below bound) in place to 0..k-1 in order of
// first appearance, i.e. of each community's smallest node, and returns k.
func (s *solver) compact(ids []int32, bound int) int {
	next := scratch(&s.buf.next, bound) // new id + 1; 0 while unseen
	var k int32
	for u, c := range ids {
		if next[c] == 0 {
			k++
			next[c] = k
		}
		ids[u] = next[c] - 1
	}
	return int(k)
}

func countOf(membership []int32) int {
	var k int32
	for _, c := range membership {
		k = max(k, c+1)
	}
	return int(k)
}
