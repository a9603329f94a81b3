package embedded

import (
	"math"
	"math/rand"
	"slices"
	"sync"
)

// annGraph is a Hierarchical Navigable Small World graph (Malkov & Yashunin,
// 2018) over unit vectors quantized to int8 (qvec; distances are
// approximate, the caller re-ranks what a search returns), with the paper's neighbour-selection heuristic
// (Algorithm 4), 2·M links on layer 0 and the standard ef-bounded search.
//
// It replaces github.com/coder/hnsw v0.6.1, which was tried first and measured
// again against this graph on realistic vectors (tools/hnsw-peers,
// docs/adr/0019-hnsw-recall.md): recall@50 0.21 at 10k whatever its ef, as
// its search stops at the first expansion that does not beat the best
// distance so far and keeps only k results.
//
// Nodes are never removed: a replaced or deleted record's node stays as a
// routing point and the caller skips it (denseIndex.nodes); the caller
// rebuilds the graph when such nodes dominate. Not safe for concurrent
// inserts; concurrent searches are safe when no insert runs.
//
// Layer 0, where every node has a list and a search spends nearly all its
// time, is stored without pointers: fixed slots of m0+1 int32 (the count,
// then the neighbours) in blocks of blockNodes nodes. A list is then one
// memory access away from its node id rather than three (node → layers →
// list), and the garbage collector has one object per block to scan instead
// of two per node. The few nodes on higher layers (1 in m) keep slices.
type annGraph struct {
	m, m0, efConstruction int
	ml                    float64
	rng                   *rand.Rand

	keys   []uint64
	vecs   []qvec
	levels []uint8             // node → its highest layer
	base   [][]int32           // layer-0 slots, blockNodes per block
	upper  map[int32][][]int32 // node → its lists on layers 1..levels[node]
	byKey  map[uint64]int32
	entry  int32 // -1 when empty
	top    int   // highest layer

	visited sync.Pool // *visitSet
}

// blockNodes is how many nodes' layer-0 slots share one block: 4096·49·4 B
// ≈ 0.8 MB at the default M. The last block grows as nodes arrive, so a
// small collection does not pay for a whole block.
const (
	blockShift = 12
	blockNodes = 1 << blockShift
	blockMask  = blockNodes - 1
)

// slot returns node n's layer-0 slot: the count, then room for m0 links.
func (g *annGraph) slot(n int32) []int32 {
	stride := g.m0 + 1
	at := int(n&blockMask) * stride
	return g.base[n>>blockShift][at : at+stride : at+stride]
}

// neighbours returns node n's list on layer l. It is the graph's own
// memory: valid until the next insert.
func (g *annGraph) neighbours(n int32, l int) []int32 {
	if l == 0 {
		s := g.slot(n)
		return s[1 : 1+s[0]]
	}
	return g.upper[n][l-1]
}

// setNeighbours replaces node n's list on layer l with a copy of nb, which
// must fit the layer (m0 links on layer 0).
func (g *annGraph) setNeighbours(n int32, l int, nb []int32) {
	if l == 0 {
		s := g.slot(n)
		s[0] = int32(copy(s[1:], nb))
		return
	}
	g.upper[n][l-1] = slices.Clip(slices.Clone(nb))
}

// addNode makes room for node id (the next one) with lists up to layer level.
func (g *annGraph) addNode(id int32, level int) {
	stride := g.m0 + 1
	if id&blockMask == 0 {
		g.base = append(g.base, make([]int32, 0, stride*min(blockNodes, 64)))
	}
	last := &g.base[len(g.base)-1]
	n := len(*last)
	*last = slices.Grow(*last, stride)[:n+stride]
	clear((*last)[n:])
	g.levels = append(g.levels, uint8(level))
	if level > 0 {
		g.upper[id] = make([][]int32, level)
	}
}

func newANNGraph(m, efConstruction int) *annGraph {
	return &annGraph{
		m: m, m0: 2 * m, efConstruction: efConstruction,
		ml:    1 / math.Log(float64(m)),
		rng:   rand.New(rand.NewSource(rand.Int63())),
		byKey: make(map[uint64]int32),
		upper: make(map[int32][][]int32),
		entry: -1,
	}
}

func (g *annGraph) len() int { return len(g.keys) }

func (g *annGraph) lookup(key uint64) (qvec, bool) {
	if g == nil {
		return qvec{}, false
	}
	id, ok := g.byKey[key]
	if !ok {
		return qvec{}, false
	}
	return g.vecs[id], true
}

func dist(a, b qvec) float32 { return 1 - a.dot(b) }

// cand is a node and its distance to the query.
type cand struct {
	id int32
	d  float32
}

// candHeap is a binary min-heap of candidates by d. It is typed (no
// interface boxing per push, unlike container/heap): searches push a
// candidate per visited node. A heap of the farthest results stores -d.
type candHeap []cand

func (h *candHeap) push(c cand) {
	*h = append(*h, c)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if a[p].d <= a[i].d {
			break
		}
		a[p], a[i] = a[i], a[p]
		i = p
	}
}

func (h *candHeap) pop() cand {
	a := *h
	top := a[0]
	last := len(a) - 1
	a[0] = a[last]
	a = a[:last]
	for i := 0; ; {
		m, l, r := i, 2*i+1, 2*i+2
		if l < len(a) && a[l].d < a[m].d {
			m = l
		}
		if r < len(a) && a[r].d < a[m].d {
			m = r
		}
		if m == i {
			break
		}
		a[m], a[i] = a[i], a[m]
		i = m
	}
	*h = a
	return top
}

// visitSet marks visited nodes with a generation counter, so that it is
// reused across searches without clearing.
type visitSet struct {
	gen   uint32
	marks []uint32
	todo  []int32 // searchLayer's scratch list of neighbours to score
}

func (g *annGraph) getVisited() *visitSet {
	v, _ := g.visited.Get().(*visitSet)
	if v == nil {
		v = &visitSet{}
	}
	if len(v.marks) < len(g.keys) {
		v.marks = make([]uint32, len(g.keys)+len(g.keys)/4)
		v.gen = 0
	}
	v.gen++
	if v.gen == 0 { // wrapped: clear once
		clear(v.marks)
		v.gen = 1
	}
	return v
}

// drawLevel draws a new node's highest layer.
func (g *annGraph) drawLevel() int { return int(-math.Log(1-g.rng.Float64()) * g.ml) }

// appendNode adds a node without links and returns its id.
func (g *annGraph) appendNode(key uint64, vec qvec, level int) int32 {
	id := int32(len(g.keys))
	g.keys = append(g.keys, key)
	g.vecs = append(g.vecs, vec)
	g.addNode(id, level)
	g.byKey[key] = id
	return id
}

// insert adds a node; key must be new.
func (g *annGraph) insert(key uint64, vec qvec) {
	level := g.drawLevel()
	id := g.appendNode(key, vec, level)
	if g.entry < 0 {
		g.entry, g.top = id, level
		return
	}
	ep := g.entry
	for l := g.top; l > level; l-- {
		ep = g.greedy(vec, ep, l)
	}
	for l := min(level, g.top); l >= 0; l-- {
		cands := g.searchLayer(vec, ep, g.efConstruction, l)
		maxLinks := g.m
		if l == 0 {
			maxLinks = g.m0
		}
		nb := g.selectNeighbors(cands, g.m)
		g.setNeighbours(id, l, nb)
		for _, n := range nb {
			g.link(n, id, l, maxLinks)
		}
		ep = cands[0].id
	}
	if level > g.top {
		g.entry, g.top = id, level
	}
}

// link adds the edge n→id; a full list replaces its farthest neighbour if id
// is nearer. (Re-running the diversity heuristic here, as hnswlib does, made
// inserts several times slower.) A list's capacity never exceeds maxLinks:
// appending to a full list, as this did before, doubled it for good.
func (g *annGraph) link(n, id int32, l, maxLinks int) {
	nb := g.neighbours(n, l)
	if len(nb) < maxLinks {
		if l == 0 {
			s := g.slot(n)
			s[1+s[0]] = id
			s[0]++
			return
		}
		if len(nb) == cap(nb) {
			nb = append(make([]int32, 0, min(maxLinks, max(2*cap(nb), 4))), nb...)
		}
		g.upper[n][l-1] = append(nb, id)
		return
	}
	worst, worstD := -1, dist(g.vecs[n], g.vecs[id])
	for i, x := range nb {
		if d := dist(g.vecs[n], g.vecs[x]); d > worstD {
			worst, worstD = i, d
		}
	}
	if worst >= 0 {
		nb[worst] = id
	}
}

// selectNeighbors keeps up to m candidates (sorted nearest first), skipping
// any that is closer to an already kept neighbour than to the base: this
// keeps links pointing in diverse directions, so clusters stay connected.
func (g *annGraph) selectNeighbors(cands []cand, m int) []int32 {
	out := make([]int32, 0, m)
	for _, c := range cands {
		if len(out) >= m {
			break
		}
		good := true
		for _, r := range out {
			if dist(g.vecs[c.id], g.vecs[r]) < c.d {
				good = false
				break
			}
		}
		if good {
			out = append(out, c.id)
		}
	}
	return out
}

// greedy walks layer l towards q from ep and returns the closest node found.
func (g *annGraph) greedy(q qvec, ep int32, l int) int32 {
	cur, curD := ep, dist(q, g.vecs[ep])
	for changed := true; changed; {
		changed = false
		for _, n := range g.neighbours(cur, l) {
			if d := dist(q, g.vecs[n]); d < curD {
				cur, curD, changed = n, d, true
			}
		}
	}
	return cur
}

// searchLayer returns up to ef nodes of layer l nearest to q, nearest first.
func (g *annGraph) searchLayer(q qvec, ep int32, ef, l int) []cand {
	vis := g.getVisited()
	defer g.visited.Put(vis)
	d0 := dist(q, g.vecs[ep])
	cands := candHeap{{ep, d0}}
	res := candHeap{{ep, -d0}} // farthest on top
	vis.marks[ep] = vis.gen
	todo := vis.todo
	for len(cands) > 0 {
		c := cands.pop()
		if c.d > -res[0].d && len(res) >= ef {
			break
		}
		// Mark and prefetch the unvisited neighbours before scoring any. In a
		// graph of hundreds of thousands of nodes their codes are out of cache,
		// and scoring them one by one waits on each miss in turn
		// (BenchmarkInsertLarge).
		todo = todo[:0]
		for _, n := range g.neighbours(c.id, l) {
			if vis.marks[n] == vis.gen {
				continue
			}
			vis.marks[n] = vis.gen
			g.vecs[n].prefetch()
			todo = append(todo, n)
		}
		for _, n := range todo {
			d := dist(q, g.vecs[n])
			if len(res) < ef || d < -res[0].d {
				cands.push(cand{n, d})
				res.push(cand{n, -d})
				if len(res) > ef {
					res.pop()
				}
			}
		}
	}
	vis.todo = todo
	out := make([]cand, len(res))
	for i := len(out) - 1; i >= 0; i-- {
		c := res.pop()
		out[i] = cand{c.id, -c.d}
	}
	return out
}

// search returns up to max(ef, k) nodes nearest to q, nearest first (by
// the quantized distance).
func (g *annGraph) search(q qvec, k, ef int) []cand {
	if g.entry < 0 {
		return nil
	}
	ep := g.entry
	for l := g.top; l > 0; l-- {
		ep = g.greedy(q, ep, l)
	}
	return g.searchLayer(q, ep, max(ef, k), 0)
}

// frozenGraph is a graph's structure at one moment, for writing a snapshot
// while inserts go on. Keys and vectors are shared (the graph only appends to
// them); neighbour lists are copied, into one array, as inserts change them
// in place.
type frozenGraph struct {
	keys   []uint64
	vecs   []qvec
	layers []uint8  // per node
	counts []uint16 // per node and layer, in order
	links  []int32  // all lists, in order
	entry  int32
	top    int
}

// freeze copies g's structure; g must not change meanwhile.
func (g *annGraph) freeze() *frozenGraph {
	n := len(g.keys)
	f := &frozenGraph{keys: g.keys[:n:n], vecs: g.vecs[:n:n], layers: make([]uint8, n), entry: g.entry, top: g.top}
	total, lists := 0, 0
	for i := range n {
		lists += int(g.levels[i]) + 1
		for l := range int(g.levels[i]) + 1 {
			total += len(g.neighbours(int32(i), l))
		}
	}
	f.counts = make([]uint16, 0, lists)
	f.links = make([]int32, 0, total)
	for i := range n {
		f.layers[i] = g.levels[i] + 1
		for l := range int(g.levels[i]) + 1 {
			nb := g.neighbours(int32(i), l)
			f.counts = append(f.counts, uint16(len(nb)))
			f.links = append(f.links, nb...)
		}
	}
	return f
}

// lists returns a copy of node n's lists, layer 0 first (for tests).
func (g *annGraph) lists(n int32) [][]int32 {
	out := make([][]int32, g.levels[n]+1)
	for l := range out {
		out[l] = slices.Clone(g.neighbours(n, l))
	}
	return out
}
