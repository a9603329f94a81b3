package embedded

import (
	"cmp"
	"runtime"
	"slices"
	"sync"
)

// insertGroup is how many nodes a batch insert adds at once. Each node of a group
// searches the graph as it was before the group, so nodes of one group do not find each
// other through the graph; each is compared with the group's earlier nodes directly
// instead (at most insertGroup-1 distances, against the thousands a search scores), so
// no candidate is lost.
const insertGroup = 128

// parallelFrom is the graph size below which a batch is inserted one node at a time:
// a small graph is cheap to search, and its first nodes shape everything after them.
const parallelFrom = 2 * insertGroup

// reverseLink is a link to add from an older node to a new one.
type reverseLink struct {
	from, to int32
	layer    int
}

// insertBatch adds nodes with keys (all new) and vectors, on up to GOMAXPROCS
// goroutines. For each group of nodes it
//  1. appends them without links (nothing links to them yet, so searches cannot reach
//     them);
//  2. in parallel, searches for each node's candidates and sets its own lists (each
//     goroutine writes only the lists of the nodes it handles);
//  3. in parallel, adds the links from the chosen neighbours back to the new nodes,
//     each goroutine owning the targets whose id is its own modulo the workers, and
//     applying a target's links in the order of the new nodes.
//
// The result does not depend on the number of goroutines. The final HNSW inserts of a
// large corpus's entities were one core's work while the other idled
// (docs/benchmarks.md, indexing at 100k).
func (g *annGraph) insertBatch(keys []uint64, vecs []qvec) {
	workers := runtime.GOMAXPROCS(0)
	i := 0
	for ; i < len(keys) && (g.len() < parallelFrom || workers == 1); i++ {
		g.insert(keys[i], vecs[i])
	}
	for ; i < len(keys); i += insertGroup {
		n := min(insertGroup, len(keys)-i)
		g.insertGroup(keys[i:i+n], vecs[i:i+n], workers)
	}
}

func (g *annGraph) insertGroup(keys []uint64, vecs []qvec, workers int) {
	first := int32(g.len())
	for j := range keys {
		g.appendNode(keys[j], vecs[j], g.drawLevel())
	}
	ids := make([]int32, len(keys))
	for j := range ids {
		ids[j] = first + int32(j)
	}
	// Step 2: each node's own lists; its reverse links are collected per node.
	links := make([][]reverseLink, len(keys))
	parallel(workers, len(keys), func(j int) {
		links[j] = g.linkForward(ids[j], ids[:j])
	})
	// Step 3: reverse links by target, in node order within a target.
	parallel(workers, workers, func(w int) {
		for _, ls := range links {
			for _, r := range ls {
				if int(r.to)%workers != w {
					continue
				}
				maxLinks := g.m
				if r.layer == 0 {
					maxLinks = g.m0
				}
				g.link(r.to, r.from, r.layer, maxLinks)
			}
		}
	})
	for _, id := range ids {
		if l := int(g.levels[id]); g.entry < 0 || l > g.top {
			g.entry, g.top = id, l
		}
	}
}

// linkForward chooses node id's neighbours on each of its layers among the graph's
// older nodes (searched as insert does) and the group's nodes before it (compared
// directly), sets its lists, and returns the reverse links to add.
func (g *annGraph) linkForward(id int32, before []int32) []reverseLink {
	q, level := g.vecs[id], int(g.levels[id])
	var out []reverseLink
	ep := g.entry
	for l := g.top; l > level; l-- {
		ep = g.greedy(q, ep, l)
	}
	for l := level; l >= 0; l-- {
		var cands []cand
		if l <= g.top {
			cands = g.searchLayer(q, ep, g.efConstruction, l)
			ep = cands[0].id
		}
		for _, o := range before {
			if int(g.levels[o]) >= l {
				cands = append(cands, cand{o, dist(q, g.vecs[o])})
			}
		}
		if len(cands) == 0 {
			continue // the first node on this layer
		}
		slices.SortStableFunc(cands, func(a, b cand) int { return cmp.Compare(a.d, b.d) })
		nb := g.selectNeighbors(cands[:min(len(cands), g.efConstruction)], g.m)
		g.setNeighbours(id, l, nb)
		for _, n := range nb {
			out = append(out, reverseLink{from: id, to: n, layer: l})
		}
	}
	return out
}

// parallel calls fn(0..n-1) on up to workers goroutines and waits for them.
func parallel(workers, n int, fn func(int)) {
	if workers <= 1 || n <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	for range min(workers, n) {
		wg.Go(func() {
			for i := range next {
				fn(i)
			}
		})
	}
	wg.Wait()
}
