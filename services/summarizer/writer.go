package summarizer

import (
	"context"
	"fmt"
	"sync"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// reportWriter group-commits the reports of concurrent handlers: each handler hands in
// its record (without its vector) and waits; the first to take the write lock embeds
// every record queued by then in one Embed call per collection and writes them in one
// Upsert, and the others find theirs written. Every durable write costs the embedded
// store a bbolt commit and a text-index segment (fsyncs, and segment merges later) and
// Milvus a round trip, so the cost is paid once per group instead of once per report
// (a 100k-chunk profile showed the summarizer's per-report Upsert holding indexing back).
//
// A handler still returns only once its own report is durable, and a failed group
// write fails every handler of the group: each message is retried as it would have
// been alone, so none is lost. A report the store refuses as invalid fails only its
// own handler, with a refusedError: the others are written. Nothing waits for a group to fill: a group is what
// queued while the previous write ran, so a lone report is written at once.
type reportWriter struct {
	embedder llm.Embedder
	vectors  VectorStore

	queueMu sync.Mutex
	queue   []*writeReq

	writeMu sync.Mutex
	// writes and written count the Upserts and the reports they held (under writeMu).
	writes, written int
}

// writeReq is one report waiting for its write; done and err are set under writeMu by
// the handler that writes it.
type writeReq struct {
	ctx   context.Context
	spec  vectorstore.CollectionSpec
	rec   vectorstore.Record
	embed string // the text embedded for rec (Service.embedText)
	done  bool
	err   error
}

// write embeds embed (what Service.embedText says of the report), sets rec.Vector and upserts rec
// into the collection of spec, together with the reports other handlers queued meanwhile.
func (w *reportWriter) write(ctx context.Context, spec vectorstore.CollectionSpec, rec *vectorstore.Record, embed string) error {
	req := &writeReq{ctx: ctx, spec: spec, rec: *rec, embed: embed}
	w.queueMu.Lock()
	w.queue = append(w.queue, req)
	w.queueMu.Unlock()

	w.writeMu.Lock()
	defer w.writeMu.Unlock()
	if !req.done {
		w.queueMu.Lock()
		group := w.queue
		w.queue = nil
		w.queueMu.Unlock()
		w.writeGroup(ctx, group)
	}
	if req.err == nil {
		rec.Vector = req.rec.Vector
	}
	return req.err
}

// writeGroup writes a group, one collection at a time, with ctx (the writing handler's:
// it is cancelled only when the service gives up stopping, which ends every handler).
// Called with writeMu held.
func (w *reportWriter) writeGroup(ctx context.Context, group []*writeReq) {
	byColl := map[string][]*writeReq{}
	var order []string
	for _, r := range group {
		if err := r.ctx.Err(); err != nil {
			r.err, r.done = err, true
			continue
		}
		if _, ok := byColl[r.spec.Name]; !ok {
			order = append(order, r.spec.Name)
		}
		byColl[r.spec.Name] = append(byColl[r.spec.Name], r)
	}
	for _, name := range order {
		reqs := byColl[name]
		refused, err := w.writeColl(ctx, reqs)
		for _, r := range reqs {
			r.err, r.done = err, true
			if e, ok := refused[r.rec.ID]; ok && err == nil {
				r.err = &refusedError{rec: vectorstore.Refused{ID: r.rec.ID, Err: e}}
			}
		}
	}
}

// refusedError is the error of a report the store refused as invalid, written
// without it (vectorstore.UpsertValid): the handler quarantines it.
type refusedError struct{ rec vectorstore.Refused }

func (e *refusedError) Error() string {
	return "report refused by the vector store: " + e.rec.Err.Error()
}
func (e *refusedError) Unwrap() error { return e.rec.Err }

// writeColl embeds and upserts the reports of one collection, and returns the errors
// of the records the store refused as invalid, by id (the others are written).
func (w *reportWriter) writeColl(ctx context.Context, reqs []*writeReq) (map[string]error, error) {
	texts := make([]string, len(reqs))
	for i, r := range reqs {
		texts[i] = r.embed
	}
	vecs, err := w.embedder.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embedding %d reports: %w", len(reqs), err)
	}
	if len(vecs) != len(reqs) {
		return nil, fmt.Errorf("embedding %d reports: the embedder returned %d vectors", len(reqs), len(vecs))
	}
	spec := reqs[0].spec
	if err := w.vectors.EnsureCollection(ctx, spec); err != nil {
		return nil, fmt.Errorf("ensuring community collection: %w", err)
	}
	recs := make([]vectorstore.Record, len(reqs))
	for i, r := range reqs {
		r.rec.Vector = vecs[i]
		recs[i] = r.rec
	}
	refused, err := vectorstore.UpsertValid(ctx, w.vectors, spec.Name, recs)
	if err != nil {
		return nil, fmt.Errorf("writing %d reports: %w", len(recs), err)
	}
	w.writes++
	w.written += len(recs) - len(refused)
	if len(refused) == 0 {
		return nil, nil
	}
	byID := make(map[string]error, len(refused))
	for _, r := range refused {
		byID[r.ID] = r.Err
	}
	return byID, nil
}

// counts returns the Upserts made and the reports they held.
func (w *reportWriter) counts() (writes, written int) {
	w.writeMu.Lock()
	defer w.writeMu.Unlock()
	return w.writes, w.written
}
