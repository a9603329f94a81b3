package ask

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/services/query/answer"
	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/query/internal/phase"
	"github.com/graphrag/graphrag/services/query/question"
)

// Asker answers questions. It is safe for concurrent use.
type Asker struct {
	eng    *engine.Engine
	cfg    Config          // effective: zero fields given their defaults
	answer answer.Answerer // the model's or the extractive one, chosen in New
}

// New builds the retrieval engine over deps with ecfg, and the answerer with cfg: with
// client, the model answers, classifies questions, writes drift's follow-ups and lists a
// question's entities for linking (deps.Entities); without (nil), answers are extractive
// and questions are classified by their global cue.
func New(ecfg engine.Config, cfg Config, deps engine.Deps, client *llm.Client) (*Asker, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	if client != nil {
		deps.Entities = engine.ModelEntities(client)
	}
	eng, err := engine.New(ecfg, deps)
	if err != nil {
		return nil, err
	}
	log := deps.Logger
	if log == nil {
		log = slog.Default()
	}
	ans := answer.New(client, answer.Config{AnswerTokens: cfg.AnswerTokens, MapMaxTokens: cfg.MapMaxTokens,
		MapConcurrency: cfg.MapConcurrency, GlobalTokenBudget: cfg.GlobalTokenBudget, ReduceTokens: cfg.ReduceTokens}, log.With("service", "query"))
	return &Asker{eng: eng, cfg: cfg, answer: ans}, nil
}

// Config returns the effective answering configuration.
func (a *Asker) Config() Config { return a.cfg }

// Engine is the retrieval engine the Asker answers from.
func (a *Asker) Engine() *engine.Engine { return a.eng }

// Query answers a question in the request's mode: the mode assembles the context, then
// the answerer writes the answer from it; global mode maps and reduces community reports
// instead. onDelta, when not nil, receives the answer as it is generated (streamed from
// the LLM; offline, in one piece). With OnlyContext the response holds the context and
// no answer.
func (a *Asker) Query(ctx context.Context, req Request, onDelta func(string) error) (*Response, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	t := phase.New()
	mode := req.Mode
	if mode == "" {
		mode = ModeAuto
	}
	var res *engine.Result
	var err error
	switch mode {
	case ModeGlobal:
		return a.global(ctx, req, t, onDelta)
	case ModeAuto:
		rr := req.retrieval()
		rr.Mode = ModeLocal
		if res, err = a.eng.Retrieve(ctx, rr); err != nil {
			return nil, err
		}
		t.Add(res.Timings)
		var global bool
		cctx, ph := t.Begin(ctx, "classify")
		if req.OnlyContext {
			global = question.HasGlobalCue(req.Query) // no model call
		} else {
			global = a.answer.Global(cctx, req.Query, res.Linked)
		}
		_ = ph.End(nil)
		if global {
			return a.global(ctx, req, t, onDelta)
		}
		mode = ModeLocal
	case ModeDrift:
		write := engine.FollowUpWriter(a.answer.FollowUps)
		if req.OnlyContext {
			write = func(_ context.Context, q string, _ []engine.Community, keys []string, n int) []string {
				return answer.EntityFollowUps(q, keys, n) // no model call
			}
		}
		if res, err = a.eng.Drift(ctx, req.retrieval(), write); err != nil {
			return nil, err
		}
		t.Add(res.Timings)
	default:
		if res, err = a.eng.Retrieve(ctx, req.retrieval()); err != nil {
			return nil, err
		}
		t.Add(res.Timings)
	}
	resp := &Response{Mode: mode, Context: res.Context, FollowUps: res.FollowUps, Citations: []Citation{}}
	if !req.OnlyContext {
		gctx, ph := t.Begin(ctx, "generate")
		ans, err := a.answer.Local(gctx, req.Query, res.Context, styleOf(req), onDelta)
		if ph.End(err) != nil {
			return nil, err
		}
		resp.Answer, resp.Prompt, resp.Citations = ans.Text, ans.Prompt, chunkCitations(ans.Cited, res.Context)
	}
	resp.Timings = t.Done()
	return resp, nil
}

// global answers with map-reduce over the community reports the engine selects. With
// OnlyContext it returns the reports it would map, ranked and bounded as with a model.
func (a *Asker) global(ctx context.Context, req Request, t *phase.Timer, onDelta func(string) error) (*Response, error) {
	res, err := a.eng.Reports(ctx, req.retrieval(), a.answer.PaysPerReport() || req.OnlyContext)
	if err != nil {
		return nil, err
	}
	t.Add(res.Timings)
	comms := res.Context.Communities
	if req.OnlyContext {
		return &Response{Mode: ModeGlobal, Context: engine.Retrieved{Communities: comms}, Citations: []Citation{}, Timings: t.Done()}, nil
	}
	style := styleOf(req)
	mctx, ph := t.Begin(ctx, "map")
	partials, comms, err := a.answer.Map(mctx, req.Query, comms, style)
	if ph.End(err) != nil {
		return nil, err
	}
	rctx, ph := t.Begin(ctx, "reduce")
	ans, err := a.answer.Reduce(rctx, req.Query, partials, style, onDelta)
	if ph.End(err) != nil {
		return nil, err
	}
	resp := &Response{Mode: ModeGlobal, Answer: ans.Text, Context: engine.Retrieved{Communities: comms}, Partials: partials,
		Prompt: ans.Prompt, Citations: []Citation{}}
	for i, n := range ans.Cited {
		resp.Citations = append(resp.Citations, Citation{Marker: strconv.Itoa(i + 1), Community: partials[n-1].CommunityID})
	}
	resp.Timings = t.Done()
	return resp, nil
}

// Retrieve returns the context the request's mode assembles, without an answer, with
// the duration of each phase in milliseconds: Query with OnlyContext, where auto (the
// default) is local retrieval.
func (a *Asker) Retrieve(ctx context.Context, req Request) (engine.Retrieved, map[string]float64, error) {
	if req.Mode == "" || req.Mode == ModeAuto {
		req.Mode = ModeLocal
	}
	req.OnlyContext = true
	resp, err := a.Query(ctx, req, nil)
	if err != nil {
		return engine.Retrieved{}, nil, err
	}
	return resp.Context, resp.Timings, nil
}

// styleOf is how the request asks for its answer to be written.
func styleOf(req Request) answer.Style {
	return answer.Style{ResponseType: req.ResponseType, UserPrompt: req.UserPrompt}
}

// chunkCitations are the citations of a local answer: marker n cites the passage
// order[n-1] (1-based) of the context.
func chunkCitations(order []int, c engine.Retrieved) []Citation {
	out := make([]Citation, 0, len(order))
	for i, n := range order {
		ch := c.Chunks[n-1]
		out = append(out, Citation{Marker: strconv.Itoa(i + 1), ChunkID: ch.ID, DocumentID: ch.DocumentID})
	}
	return out
}
