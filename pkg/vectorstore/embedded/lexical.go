package embedded

import (
	"cmp"
	"container/heap"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"slices"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"
)

// Bleve field names and internal keys.
const (
	fieldText    = "text"
	fieldAttrs   = "attrs"
	internalSeq  = "graphrag.seq"
	internalInc  = "graphrag.incarnation"
	textPageSize = 1000 // documents per batch when rebuilding
)

// lexicalMapping indexes the text with the English analyzer (frequencies and
// norms, which BM25 needs) and the attributes as exact keywords (filters).
func lexicalMapping() *mapping.IndexMappingImpl {
	im := bleve.NewIndexMapping()
	im.DefaultAnalyzer = keyword.Name
	im.StoreDynamic = false
	im.DocValuesDynamic = false

	text := bleve.NewTextFieldMapping()
	text.Analyzer = en.AnalyzerName
	text.Store = false
	text.DocValues = false
	text.IncludeInAll = false

	attrs := bleve.NewDocumentMapping() // dynamic: every key is a keyword field
	dm := bleve.NewDocumentMapping()
	dm.AddFieldMappingsAt(fieldText, text)
	dm.AddSubDocumentMapping(fieldAttrs, attrs)
	im.DefaultMapping = dm
	return im
}

// lexDoc is the document bleve indexes for one record.
func lexDoc(text string, attrs map[string]string) map[string]any {
	a := make(map[string]any, len(attrs))
	for k, v := range attrs {
		a[k] = v
	}
	return map[string]any{fieldText: text, fieldAttrs: a}
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func readU64(idx bleve.Index, key string) (uint64, bool, error) {
	b, err := idx.GetInternal([]byte(key))
	if err != nil {
		return 0, false, fmt.Errorf("reading bleve internal %s: %w", key, err)
	}
	if len(b) != 8 {
		return 0, false, nil
	}
	return binary.BigEndian.Uint64(b), true, nil
}

// openLexical opens the collection's bleve index. fresh is true when it was
// (re)created empty: the caller then indexes every record. An index of another
// incarnation of the collection, or one that fails to open, is replaced.
func openLexical(path string, incarnation uint64) (idx bleve.Index, seq uint64, fresh bool, err error) {
	idx, err = bleve.OpenUsing(path, lexicalRuntimeConfig())
	if err == nil {
		inc, ok, ierr := readU64(idx, internalInc)
		if ierr == nil && ok && inc == incarnation {
			seq, _, ierr = readU64(idx, internalSeq)
			if ierr == nil {
				return idx, seq, false, nil
			}
		}
		_ = idx.Close()
	}
	// No index yet, one of another incarnation, or a damaged one (a derived index is
	// rebuilt from bbolt, never trusted): start afresh.
	if err := os.RemoveAll(path); err != nil {
		return nil, 0, false, fmt.Errorf("removing stale text index: %w", err)
	}
	idx, err = bleve.NewUsing(path, lexicalMapping(), scorch.Name, scorch.Name, lexicalRuntimeConfig())
	if err != nil {
		return nil, 0, false, fmt.Errorf("creating text index: %w", err)
	}
	b := idx.NewBatch()
	b.SetInternal([]byte(internalInc), u64(incarnation))
	if err := idx.Batch(b); err != nil {
		_ = idx.Close()
		return nil, 0, false, fmt.Errorf("tagging text index: %w", err)
	}
	return idx, 0, true, nil
}

// lexicalMergePlan is scorch's segment merge policy for the text indexes. Every
// Upsert is one durable batch, so an index grows by thousands of one-document segments;
// scorch's default plan treats every segment under FloorSegmentSize (2,000 documents)
// as the same size, so until an index passes that size it merges its largest segment
// with the newest small ones again and again: quadratic. Indexing 2,000 chunks spent
// 62 % of the whole pipeline's CPU in those merges (docs/benchmarks.md). A small floor
// sizes tiers by their real size, so each document is rewritten about log_10(n) times.
// nil keeps scorch's default (the benchmark compares the two).
var lexicalMergePlan = map[string]any{
	"FloorSegmentSize": 10,
}

// lexicalRuntimeConfig is the scorch configuration the text indexes open with.
func lexicalRuntimeConfig() map[string]any {
	if lexicalMergePlan == nil {
		return nil
	}
	return map[string]any{"scorchMergePlanOptions": lexicalMergePlan}
}

// lexOp is one change to apply to the text index.
type lexOp struct {
	id    string
	del   bool
	text  string
	attrs map[string]string
}

// applyLexical applies ops in one durable batch (scorch waits for the
// segment to be persisted) together with the new watermark.
func applyLexical(idx bleve.Index, ops []lexOp, seq uint64) error {
	b := idx.NewBatch()
	for _, op := range ops {
		if op.del {
			b.Delete(op.id)
			continue
		}
		if err := b.Index(op.id, lexDoc(op.text, op.attrs)); err != nil {
			return fmt.Errorf("indexing text of %q: %w", op.id, err)
		}
	}
	b.SetInternal([]byte(internalSeq), u64(seq))
	if err := idx.Batch(b); err != nil {
		return fmt.Errorf("writing text index batch: %w", err)
	}
	return nil
}

// lexHit is a BM25 result before the record is loaded.
type lexHit struct {
	id    string
	score float64
}

// BM25 parameters (Robertson/Lucene defaults, as Milvus uses).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// lexStats are the corpus statistics BM25 needs that bleve does not keep:
// the number of documents with text and their total analyzed length.
type lexStats struct {
	lens  map[string]uint64 // analyzed length per ID, for updates
	docs  int
	total uint64
}

func newLexStats() *lexStats { return &lexStats{lens: make(map[string]uint64)} }

func (st *lexStats) set(id string, n uint64) {
	st.remove(id)
	if n > 0 {
		st.lens[id] = n
		st.docs++
		st.total += n
	}
}

func (st *lexStats) remove(id string) {
	if n, ok := st.lens[id]; ok {
		delete(st.lens, id)
		st.docs--
		st.total -= n
	}
}

// analyzedLen counts the tokens bleve indexes for text (its field length).
func analyzedLen(idx bleve.Index, text string) uint64 {
	if text == "" {
		return 0
	}
	return uint64(len(idx.Mapping().AnalyzerNamed(en.AnalyzerName).Analyze([]byte(text))))
}

// searchBM25 ranks documents with Okapi BM25 computed from bleve's postings.
//
// bleve's own "bm25" scoring model (v2.6.3) is not used: it feeds sqrt(tf)
// into the saturation term and takes the average field length as
// |vocabulary| / documents, which for real corpora is far below the true
// average, so length normalization dominates and term-frequency saturation
// all but disappears (score(tf=50)/score(tf=5) = 2.9 on equal-length
// documents, against 1.2 with true BM25). bleve remains the inverted index,
// the analyzer and the durable store; only the ranking formula is ours.
func searchBM25(ctx context.Context, idx bleve.Index, st *lexStats, q string, k int, ids []string, attrs map[string]string) ([]lexHit, error) {
	seen := map[string]bool{}
	var terms []string
	for _, tok := range idx.Mapping().AnalyzerNamed(en.AnalyzerName).Analyze([]byte(q)) {
		if t := string(tok.Term); !seen[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	if len(terms) == 0 || st.docs == 0 {
		return nil, nil
	}
	adv, err := idx.Advanced()
	if err != nil {
		return nil, fmt.Errorf("opening text index: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, fmt.Errorf("opening text index reader: %w", err)
	}
	defer r.Close()

	allow, err := allowedDocs(ctx, r, ids, attrs)
	if err != nil {
		return nil, err
	}
	if allow != nil && len(allow) == 0 {
		return nil, nil
	}

	n := float64(st.docs)
	avgdl := float64(st.total) / n
	acc := accPool.Get().(*accumulator)
	defer acc.release()
	for _, term := range terms {
		if err := scoreTerm(ctx, r, term, n, avgdl, allow, acc); err != nil {
			return nil, err
		}
	}
	return topLexical(r, acc, k)
}

// accumulator sums scores per internal document number in a slice, much
// faster than a map for the long postings lists of common terms.
type accumulator struct {
	score   []float64
	touched []uint64
}

var accPool = sync.Pool{New: func() any { return &accumulator{} }}

func (a *accumulator) add(doc uint64, s float64) {
	if doc >= uint64(len(a.score)) {
		a.score = append(a.score, make([]float64, int(doc)+1-len(a.score)+len(a.score)/2)...)
	}
	if a.score[doc] == 0 { // BM25 contributions are positive
		a.touched = append(a.touched, doc)
	}
	a.score[doc] += s
}

func (a *accumulator) release() {
	for _, d := range a.touched {
		a.score[d] = 0
	}
	a.touched = a.touched[:0]
	accPool.Put(a)
}

// scoreTerm adds one query term's BM25 contribution to every document in
// its postings list.
func scoreTerm(ctx context.Context, r index.IndexReader, term string, n, avgdl float64, allow map[uint64]struct{}, acc *accumulator) error {
	tfr, err := r.TermFieldReader(ctx, []byte(term), fieldText, true, true, false)
	if err != nil {
		return fmt.Errorf("reading postings of %q: %w", term, err)
	}
	defer tfr.Close()
	df := float64(tfr.Count())
	if df == 0 {
		return nil
	}
	idf := math.Log(1 + (n-df+0.5)/(df+0.5))
	var tfd index.TermFieldDoc
	for i := 0; ; i++ {
		if i%ctxCheckEvery == ctxCheckEvery-1 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		d, err := tfr.Next(tfd.Reset())
		if err != nil {
			return fmt.Errorf("reading postings of %q: %w", term, err)
		}
		if d == nil {
			return nil
		}
		doc := d.ID.Value()
		if allow != nil {
			if _, ok := allow[doc]; !ok {
				continue
			}
		}
		tf := float64(d.Freq)
		dl := 1.0
		if d.Norm > 0 {
			// bleve stores norm = 1/sqrt(field length).
			dl = math.Round(1 / (d.Norm * d.Norm))
		}
		acc.add(doc, idf*tf*(bm25K1+1)/(tf+bm25K1*(1-bm25B+bm25B*dl/avgdl)))
	}
}

// allowedDocs resolves a filter to internal document numbers; nil means no
// filter.
func allowedDocs(ctx context.Context, r index.IndexReader, ids []string, attrs map[string]string) (map[uint64]struct{}, error) {
	var allow map[uint64]struct{}
	if len(ids) > 0 {
		allow = make(map[uint64]struct{}, len(ids))
		for _, id := range ids {
			iid, err := r.InternalID(id)
			if err != nil {
				return nil, fmt.Errorf("resolving id %q: %w", id, err)
			}
			if len(iid) == 8 {
				allow[iid.Value()] = struct{}{}
			}
		}
	}
	for key, v := range attrs {
		tfr, err := r.TermFieldReader(ctx, []byte(v), fieldAttrs+"."+key, false, false, false)
		if err != nil {
			return nil, fmt.Errorf("reading attribute %q: %w", key, err)
		}
		match := make(map[uint64]struct{})
		var tfd index.TermFieldDoc
		for {
			d, err := tfr.Next(tfd.Reset())
			if err != nil {
				_ = tfr.Close()
				return nil, fmt.Errorf("reading attribute %q: %w", key, err)
			}
			if d == nil {
				break
			}
			doc := d.ID.Value()
			if _, ok := allow[doc]; allow == nil || ok {
				match[doc] = struct{}{}
			}
		}
		_ = tfr.Close()
		allow = match
	}
	return allow, nil
}

// topLexical keeps the k best scores; external IDs are resolved only for the
// kept documents and for those tied with the last one, so that ties are
// broken by ID like every other driver.
func topLexical(r index.IndexReader, acc *accumulator, k int) ([]lexHit, error) {
	if len(acc.touched) == 0 {
		return nil, nil
	}
	// The k-th best score, with a min-heap of k scores.
	h := make(floatHeap, 0, k)
	for _, d := range acc.touched {
		s := acc.score[d]
		if len(h) < k {
			heap.Push(&h, s)
		} else if s > h[0] {
			h[0] = s
			heap.Fix(&h, 0)
		}
	}
	th := h[0]
	var out []lexHit
	for _, d := range acc.touched {
		s := acc.score[d]
		if s < th {
			continue
		}
		id, err := r.ExternalID(index.NewIndexInternalID(nil, d))
		if err != nil {
			return nil, fmt.Errorf("resolving document %d: %w", d, err)
		}
		out = append(out, lexHit{id: id, score: s})
	}
	slices.SortFunc(out, func(a, b lexHit) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		return cmp.Compare(a.id, b.id)
	})
	return out[:min(k, len(out))], nil
}

type floatHeap []float64

func (h floatHeap) Len() int           { return len(h) }
func (h floatHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h floatHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *floatHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *floatHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
