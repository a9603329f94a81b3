package engine

import (
	"context"
	"strconv"

	"github.com/graphrag/graphrag/services/query/answer"
)

// query answers a question as Query does (modes.go: the mode assembles the context,
// then the answerer writes the answer from it; global mode maps and reduces community
// reports instead), with levels in the stores' numbering.
func (e *Engine) query(ctx context.Context, req Request, onDelta func(string) error) (*Response, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	t := newTimer()
	mode := req.Mode
	if mode == "" {
		mode = ModeAuto
	}
	if mode == ModeGlobal {
		return e.global(ctx, req, t, onDelta)
	}
	g, err := e.gather(ctx, req, mode, t)
	if err != nil {
		return nil, err
	}
	if g.mode == ModeGlobal { // auto classified the question as global
		return e.global(ctx, req, t, onDelta)
	}
	resp := &Response{Mode: g.mode, Context: g.found, FollowUps: g.followUps, Citations: []Citation{}}
	if !req.OnlyContext {
		gctx, ph := t.begin(ctx, "generate")
		a, err := e.answer.Local(gctx, req.Query, g.found, styleOf(req), onDelta)
		if ph.end(err) != nil {
			return nil, err
		}
		resp.Answer, resp.Prompt, resp.Citations = a.Text, a.Prompt, chunkCitations(a.Cited, g.found)
	}
	resp.Timings = t.done()
	return resp, nil
}

// Retrieve returns the context the request's mode assembles, without an answer, with
// the duration of each phase in milliseconds: Query with OnlyContext, where auto (the
// default) is local retrieval.
func (e *Engine) Retrieve(ctx context.Context, req Request) (Retrieved, map[string]float64, error) {
	if req.Mode == "" || req.Mode == ModeAuto {
		req.Mode = ModeLocal
	}
	req.OnlyContext = true
	resp, err := e.Query(ctx, req, nil)
	if err != nil {
		return Retrieved{}, nil, err
	}
	return resp.Context, resp.Timings, nil
}

// styleOf is how the request asks for its answer to be written.
func styleOf(req Request) answer.Style {
	return answer.Style{ResponseType: req.ResponseType, UserPrompt: req.UserPrompt}
}

// chunkCitations are the citations of a local answer: marker n cites the passage
// order[n-1] (1-based) of the context.
func chunkCitations(order []int, c Retrieved) []Citation {
	out := make([]Citation, 0, len(order))
	for i, n := range order {
		ch := c.Chunks[n-1]
		out = append(out, Citation{Marker: strconv.Itoa(i + 1), ChunkID: ch.ID, DocumentID: ch.DocumentID})
	}
	return out
}
