package grapher

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/curation"
	"github.com/graphrag/graphrag/pkg/graphstore"
)

// The grapher applies a corpus's curation log (package curation, ADR 0069) as a
// function of each chunk's extraction: every extraction merged is curated first, and
// a change of the log re-merges the chunks it changes. So the graph stays the curated
// graph of the current extractions whatever is published, re-published or deleted.
//
// Invariant: a chunk's stored contribution is its extraction as extracted, unless the
// curation changed it; then the extraction as extracted is kept in the state bucket
// (curation.PutOriginal) before the curated one is merged, and forgotten only after
// the extraction as extracted is merged back. A crash anywhere leaves the original of
// every curated chunk readable, so applying the log again gives the same graph.

// curations holds the curation of the corpora the merger has seen. The merger's
// goroutine changes them; detection reads them to compute the operations' status.
type curations struct {
	kv    bus.KV
	store GraphStore

	mu sync.Mutex
	m  map[string]*corpusCuration
}

type corpusCuration struct {
	mu sync.Mutex
	// state is what the graph has applied: the first applied entries of the log, but
	// the inactive operations.
	state    *curation.State
	applied  int
	log      []curation.Entry // the first applied entries
	inactive map[string]bool
	// orig holds the extractions, as extracted, of the chunks the curation changed.
	orig map[string]graphstore.ChunkExtraction
	// stale is set when the graph changed since the status was last computed.
	stale bool
}

func newCurations(store GraphStore) *curations {
	return &curations{store: store, m: map[string]*corpusCuration{}}
}

// of returns a corpus's curation, loading it on first use.
func (c *curations) of(ctx context.Context, corpus string) (*corpusCuration, error) {
	c.mu.Lock()
	cc := c.m[corpus]
	c.mu.Unlock()
	if cc != nil {
		return cc, nil
	}
	if c.kv == nil {
		// A merger without the state bucket (tests of the merger alone): no curation.
		return &corpusCuration{orig: map[string]graphstore.ChunkExtraction{}}, nil
	}
	log, _, err := curation.Load(ctx, c.kv, corpus)
	if err != nil {
		return nil, err
	}
	applied, err := curation.Applied(ctx, c.kv, corpus)
	if err != nil {
		return nil, err
	}
	applied = min(applied, len(log))
	status, err := curation.LoadStatus(ctx, c.kv, corpus)
	if err != nil {
		return nil, err
	}
	inactive := curation.Inactive(status)
	cc = &corpusCuration{state: curation.Fold(log[:applied], inactive), applied: applied, log: log[:applied], inactive: inactive, stale: true}
	if len(log) > 0 {
		if cc.orig, err = curation.Originals(ctx, c.kv, corpus); err != nil {
			return nil, err
		}
	}
	if cc.orig == nil {
		cc.orig = map[string]graphstore.ChunkExtraction{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev := c.m[corpus]; prev != nil {
		return prev, nil
	}
	c.m[corpus] = cc
	return cc, nil
}

// forget drops what is cached of the corpora drop reports (a shard given up: another
// grapher may change them).
func (c *curations) forget(drop func(corpus string) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for corpus := range c.m {
		if drop(corpus) {
			delete(c.m, corpus)
		}
	}
}

// commit merges and removes chunks of a curated corpus, keeping the invariant. With
// no curation it is a plain merge and removal.
func (c *curations) commit(ctx context.Context, corpus string, merges []graphstore.ChunkExtraction, removals []string) error {
	cc, err := c.of(ctx, corpus)
	if err != nil {
		return err
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if len(cc.log) > 0 {
		cc.stale = true // evidence may have come or gone
	}
	if cc.state.Empty() && len(cc.orig) == 0 {
		return c.write(ctx, corpus, merges, removals)
	}
	return cc.remerge(ctx, c, corpus, cc.state, merges, removals)
}

func (c *curations) write(ctx context.Context, corpus string, merges []graphstore.ChunkExtraction, removals []string) error {
	if len(merges) > 0 {
		if err := c.store.Merge(ctx, corpus, merges); err != nil {
			return err
		}
	}
	if len(removals) > 0 {
		if err := c.store.RemoveChunks(ctx, corpus, removals); err != nil {
			return fmt.Errorf("removing %d chunks: %w", len(removals), err)
		}
	}
	return nil
}

// remerge merges raws (extractions as extracted) curated by state and removes
// removals, keeping originals. Call with cc.mu held.
func (cc *corpusCuration) remerge(ctx context.Context, c *curations, corpus string, state *curation.State, raws []graphstore.ChunkExtraction, removals []string) error {
	curated := make([]graphstore.ChunkExtraction, len(raws))
	var unchanged []string
	for i, raw := range raws {
		curated[i] = state.Apply(raw)
		if !curation.Equal(curated[i], raw) {
			if prev, ok := cc.orig[raw.ChunkID]; !ok || !curation.Equal(prev, raw) {
				if err := curation.PutOriginal(ctx, c.kv, corpus, raw); err != nil {
					return err
				}
				cc.orig[raw.ChunkID] = raw
			}
		} else if _, ok := cc.orig[raw.ChunkID]; ok {
			unchanged = append(unchanged, raw.ChunkID)
		}
	}
	if err := c.write(ctx, corpus, curated, removals); err != nil {
		return err
	}
	for _, id := range removals {
		if _, ok := cc.orig[id]; ok {
			unchanged = append(unchanged, id)
		}
	}
	for _, id := range unchanged {
		if err := curation.DeleteOriginal(ctx, c.kv, corpus, id); err != nil {
			return err
		}
		delete(cc.orig, id)
	}
	return nil
}

// reconcile applies the corpus's log as it now is, if the graph has applied less of
// it.
func (c *curations) reconcile(ctx context.Context, corpus string) error {
	cc, err := c.of(ctx, corpus)
	if err != nil {
		return err
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	log, _, err := curation.Load(ctx, c.kv, corpus)
	if err != nil {
		return err
	}
	if len(log) == cc.applied {
		return nil
	}
	if err := cc.switchTo(ctx, c, corpus, curation.Fold(log, cc.inactive)); err != nil {
		return err
	}
	if err := curation.SetApplied(ctx, c.kv, corpus, len(log)); err != nil {
		return err
	}
	cc.applied, cc.log, cc.stale = len(log), log, true
	return nil
}

// switchTo makes the graph curated by next instead of cc.state: every chunk either
// state changes is merged again from its extraction as extracted, and the chunks of
// added relationships follow. Call with cc.mu held.
func (cc *corpusCuration) switchTo(ctx context.Context, c *curations, corpus string, next *curation.State) error {
	ids, err := cc.affected(ctx, c, corpus, append(cc.state.Keys(), next.Keys()...))
	if err != nil {
		return err
	}
	for part := range slices.Chunk(ids, 256) {
		raws, err := cc.raws(ctx, c, corpus, part)
		if err != nil {
			return err
		}
		if err := cc.remerge(ctx, c, corpus, next, raws, nil); err != nil {
			return fmt.Errorf("applying the curation log: %w", err)
		}
	}
	// The chunks of added relationships: those of undone additions go.
	keep := map[string]bool{}
	added := next.Added()
	for _, a := range added {
		keep[a.ChunkID] = true
	}
	var gone []string
	for _, a := range cc.state.Added() {
		if !keep[a.ChunkID] {
			gone = append(gone, a.ChunkID)
		}
	}
	if err := c.write(ctx, corpus, added, gone); err != nil {
		return fmt.Errorf("applying added relationships: %w", err)
	}
	cc.state = next
	return nil
}

// affected lists, sorted, the chunks that mention any of keys in the graph, and those
// whose original is kept; not the chunks of added relationships.
func (cc *corpusCuration) affected(ctx context.Context, c *curations, corpus string, keys []string) ([]string, error) {
	set := map[string]bool{}
	for id := range cc.orig {
		set[id] = true
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	for part := range slices.Chunk(keys, 512) {
		ents, err := c.store.Entities(ctx, corpus, part)
		if err != nil {
			return nil, fmt.Errorf("reading curated entities: %w", err)
		}
		for _, e := range ents {
			for _, id := range e.ChunkIDs {
				set[id] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for id := range set {
		if !strings.HasPrefix(id, curation.AddedChunkPrefix) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out, nil
}

// raws returns the extractions as extracted of chunks in the graph: the kept
// original, else the stored contribution (which is then the extraction as extracted).
func (cc *corpusCuration) raws(ctx context.Context, c *curations, corpus string, ids []string) ([]graphstore.ChunkExtraction, error) {
	var missing []string
	out := make([]graphstore.ChunkExtraction, 0, len(ids))
	for _, id := range ids {
		if ce, ok := cc.orig[id]; ok {
			out = append(out, ce)
		} else {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		cts, err := c.store.Contributions(ctx, corpus, missing)
		if err != nil {
			return nil, fmt.Errorf("reading chunk contributions: %w", err)
		}
		for _, id := range slices.Sorted(maps.Keys(cts)) {
			out = append(out, graphstore.Extraction(cts[id]))
		}
	}
	return out, nil
}

// refreshStatus computes whether each operation of a curated corpus still acts on the
// graph, if the graph changed since, and records it (curation.SaveStatus). An
// operation that became inactive stops curating the graph, one that became active
// again starts again (switchTo).
func (c *curations) refreshStatus(ctx context.Context, corpus string) error {
	cc, err := c.of(ctx, corpus)
	if err != nil {
		return err
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if !cc.stale || len(cc.log) == 0 {
		return nil
	}
	whole := curation.Fold(cc.log, nil)
	ids, err := cc.affected(ctx, c, corpus, whole.Keys())
	if err != nil {
		return err
	}
	var raws []graphstore.ChunkExtraction
	for part := range slices.Chunk(ids, 512) {
		r, err := cc.raws(ctx, c, corpus, part)
		if err != nil {
			return err
		}
		raws = append(raws, r...)
	}
	status := whole.Status(raws)
	if inactive := curation.Inactive(status); !maps.Equal(inactive, cc.inactive) {
		if err := cc.switchTo(ctx, c, corpus, curation.Fold(cc.log, inactive)); err != nil {
			return err
		}
		cc.inactive = inactive
	}
	if err := curation.SaveStatus(ctx, c.kv, corpus, status); err != nil {
		return err
	}
	cc.stale = false
	return nil
}
