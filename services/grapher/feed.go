package grapher

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/llm"
)

// feedWindow is how long the entity feed lets merges accumulate before it embeds what
// they touched: about a thousand entities at the offline pipeline's pace, a group worth
// one durable write (see entityWriteGroup).
const feedWindow = time.Second

// entityFeed holds, per corpus, the keys of entities merged since they were last
// embedded. Embedding them while documents stream in uses the CPU that merging and
// extraction leave idle; otherwise a detection run embeds every new entity itself, on one
// goroutine, after the last document (6 of the 8 minutes of the final run at 100k
// realistic chunks, docs/benchmarks.md). A detection run still embeds whatever changed,
// so a key the feed loses (an error, a stop) costs time, never a vector.
type entityFeed struct {
	mu      sync.Mutex
	pending map[string]map[string]struct{}
	wake    chan struct{}
}

func newEntityFeed() *entityFeed {
	return &entityFeed{pending: map[string]map[string]struct{}{}, wake: make(chan struct{}, 1)}
}

// add records the entities of merged extractions.
func (f *entityFeed) add(corpus string, merged []graphstore.ChunkExtraction) {
	f.mu.Lock()
	set := f.pending[corpus]
	if set == nil {
		set = map[string]struct{}{}
		f.pending[corpus] = set
	}
	for _, ce := range merged {
		for _, e := range ce.Entities {
			set[e.Key] = struct{}{}
		}
	}
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// drop forgets a corpus's pending keys: a detection run is about to embed its entities.
func (f *entityFeed) drop(corpus string) {
	f.mu.Lock()
	delete(f.pending, corpus)
	f.mu.Unlock()
}

// take removes up to n pending keys of one corpus and returns them sorted.
func (f *entityFeed) take(n int) (string, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for corpus, set := range f.pending {
		keys := make([]string, 0, min(n, len(set)))
		for k := range set {
			if len(keys) == n {
				break
			}
			keys = append(keys, k)
			delete(set, k)
		}
		if len(set) == 0 {
			delete(f.pending, corpus)
		}
		slices.Sort(keys)
		return corpus, keys
	}
	return "", nil
}

// embedMerged embeds the entities the merger reports, a window's worth at a time, until
// ctx ends. It takes embedMu per group, so a detection run's embedding (which holds it
// throughout) never interleaves with it: the run's deletion of stale records sees every
// record written before it.
func (s *Service) embedMerged(ctx context.Context) {
	defer close(s.embedDone)
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.feed.wake:
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(feedWindow):
		}
		for {
			corpus, keys := s.feed.take(entityWriteGroup)
			if len(keys) == 0 {
				break
			}
			s.embedMu.Lock()
			n, err := s.embedChanged(llm.WaitOutOutages(ctx, s.stop), corpus, keys)
			s.embedMu.Unlock()
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				s.log.Warn("embedding merged entities; the next detection run will", "corpus", corpus, "err", err)
				continue
			}
			s.log.Debug("embedded merged entities", "corpus", corpus, "keys", len(keys), "embedded", n)
		}
	}
}
