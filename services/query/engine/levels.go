package engine

import (
	"context"
	"fmt"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

// The stores number community levels from the finest; requests and responses number
// them from the coarsest, 0 the root, as every output of the platform does
// (graphstore.ShownLevel, ADR 0060). Query and Retrieve convert at the engine's edge:
// a request's level in, the levels of the reports and entities they return out.

// Query answers a question: local retrieval, then the answerer (package answer)
// classifies it and writes the answer. onDelta, when not nil, receives the answer as it
// is generated (streamed from the LLM; offline, in one piece).
func (e *Engine) Query(ctx context.Context, req Request, onDelta func(string) error) (*Response, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	levels, err := e.storedLevel(ctx, &req)
	if err != nil {
		return nil, err
	}
	resp, err := e.query(ctx, req, onDelta)
	if err != nil {
		return nil, err
	}
	showLevels(&resp.Context, levels)
	return resp, nil
}

// storedLevel reads how many levels the corpus's hierarchy has and turns the request's
// level, if any, into the stores' numbering. A level the hierarchy does not have is the
// caller's mistake.
func (e *Engine) storedLevel(ctx context.Context, req *Request) (int, error) {
	gs, err := e.deps.Graph.Stats(ctx, req.Corpus)
	if err != nil {
		return 0, fmt.Errorf("counting community levels: %w", err)
	}
	// Without a hierarchy yet (a corpus being indexed) no level has communities: the
	// request is answered without reports, as at any level before.
	if req.Level == nil || gs.Levels == 0 {
		return gs.Levels, nil
	}
	if *req.Level >= gs.Levels {
		return 0, BadRequestf("level: %d is outside 0..%d (corpus %s has %d levels; 0 is the coarsest)", *req.Level, gs.Levels-1, req.Corpus, gs.Levels)
	}
	stored := graphstore.ShownLevel(*req.Level, gs.Levels)
	req.Level = &stored
	return gs.Levels, nil
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
