package engine

import (
	"context"
	"strconv"
)

// query answers a question as Query does, with levels in the stores' numbering.
func (e *Engine) query(ctx context.Context, req Request, onDelta func(string) error) (*Response, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	t := newTimer()
	mode := req.Mode
	if mode == "" {
		mode = ModeAuto
	}
	var r *retrieval
	if mode != ModeGlobal {
		var err error
		if r, err = e.retrieve(ctx, req, t); err != nil {
			return nil, err
		}
	}
	if mode == ModeAuto {
		mode = ModeLocal
		if e.answer.Global(ctx, req.Query, len(r.linked) > 0) {
			mode = ModeGlobal
		}
		t.mark("classify")
	}
	if mode == ModeGlobal {
		return e.global(ctx, req, t, onDelta)
	}
	a, err := e.answer.Local(ctx, req.Query, r.found, onDelta)
	if err != nil {
		return nil, err
	}
	resp := &Response{Mode: ModeLocal, Answer: a.Text, Context: r.found, Prompt: a.Prompt,
		Citations: chunkCitations(a.Cited, r.found)}
	t.mark("generate")
	resp.Timings = t.done()
	return resp, nil
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
