package embedded

import (
	"container/heap"
	"context"
	"math"
	"math/rand"
	"time"

	"github.com/coder/hnsw"
	"github.com/viterin/vek/vek32"
)

// distanceName registers the graph's distance for coder/hnsw Export/Import.
const distanceName = "graphrag_unit_cosine"

// unitCosineDistance is the cosine distance of normalized vectors: cheaper
// than hnsw.CosineDistance, which recomputes both norms on every call.
func unitCosineDistance(a, b []float32) float32 { return 1 - vek32.Dot(a, b) }

func init() { hnsw.RegisterDistanceFunc(distanceName, unitCosineDistance) }

// doc is the in-memory part of a live record: enough to rank and filter.
type doc struct {
	id    string
	seq   uint64
	vec   []float32 // normalized
	attrs map[string]string
}

// normalize returns v scaled to unit length, in a new slice.
func normalize(v []float32) []float32 {
	out := make([]float32, len(v))
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// newGraph returns an empty graph with the configured parameters.
func newGraph(cfg config) *hnsw.Graph[uint64] {
	g := hnsw.NewGraph[uint64]()
	g.M = cfg.hnswM
	g.EfSearch = cfg.efSearch
	g.Distance = unitCosineDistance
	g.Rng = rand.New(rand.NewSource(time.Now().UnixNano()))
	return g
}

// scored is a ranking candidate.
type scored struct {
	d     *doc
	score float32
}

// worse reports whether a ranks below b: lower score, then higher ID.
func worse(a, b scored) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.d.id > b.d.id
}

// topK keeps the k best candidates in a min-heap (the worst on top).
type topK struct {
	k     int
	items []scored
}

func (t *topK) Len() int           { return len(t.items) }
func (t *topK) Less(i, j int) bool { return worse(t.items[i], t.items[j]) }
func (t *topK) Swap(i, j int)      { t.items[i], t.items[j] = t.items[j], t.items[i] }
func (t *topK) Push(x any)         { t.items = append(t.items, x.(scored)) }
func (t *topK) Pop() any {
	n := len(t.items) - 1
	x := t.items[n]
	t.items = t.items[:n]
	return x
}

func (t *topK) offer(s scored) {
	if len(t.items) < t.k {
		heap.Push(t, s)
		return
	}
	if worse(t.items[0], s) {
		t.items[0] = s
		heap.Fix(t, 0)
	}
}

// sorted returns the kept candidates best first.
func (t *topK) sorted() []scored {
	out := make([]scored, len(t.items))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(t).(scored)
	}
	return out
}

// ctxCheckEvery bounds how often the exact scan polls ctx.
const ctxCheckEvery = 4096

// exactSearch ranks every candidate by cosine similarity.
func exactSearch(ctx context.Context, q []float32, k int, cands []*doc) ([]scored, error) {
	t := &topK{k: k, items: make([]scored, 0, k)}
	for i, d := range cands {
		if i%ctxCheckEvery == ctxCheckEvery-1 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		t.offer(scored{d: d, score: vek32.Dot(q, d.vec)})
	}
	return t.sorted(), nil
}

// denseIndex is a collection's in-memory dense state. It is not locked: the
// collection serializes writers and excludes them from readers.
type denseIndex struct {
	cfg   config
	docs  map[string]*doc // live records by ID
	graph *hnsw.Graph[uint64]
	// nodes maps every graph key to its live doc, or nil for a dead node
	// (replaced or deleted record).
	nodes     map[uint64]*doc
	dead      int
	sinceSnap int // graph insertions since the last snapshot
	snapSeq   uint64
	maxSeq    uint64
	dim       int
}

func newDenseIndex(cfg config, dim int) *denseIndex {
	return &denseIndex{
		cfg:   cfg,
		dim:   dim,
		docs:  make(map[string]*doc),
		graph: newGraph(cfg),
		nodes: make(map[uint64]*doc),
	}
}

// put makes d the live version of its ID and adds it to the graph.
func (x *denseIndex) put(d *doc) {
	if old, ok := x.docs[d.id]; ok {
		x.kill(old)
	}
	x.docs[d.id] = d
	x.graph.Add(hnsw.MakeNode(d.seq, d.vec))
	x.nodes[d.seq] = d
	x.sinceSnap++
	x.maxSeq = max(x.maxSeq, d.seq)
}

// remove drops the live record with this ID, if any.
func (x *denseIndex) remove(id string) {
	if old, ok := x.docs[id]; ok {
		x.kill(old)
		delete(x.docs, id)
	}
}

func (x *denseIndex) kill(old *doc) {
	if _, inGraph := x.nodes[old.seq]; inGraph {
		x.nodes[old.seq] = nil
		x.dead++
	}
}

// needsCompaction reports whether dead nodes dominate the graph, making ANN
// searches over-fetch too much.
func (x *denseIndex) needsCompaction() bool {
	return x.dead > 1024 && x.dead > len(x.docs)
}

// compacted builds a fresh graph of the live records only. It reads x without
// changing it so that searches can keep using x meanwhile.
func (x *denseIndex) compacted() (*hnsw.Graph[uint64], map[uint64]*doc) {
	g := newGraph(x.cfg)
	nodes := make(map[uint64]*doc, len(x.docs))
	for _, d := range x.docs {
		g.Add(hnsw.MakeNode(d.seq, d.vec))
		nodes[d.seq] = d
	}
	return g, nodes
}

// search returns up to k live docs matching attrs and ids, best first.
func (x *denseIndex) search(ctx context.Context, q []float32, k int, ids []string, attrs map[string]string) ([]scored, error) {
	match := func(d *doc) bool {
		for key, v := range attrs {
			if got, ok := d.attrs[key]; !ok || got != v {
				return false
			}
		}
		return true
	}
	if len(ids) > 0 {
		// An ID filter names the candidates: rank them exactly.
		seen := make(map[string]struct{}, len(ids))
		cands := make([]*doc, 0, len(ids))
		for _, id := range ids {
			if _, dup := seen[id]; dup {
				continue
			}
			seen[id] = struct{}{}
			if d, ok := x.docs[id]; ok && match(d) {
				cands = append(cands, d)
			}
		}
		return exactSearch(ctx, q, k, cands)
	}
	live := len(x.docs)
	if live == 0 {
		return nil, nil
	}
	if live <= x.cfg.exactThreshold || k >= live {
		return exactSearch(ctx, q, k, x.filtered(match, len(attrs) > 0))
	}
	matching := live
	if len(attrs) > 0 {
		cands := x.filtered(match, true)
		if len(cands) <= x.cfg.exactThreshold || k >= len(cands) {
			return exactSearch(ctx, q, k, cands)
		}
		matching = len(cands)
	}
	// Expected over-fetch: the share of graph nodes that are live and match.
	ratio := float64(x.graph.Len()) / float64(matching)
	fetch := int(math.Ceil(float64(max(k, x.cfg.efSearch)) * ratio * 1.2))
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if fetch >= x.graph.Len()/2 {
			// The graph would be walked nearly whole: scan instead.
			return exactSearch(ctx, q, k, x.filtered(match, len(attrs) > 0))
		}
		t := &topK{k: k, items: make([]scored, 0, k)}
		for _, n := range x.graph.Search(q, fetch) {
			d := x.nodes[n.Key]
			if d == nil || !match(d) {
				continue
			}
			t.offer(scored{d: d, score: vek32.Dot(q, d.vec)})
		}
		if t.Len() >= k {
			return t.sorted(), nil
		}
		fetch *= 4
	}
}

// filtered returns the live docs that match; all of them if !filter.
func (x *denseIndex) filtered(match func(*doc) bool, filter bool) []*doc {
	out := make([]*doc, 0, len(x.docs))
	for _, d := range x.docs {
		if !filter || match(d) {
			out = append(out, d)
		}
	}
	return out
}
