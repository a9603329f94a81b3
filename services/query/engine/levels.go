package engine

import (
	"context"
	"fmt"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/services/query/internal/phase"
)

// The stores number community levels from the finest; requests and results number
// them from the coarsest, 0 the root, as every output of the platform does
// (graphstore.ShownLevel, ADR 0060). Retrieve, Reports and Drift convert at the engine's
// edge (atEdge): a request's level in, the levels of the reports and entities they
// return out.

// atEdge validates req, turns its level into the stores' numbering, runs run with a new
// timer, and numbers the levels of what it found from the coarsest.
func (e *Engine) atEdge(ctx context.Context, req Request, run func(req Request, t *phase.Timer) (*Result, error)) (*Result, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	levels := -1 // not read yet: a request without a level, whose result has none, never reads it
	if req.Level != nil {
		var err error
		if levels, err = e.storedLevel(ctx, &req); err != nil {
			return nil, err
		}
	}
	t := phase.New()
	res, err := run(req, t)
	if err != nil {
		return nil, err
	}
	res.Timings = t.Done()
	if hasLevels(res.Context) {
		if levels < 0 {
			if levels, err = e.levelCount(ctx, req.Corpus); err != nil {
				return nil, err
			}
		}
		showLevels(&res.Context, levels)
	}
	return res, nil
}

// levelCount is how many levels the corpus's hierarchy has.
func (e *Engine) levelCount(ctx context.Context, corpus string) (int, error) {
	n, err := e.deps.Graph.Levels(ctx, corpus)
	if err != nil {
		return 0, fmt.Errorf("reading the community level count: %w", err)
	}
	return n, nil
}

// storedLevel reads how many levels the corpus's hierarchy has and turns the request's
// level into the stores' numbering. A level the hierarchy does not have is the caller's
// mistake.
func (e *Engine) storedLevel(ctx context.Context, req *Request) (int, error) {
	levels, err := e.levelCount(ctx, req.Corpus)
	if err != nil {
		return 0, err
	}
	// Without a hierarchy yet (a corpus being indexed) no level has communities: the
	// request is answered without reports, as at any level before.
	if levels == 0 {
		return 0, nil
	}
	if *req.Level >= levels {
		return 0, BadRequestf("level: %d is outside 0..%d (corpus %s has %d levels; 0 is the coarsest)", *req.Level, levels-1, req.Corpus, levels)
	}
	stored := graphstore.ShownLevel(*req.Level, levels)
	req.Level = &stored
	return levels, nil
}

// hasLevels reports whether r holds a community level: a report, or an entity's
// communities.
func hasLevels(r Retrieved) bool {
	if len(r.Communities) > 0 {
		return true
	}
	for _, en := range r.Entities {
		if len(en.Communities) > 0 {
			return true
		}
	}
	return false
}

// showLevels numbers the levels of what retrieval found from the coarsest: the reports'
// levels and the entities' communities per level.
func showLevels(r *Retrieved, levels int) {
	if levels == 0 {
		return // no hierarchy: nothing to renumber
	}
	for i := range r.Communities {
		r.Communities[i].Level = graphstore.ShownLevel(r.Communities[i].Level, levels)
	}
	for i := range r.Entities {
		r.Entities[i].Communities = graphstore.ShownCommunities(r.Entities[i].Communities, levels)
	}
}
