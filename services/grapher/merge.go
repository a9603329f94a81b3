package grapher

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/normalize"
)

func (s *Service) handleExtraction(ctx context.Context, corpus string, m *bus.Message) error {
	var x events.Extraction
	if err := events.Decode(m.Data, &x); err != nil {
		return bus.Permanent(fmt.Errorf("decoding extraction: %w", err))
	}
	if x.Corpus != corpus {
		return bus.Permanent(&events.FieldError{Field: "corpus", Problem: fmt.Sprintf("%q does not match subject corpus %q", x.Corpus, corpus)})
	}
	if err := s.merger.merge(ctx, corpus, ToChunkExtraction(&x)); err != nil {
		return fmt.Errorf("merging chunk %s: %w", x.ChunkID, err)
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

// merger group-commits merges: concurrent handlers hand in one chunk each and wait; one
// goroutine merges up to size chunks of a corpus in one store call. A store whose commit
// costs an fsync (the embedded one) or a round trip (Neo4j) gets far more throughput.
type merger struct {
	store GraphStore
	size  int
	wait  time.Duration

	in   chan mergeReq
	quit chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

type mergeReq struct {
	ctx    context.Context
	corpus string
	ce     graphstore.ChunkExtraction
	done   chan error
}

func newMerger(store GraphStore, size int, wait time.Duration) *merger {
	return &merger{store: store, size: size, wait: wait, in: make(chan mergeReq), quit: make(chan struct{})}
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

func (m *merger) merge(ctx context.Context, corpus string, ce graphstore.ChunkExtraction) error {
	r := mergeReq{ctx: ctx, corpus: corpus, ce: ce, done: make(chan error, 1)}
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
		// The last version of a chunk in the batch wins, as it would serially.
		idx := map[string]int{}
		var ces []graphstore.ChunkExtraction
		for _, r := range reqs {
			if i, ok := idx[r.ce.ChunkID]; ok {
				ces[i] = r.ce
				continue
			}
			idx[r.ce.ChunkID] = len(ces)
			ces = append(ces, r.ce)
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(reqs[0].ctx), time.Minute)
		start := time.Now()
		err := m.store.Merge(ctx, corpus, ces)
		recordMerge(ctx, len(ces), time.Since(start))
		cancel()
		for _, r := range reqs {
			r.done <- err
		}
	}
}
