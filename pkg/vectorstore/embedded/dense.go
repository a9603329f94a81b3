package embedded

import (
	"container/heap"
	"context"
	"math"
	"runtime"
	"sync"

	"github.com/viterin/vek/vek32"
)

// doc is the in-memory part of a live record: enough to rank and filter.
type doc struct {
	id    string
	seq   uint64
	vec   qvec // normalized and quantized; the exact vector is in bbolt
	attrs attrSet
	pos   int // index in denseIndex.all
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

// cosine is the cosine similarity of the unit vector q and v.
func cosine(q, v []float32) float32 {
	n := vek32.Dot(v, v)
	if n == 0 {
		return 0
	}
	return vek32.Dot(q, v) / float32(math.Sqrt(float64(n)))
}

// newGraph returns an empty graph with the configured parameters.
func newGraph(cfg config) *annGraph { return newANNGraph(cfg.hnswM, cfg.efConstruction) }

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

// efPerResult is the least HNSW candidate list per result asked for.
const efPerResult = 6

// filteredExactMax is the number of records matching an attribute filter up
// to which they are ranked exactly, whatever the exact-scan threshold: the
// filter has already read every record, so exact ranking costs one dot
// product per match, and filtered results stay exact where they were when the
// threshold was 200k.
const filteredExactMax = 200_000

// ctxCheckEvery bounds how often scans poll ctx.
const ctxCheckEvery = 4096

// parallelScanMin is the candidate count from which an exact scan is split
// across GOMAXPROCS goroutines (below it, goroutine start-up outweighs the
// gain).
const parallelScanMin = 16384

// rerankDepth is how many of the best candidates by quantized score are
// re-ranked by their exact vectors before refine checks whether any other
// candidate could still enter the top k.
func rerankDepth(k int) int { return 2 * k }

// query is a search vector: normalized, and quantized for the in-memory
// ranking.
type query struct {
	f []float32
	q qvec
}

func newQuery(v []float32) query {
	f := normalize(v)
	return query{f: f, q: quantizeUnit(f)}
}

// exactScorer returns the exact cosine of the query and each doc's stored
// vector, NaN for a doc whose record is gone (deleted since).
type exactScorer func(ds []*doc) ([]float32, error)

// exactSearch returns the exact top k of cands: it ranks them all by their
// quantized vectors, re-ranks the best rerankDepth(k) exactly, then every
// other candidate whose score bound still reaches the k-th exact score.
func exactSearch(ctx context.Context, q query, k int, cands []*doc, ex exactScorer) ([]scored, error) {
	approx := make([]float32, len(cands))
	top, err := approxTop(ctx, q.q, rerankDepth(k), cands, approx)
	if err != nil {
		return nil, err
	}
	return refine(q, k, cands, approx, top, ex)
}

// approxTop ranks cands by quantized score, writing each score to approx,
// and returns the best m, best first.
func approxTop(ctx context.Context, q qvec, m int, cands []*doc, approx []float32) ([]scored, error) {
	workers := min(runtime.GOMAXPROCS(0), len(cands)/parallelScanMin)
	if workers <= 1 {
		t, err := scan(ctx, q, m, cands, approx)
		if err != nil {
			return nil, err
		}
		return t.sorted(), nil
	}
	parts := make([]*topK, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	step := (len(cands) + workers - 1) / workers
	for w := range workers {
		wg.Go(func() {
			lo, hi := w*step, min((w+1)*step, len(cands))
			parts[w], errs[w] = scan(ctx, q, m, cands[lo:hi], approx[lo:hi])
		})
	}
	wg.Wait()
	t := &topK{k: m, items: make([]scored, 0, m)}
	for w, p := range parts {
		if errs[w] != nil {
			return nil, errs[w]
		}
		for _, s := range p.items {
			t.offer(s)
		}
	}
	return t.sorted(), nil
}

func scan(ctx context.Context, q qvec, k int, cands []*doc, approx []float32) (*topK, error) {
	t := &topK{k: k, items: make([]scored, 0, k)}
	for i, d := range cands {
		if i%ctxCheckEvery == ctxCheckEvery-1 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		approx[i] = q.dot(d.vec)
		t.offer(scored{d: d, score: approx[i]})
	}
	return t, nil
}

// refine returns the exact top k of cands, whose quantized scores are
// approx and whose best by them are top. It re-ranks top exactly; a
// candidate outside top is re-ranked too if its quantized score plus its
// error bound reaches the k-th exact score, so the result is the exact top k
// of cands, not an approximation of it.
func refine(q query, k int, cands []*doc, approx []float32, top []scored, ex exactScorer) ([]scored, error) {
	res := &topK{k: k, items: make([]scored, 0, k)}
	if err := rescore(res, top, ex); err != nil {
		return nil, err
	}
	if len(top) >= len(cands) {
		return res.sorted(), nil
	}
	floor := float32(math.Inf(-1))
	if res.Len() == k {
		floor = res.items[0].score
	}
	done := make(map[*doc]struct{}, len(top))
	for _, s := range top {
		done[s.d] = struct{}{}
	}
	var more []scored
	for i, d := range cands {
		if approx[i]+q.q.bound(d.vec) < floor {
			continue
		}
		if _, ok := done[d]; !ok {
			more = append(more, scored{d: d})
		}
	}
	if err := rescore(res, more, ex); err != nil {
		return nil, err
	}
	return res.sorted(), nil
}

// rescore offers cands to res with their exact scores.
func rescore(res *topK, cands []scored, ex exactScorer) error {
	if len(cands) == 0 {
		return nil
	}
	ds := make([]*doc, len(cands))
	for i, c := range cands {
		ds[i] = c.d
	}
	exact, err := ex(ds)
	if err != nil {
		return err
	}
	for i, d := range ds {
		if !math.IsNaN(float64(exact[i])) {
			res.offer(scored{d: d, score: exact[i]})
		}
	}
	return nil
}

// denseIndex is a collection's in-memory dense state. It is not locked: the
// collection serializes writers and excludes them from readers.
//
// The HNSW graph exists only once the collection outgrows the exact-scan
// threshold, so that small collections do not pay for graph insertions.
type denseIndex struct {
	cfg  config
	dim  int
	docs map[string]*doc // live records by ID
	all  []*doc          // the same, for scans; doc.pos indexes it
	// graph is nil while exact scans suffice.
	graph *annGraph
	// nodes maps graph keys of live docs to them; graph keys missing here are
	// dead nodes (replaced or deleted records).
	nodes     map[uint64]*doc
	dead      int
	sinceSnap int // graph insertions since the last snapshot
	maxSeq    uint64
	keys      attrInterner // attribute keys, shared by the docs; writers only
	// builds counts whole-graph builds and replayed the records a loaded
	// snapshot lacked: what an open cost (tests and benchmarks read them).
	builds, replayed int
}

func newDenseIndex(cfg config, dim int) *denseIndex {
	return &denseIndex{
		cfg:   cfg,
		dim:   dim,
		docs:  make(map[string]*doc),
		nodes: make(map[uint64]*doc),
		keys:  make(attrInterner),
	}
}

// put makes each of ds (distinct IDs) the live version of its ID and adds them to
// the graph.
func (x *denseIndex) put(ds []*doc) {
	var keys []uint64
	var vecs []qvec
	for _, d := range ds {
		x.remove(d.id)
		d.pos = len(x.all)
		x.all = append(x.all, d)
		x.docs[d.id] = d
		x.maxSeq = max(x.maxSeq, d.seq)
		if x.graph != nil {
			keys, vecs = append(keys, d.seq), append(vecs, d.vec)
			x.nodes[d.seq] = d
			x.sinceSnap++
		}
	}
	if x.graph != nil {
		x.graph.insertBatch(keys, vecs)
	}
}

// remove drops the live record with this ID, if any; its graph node, if
// any, becomes dead.
func (x *denseIndex) remove(id string) {
	old, ok := x.docs[id]
	if !ok {
		return
	}
	delete(x.docs, id)
	last := x.all[len(x.all)-1]
	x.all[old.pos] = last
	last.pos = old.pos
	x.all[len(x.all)-1] = nil
	x.all = x.all[:len(x.all)-1]
	if _, inGraph := x.nodes[old.seq]; inGraph {
		delete(x.nodes, old.seq)
		x.dead++
	}
}

// graphWanted reports whether the graph must be (re)built: the collection
// outgrew exact scans, or dead nodes dominate the graph.
func (x *denseIndex) graphWanted() bool {
	if x.graph == nil {
		return len(x.docs) > x.cfg.exactThreshold
	}
	return x.dead > 1024 && x.dead > len(x.docs)
}

// buildGraph builds a graph of the live records only. It changes nothing in
// x that searches read, so that they can keep using x meanwhile.
func (x *denseIndex) buildGraph() (*annGraph, map[uint64]*doc) {
	x.builds++
	g := newGraph(x.cfg)
	nodes := make(map[uint64]*doc, len(x.docs))
	keys := make([]uint64, len(x.all))
	vecs := make([]qvec, len(x.all))
	for i, d := range x.all {
		keys[i], vecs[i] = d.seq, d.vec
		nodes[d.seq] = d
	}
	g.insertBatch(keys, vecs)
	return g, nodes
}

// stored reads what memory does not hold from the record store: exact
// vectors, and long attribute values.
type stored struct {
	exact exactScorer
	attr  func(id, key, want string) (bool, error)
}

// search returns up to k live docs matching attrs and ids, best first by
// their exact scores.
func (x *denseIndex) search(ctx context.Context, q query, k int, ids []string, attrs map[string]string, st stored) ([]scored, error) {
	f := &attrFilter{want: attrs, check: st.attr}
	match := f.match
	ex := st.exact
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
		if f.err != nil {
			return nil, f.err
		}
		return exactSearch(ctx, q, k, cands, ex)
	}
	cands := x.all
	if len(attrs) > 0 {
		cands = make([]*doc, 0, len(x.all)/4)
		for _, d := range x.all {
			if match(d) {
				cands = append(cands, d)
			}
		}
		if f.err != nil {
			return nil, f.err
		}
	}
	if x.graph == nil || len(cands) <= x.cfg.exactThreshold || k*4 >= len(cands) ||
		len(attrs) > 0 && len(cands) <= filteredExactMax {
		return exactSearch(ctx, q, k, cands, ex)
	}
	// The candidate list grows with k: recall@k at a fixed ef falls as k grows
	// (BenchmarkANNRecall, docs/adr/0019-hnsw-recall.md).
	ef := max(x.cfg.efSearch, efPerResult*k)
	// Over-fetch by the share of graph nodes that are live and match.
	ratio := float64(x.graph.len()) / float64(len(cands))
	fetch := int(math.Ceil(float64(ef) * ratio * 1.2))
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if fetch >= x.graph.len()/2 {
			// The graph would be walked nearly whole: scan instead.
			return exactSearch(ctx, q, k, cands, ex)
		}
		found := x.graph.search(q.q, fetch, ef)
		hits := make([]*doc, 0, len(found))
		approx := make([]float32, 0, len(found))
		for _, n := range found { // nearest first
			d := x.nodes[x.graph.keys[n.id]]
			if d == nil || !match(d) {
				continue
			}
			hits = append(hits, d)
			approx = append(approx, 1-n.d)
		}
		if f.err != nil {
			return nil, f.err
		}
		if len(hits) >= k {
			top := make([]scored, min(len(hits), rerankDepth(k)))
			for i := range top {
				top[i] = scored{d: hits[i], score: approx[i]}
			}
			return refine(q, k, hits, approx, top, ex)
		}
		fetch *= 4
	}
}
