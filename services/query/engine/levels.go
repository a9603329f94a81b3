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

// Query answers a question in the request's mode (modes.go): the mode assembles the
// context, then the answerer (package answer) writes the answer from it; global mode
// maps and reduces community reports instead. onDelta, when not nil, receives the answer
// as it is generated (streamed from the LLM; offline, in one piece). With OnlyContext the
// response holds the context and no answer.
func (e *Engine) Query(ctx context.Context, req Request, onDelta func(string) error) (*Response, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	levels := -1 // not read yet: a request without a level, whose answer has none, never reads it
	if req.Level != nil {
		var err error
		if levels, err = e.storedLevel(ctx, &req); err != nil {
			return nil, err
		}
	}
	resp, err := e.query(ctx, req, onDelta)
	if err != nil {
		return nil, err
	}
	if hasLevels(resp.Context) {
		if levels < 0 {
			if levels, err = e.levelCount(ctx, req.Corpus); err != nil {
				return nil, err
			}
		}
		showLevels(&resp.Context, levels)
	}
	return resp, nil
}

// levelCount is how many levels the corpus's hierarchy has.
func (e *Engine) levelCount(ctx context.Context, corpus string) (int, error) {
	gs, err := e.deps.Graph.Stats(ctx, corpus)
	if err != nil {
		return 0, fmt.Errorf("counting community levels: %w", err)
	}
	return gs.Levels, nil
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
