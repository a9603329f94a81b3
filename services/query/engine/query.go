package engine

import (
	"context"

	"github.com/graphrag/graphrag/services/query/internal/phase"
)

// Retrieve returns the context the request's mode assembles (modes.go; local by
// default), with the duration of each phase in milliseconds.
func (e *Engine) Retrieve(ctx context.Context, req Request) (*Result, error) {
	return e.atEdge(ctx, req, func(req Request, t *phase.Timer) (*Result, error) {
		found, linked, err := e.gather(ctx, req, t)
		if err != nil {
			return nil, err
		}
		return &Result{Context: found, Linked: linked}, nil
	})
}

// Reports returns the community reports a global question is answered from (its
// context's Communities), at the request's level or else the coarsest level with enough
// of them, the most similar to the question's topic first; the request's mode is not
// read. ranked is for a caller that pays for each report it reads (a model call per
// mapped report) or asks for the context alone: the reports are then ranked by the
// topic's dense and lexical lists fused, the unrelated pruned, and at most MapTopK
// (0: all) returned; otherwise every report of the level is.
func (e *Engine) Reports(ctx context.Context, req Request, ranked bool) (*Result, error) {
	req.Mode = ""
	return e.atEdge(ctx, req, func(req Request, t *phase.Timer) (*Result, error) {
		comms, err := e.reports(ctx, req, ranked, t)
		if err != nil {
			return nil, err
		}
		return &Result{Context: Retrieved{Communities: comms}}, nil
	})
}

// Drift retrieves in the manner of DRIFT search (modes.go): the reports ranked first
// for the question, the follow-up questions write derives from them (the result's
// FollowUps), and a local retrieval for the question and each, joined; the request's
// mode is not read.
func (e *Engine) Drift(ctx context.Context, req Request, write FollowUpWriter) (*Result, error) {
	req.Mode = ""
	return e.atEdge(ctx, req, func(req Request, t *phase.Timer) (*Result, error) {
		found, followUps, err := e.drift(ctx, req, write, t)
		if err != nil {
			return nil, err
		}
		return &Result{Context: found, FollowUps: followUps}, nil
	})
}
