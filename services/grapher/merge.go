package grapher

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/normalize"
	"github.com/graphrag/graphrag/pkg/pipeline"
)

func (s *Service) handleExtraction(ctx context.Context, corpus string, m *bus.Message) error {
	if events.SchemaOf(m.Data) == events.SchemaCuration {
		return s.handleCuration(ctx, corpus, m)
	}
	var x events.Extraction
	if err := events.Decode(m.Data, &x); err != nil {
		return bus.Permanent(fmt.Errorf("decoding extraction: %w", err))
	}
	if x.Corpus != corpus {
		return bus.Permanent(&events.FieldError{Field: "corpus", Problem: fmt.Sprintf("%q does not match subject corpus %q", x.Corpus, corpus)})
	}
	op := mergeOp{docID: x.DocumentID, version: x.DocumentVersion, remove: x.Method == events.MethodRemoved}
	if op.remove {
		op.ce = graphstore.ChunkExtraction{ChunkID: x.ChunkID, DocumentID: x.DocumentID}
	} else {
		op.ce = ToChunkExtraction(&x)
	}
	if err := s.merger.apply(ctx, corpus, op); err != nil {
		return fmt.Errorf("merging chunk %s: %w", x.ChunkID, err)
	}
	return s.markDirty(ctx, corpus)
}

// handleCuration applies a corpus's curation log as it now is (the event names the
// entry appended; the log is the record, so a replayed event changes nothing).
func (s *Service) handleCuration(ctx context.Context, corpus string, m *bus.Message) error {
	var c events.Curation
	if err := events.Decode(m.Data, &c); err != nil {
		return bus.Permanent(fmt.Errorf("decoding curation: %w", err))
	}
	if c.Corpus != corpus {
		return bus.Permanent(&events.FieldError{Field: "corpus", Problem: fmt.Sprintf("%q does not match subject corpus %q", c.Corpus, corpus)})
	}
	if err := s.merger.apply(ctx, corpus, mergeOp{curate: true}); err != nil {
		return fmt.Errorf("applying curation %s: %w", c.OpID, err)
	}
	return s.markDirty(ctx, corpus)
}

// ToChunkExtraction normalizes an extraction event into what the graph store merges.
// Names that normalize to nothing are dropped, and so are relationships whose ends do.
func ToChunkExtraction(x *events.Extraction) graphstore.ChunkExtraction {
	ce := graphstore.ChunkExtraction{ChunkID: x.ChunkID, DocumentID: x.DocumentID}
	for _, e := range x.Entities {
		k := normalize.Name(e.Name)
		if k == "" {
			continue
		}
		ce.Entities = append(ce.Entities, graphstore.EntityMention{Key: k, Name: e.Name, Type: e.Type, Description: e.Description})
	}
	for _, r := range x.Relationships {
		a, b := normalize.Name(r.Source), normalize.Name(r.Target)
		if a == "" || b == "" || a == b {
			continue
		}
		ce.Relations = append(ce.Relations, graphstore.RelationMention{SourceKey: a, TargetKey: b, Type: r.Type,
			Description: r.Description, Strength: r.Strength})
	}
	return ce
}

// merger group-commits merges and removals: concurrent handlers hand in one chunk each
// and wait; one goroutine applies up to size chunks of a corpus in one store call each
// for merges and removals. A store whose commit costs an fsync (the embedded one) or a
// round trip (Neo4j) gets far more throughput.
//
// It is also where the versions of a document meet the graph (ADR 0022): the goroutine
// merges an extraction only if its document version is still current, and it is the
// only writer of the graph, so a removal (published by the chunker after the version
// stopped being current) is applied after any merge of that version that saw it
// current. An extraction of a superseded version is turned into a removal.
type merger struct {
	store    GraphStore
	cur      *curations
	size     int
	wait     time.Duration
	versions *versionCache

	in   chan mergeReq
	quit chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

// mergeOp is one chunk's change: merge its extraction, or remove its contribution.
type mergeOp struct {
	ce             graphstore.ChunkExtraction
	docID, version string
	remove         bool
	// curate applies the corpus's curation log (ce is empty).
	curate bool
}

type mergeReq struct {
	ctx    context.Context
	corpus string
	op     mergeOp
	done   chan error
}

func newMerger(store GraphStore, versions *versionCache, size int, wait time.Duration) *merger {
	return &merger{store: store, cur: newCurations(store), versions: versions, size: size, wait: wait, in: make(chan mergeReq), quit: make(chan struct{})}
}

func (m *merger) start() {
	m.wg.Add(1)
	go m.loop()
}

// stop lets the loop commit what it holds and exit. Call it after the consumers stopped.
func (m *merger) stop() {
	m.once.Do(func() { close(m.quit) })
	m.wg.Wait()
}

func (m *merger) apply(ctx context.Context, corpus string, op mergeOp) error {
	r := mergeReq{ctx: ctx, corpus: corpus, op: op, done: make(chan error, 1)}
	select {
	case m.in <- r:
	case <-m.quit:
		return fmt.Errorf("grapher is stopping")
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
		// The batch may still commit; the message will be redelivered and merging is
		// idempotent, so nothing is lost or doubled.
		return ctx.Err()
	}
}

func (m *merger) loop() {
	defer m.wg.Done()
	for {
		var first mergeReq
		select {
		case first = <-m.in:
		case <-m.quit:
			return
		}
		batch := []mergeReq{first}
		timer := time.NewTimer(m.wait)
	collect:
		for len(batch) < m.size {
			select {
			case r := <-m.in:
				batch = append(batch, r)
			case <-timer.C:
				break collect
			}
		}
		timer.Stop()
		m.commit(batch)
	}
}

func (m *merger) commit(batch []mergeReq) {
	byCorpus := map[string][]mergeReq{}
	for _, r := range batch {
		byCorpus[r.corpus] = append(byCorpus[r.corpus], r)
	}
	for corpus, reqs := range byCorpus {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(reqs[0].ctx), time.Minute)
		err := m.commitCorpus(ctx, corpus, reqs)
		cancel()
		for _, r := range reqs {
			r.done <- err
		}
	}
}

// commitCorpus applies one corpus's share of a batch: the last change of a chunk in the
// batch wins, as it would serially.
func (m *merger) commitCorpus(ctx context.Context, corpus string, reqs []mergeReq) error {
	last := map[string]mergeOp{}
	var order []string
	curate := false
	for _, r := range reqs {
		if r.op.curate {
			curate = true
			continue
		}
		id := r.op.ce.ChunkID
		if _, ok := last[id]; !ok {
			order = append(order, id)
		}
		last[id] = r.op
		if r.op.remove {
			// The chunker removes a version's chunks only once the version is no longer
			// current: what we knew of the document is out of date.
			m.versions.forget(corpus, r.op.docID)
		}
	}
	var merges []graphstore.ChunkExtraction
	var removals []string
	for _, id := range order {
		op := last[id]
		if !op.remove {
			current, err := m.versions.current(ctx, corpus, op.docID, op.version)
			if err != nil {
				return err
			}
			op.remove = !current
		}
		if op.remove {
			removals = append(removals, id)
		} else {
			merges = append(merges, op.ce)
		}
	}
	if len(merges)+len(removals) > 0 {
		// Curated first (curation.go): with no curation, a merge and a removal.
		start := time.Now()
		if err := m.cur.commit(ctx, corpus, merges, removals); err != nil {
			return err
		}
		if len(merges) > 0 {
			recordMerge(ctx, len(merges), time.Since(start))
		}
	}
	if curate {
		return m.cur.reconcile(ctx, corpus)
	}
	return nil
}

// versionCache remembers the current version of the documents the merger has seen,
// so that most extractions are checked without a read of the document record. The
// merger's goroutine uses it, and a sharded grapher taking a shard forgets the shard's
// corpora (forgetCorpora): another grapher may have seen newer versions meanwhile. An
// entry is trusted only to accept an extraction of the version it names; anything else
// reads the record again, and a removal of one of the document's chunks drops the entry
// (the version it names is then superseded).
type versionCache struct {
	kv  bus.KV
	max int
	mu  sync.Mutex
	m   map[string]string
}

func newVersionCache(kv bus.KV, maxEntries int) *versionCache {
	return &versionCache{kv: kv, max: maxEntries, m: map[string]string{}}
}

func (c *versionCache) key(corpus, docID string) string { return corpus + "\x00" + docID }

func (c *versionCache) forget(corpus, docID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, c.key(corpus, docID))
}

// forgetCorpora drops the entries of the corpora drop reports.
func (c *versionCache) forgetCorpora(drop func(corpus string) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.m {
		if corpus, _, _ := strings.Cut(k, "\x00"); drop(corpus) {
			delete(c.m, k)
		}
	}
}

func (c *versionCache) current(ctx context.Context, corpus, docID, version string) (bool, error) {
	if version == "" {
		return true, nil // an extraction from before versions existed
	}
	k := c.key(corpus, docID)
	c.mu.Lock()
	hit := c.m[k] == version
	c.mu.Unlock()
	if hit {
		return true, nil
	}
	rec, rev, err := pipeline.LoadDocument(ctx, c.kv, corpus, docID)
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if rev == 0 || rec.Deleted {
		delete(c.m, k)
		return false, nil
	}
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[k] = rec.Version()
	return rec.Version() == version, nil
}
