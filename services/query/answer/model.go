package answer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/services/query/evidence"
	"github.com/graphrag/graphrag/services/query/question"
)

// modelAnswerer answers with a model: it writes local and global answers (streamed when
// asked), maps community reports within a token budget, and classifies the questions
// the global cue and entity linking leave open.
type modelAnswerer struct {
	client *llm.Client
	cfg    Config
	log    *slog.Logger
}

var _ Answerer = (*modelAnswerer)(nil)

// Global: a global cue decides, then a linked entity (local); otherwise the model does,
// and a failed call answers locally.
func (m *modelAnswerer) Global(ctx context.Context, q string, linked bool) bool {
	if question.HasGlobalCue(q) {
		return true
	}
	if linked {
		return false
	}
	out, _, err := llm.ChatJSON[struct {
		Scope string `json:"scope"`
	}](ctx, m.client, llm.ChatRequest{
		Stage:  "query",
		System: `Classify the question. "local": it asks about specific entities, facts or events. "global": it asks about themes, trends or the corpus as a whole. Return JSON {"scope": "local"|"global"}.`,
		User:   q, MaxTokens: 20,
		JSONSchema: &llm.Schema{Name: "scope", Strict: true, Schema: map[string]any{
			"type": "object", "properties": map[string]any{"scope": map[string]any{"enum": []string{"local", "global"}}},
			"required": []string{"scope"}, "additionalProperties": false}},
	})
	if err != nil {
		m.log.WarnContext(ctx, "classifying the question failed; answering locally", "err", err)
		return false
	}
	return out.Scope == "global"
}

func (m *modelAnswerer) Local(ctx context.Context, q string, found evidence.Retrieved, style Style, onDelta func(string) error) (Answer, error) {
	a := Answer{Prompt: localPrompt(q, found, style)}
	rn := newRenumberer(len(found.Chunks))
	text, err := m.generate(ctx, llm.ChatRequest{Stage: "query", System: localSystem, User: a.Prompt, MaxTokens: m.cfg.AnswerTokens}, rn, onDelta)
	if err != nil {
		return Answer{}, fmt.Errorf("generating the answer: %w", err)
	}
	a.Text, a.Cited = text, rn.order
	return a, nil
}

// PaysPerReport is true: every mapped report is a model call.
func (m *modelAnswerer) PaysPerReport() bool { return true }

// Reduce asks the model to synthesize the partial answers; without any, it says that no
// report is relevant, as the extractive answer does.
func (m *modelAnswerer) Reduce(ctx context.Context, q string, partials []evidence.PartialAnswer, style Style, onDelta func(string) error) (Answer, error) {
	if len(partials) == 0 {
		return extractive{}.Reduce(ctx, q, partials, style, onDelta)
	}
	a := Answer{Prompt: reducePrompt(q, partials, style)}
	rn := newRenumberer(len(partials))
	text, err := m.generate(ctx, llm.ChatRequest{Stage: "query", System: reduceSystem, User: a.Prompt, MaxTokens: m.cfg.ReduceTokens}, rn, onDelta)
	if err != nil {
		return Answer{}, fmt.Errorf("reduce phase: %w", err)
	}
	a.Text, a.Cited = text, rn.order
	return a, nil
}

// generate asks the model for an answer, its citation markers renumbered by rn, streamed
// to onDelta when it is set.
func (m *modelAnswerer) generate(ctx context.Context, req llm.ChatRequest, rn *renumberer, onDelta func(string) error) (string, error) {
	if onDelta == nil {
		cr, err := m.client.Chat(ctx, req)
		if err != nil {
			return "", err
		}
		rn.write(cr.Content)
		rn.flush()
		return strings.TrimSpace(rn.text()), nil
	}
	_, err := m.client.ChatStream(ctx, req, func(d string) error {
		if s := rn.write(d); s != "" {
			return onDelta(s)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if s := rn.flush(); s != "" {
		if err := onDelta(s); err != nil {
			return "", err
		}
	}
	return strings.TrimSpace(rn.text()), nil
}

// mapBudget spends GlobalTokenBudget on the map phase as calls complete. Dispatching a
// map call reserves its prompt plus a full partial answer (MapMaxTokens) for the reduce
// prompt; when the call returns, the reservation becomes what it really adds: its prompt,
// and its answer only if relevant (irrelevant answers never reach the reduce prompt).
// Reports are dispatched in rank order while the next one's reservation fits, so the
// prompt tokens of the question (map calls and reduce call) stay within the budget and
// the set mapped does not depend on the order calls complete in: report i is mapped when
// the real cost of those before it plus its reservation fits. Tokens are estimated at
// 4 bytes each, as the client's rate limiter does.
type mapBudget struct {
	limit int // < 0: no bound
	mu    sync.Mutex
	spent int // real costs of completed calls, reservations of calls in flight
	freed chan struct{}
}

// perPartial is what a partial answer adds to the reduce prompt besides its text:
// "[n] (score N) " and the blank line after it.
const perPartial = 8

func (m *modelAnswerer) newMapBudget(q string, n int, style Style) *mapBudget {
	return &mapBudget{limit: m.cfg.GlobalTokenBudget, freed: make(chan struct{}, n),
		spent: estimateTokens(reduceSystem) + estimateTokens(reducePrompt(q, nil, style))}
}

// reserve takes tokens for one call if they fit (always for the first call, so that a
// question is never answered from nothing).
func (b *mapBudget) reserve(tokens int, first bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.limit >= 0 && !first && b.spent+tokens > b.limit {
		return false
	}
	b.spent += tokens
	return true
}

// settle replaces a reservation by the real cost and wakes a waiting dispatcher.
func (b *mapBudget) settle(reserved, real int) {
	b.mu.Lock()
	b.spent += real - reserved
	b.mu.Unlock()
	b.freed <- struct{}{}
}

// Map asks for a partial answer per community, best-ranked first, in parallel
// (bounded), within the token budget (mapBudget), drops the irrelevant ones and sorts
// the rest by score. It returns the partial answers and the communities it mapped (a
// prefix of comms). Wall time is about that of the slowest wave of calls, not their sum.
func (m *modelAnswerer) Map(ctx context.Context, q string, comms []evidence.Community, style Style) ([]evidence.PartialAnswer, []evidence.Community, error) {
	out := make([]evidence.PartialAnswer, len(comms))
	errs := make([]error, len(comms))
	sem := make(chan struct{}, m.cfg.MapConcurrency)
	budget := m.newMapBudget(q, len(comms), style)
	var wg sync.WaitGroup
	inFlight, mapped := 0, 0
dispatch:
	for i, c := range comms {
		prompt := estimateTokens(mapSystem) + estimateTokens(mapPrompt(c, q))
		reserved := prompt + m.cfg.MapMaxTokens + perPartial
		for !budget.reserve(reserved, i == 0) {
			if inFlight == 0 {
				break dispatch // the real costs so far leave no room for this one
			}
			select { // a call in flight may settle for less than it reserved
			case <-budget.freed:
				inFlight--
			case <-ctx.Done():
				break dispatch
			}
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			budget.settle(reserved, 0)
			break dispatch
		}
		mapped++
		inFlight++
		wg.Go(func() {
			defer func() { <-sem }()
			res, _, err := llm.ChatJSON[struct {
				Answer string  `json:"answer"`
				Score  float64 `json:"score"`
			}](ctx, m.client, llm.ChatRequest{
				Stage: "query", System: mapSystem, MaxTokens: m.cfg.MapMaxTokens,
				User: mapPrompt(c, q),
				JSONSchema: &llm.Schema{Name: "partial_answer", Strict: true, Schema: map[string]any{
					"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"},
						"score": map[string]any{"type": "number", "minimum": 0, "maximum": 100}},
					"required": []string{"answer", "score"}, "additionalProperties": false}},
			})
			if err != nil {
				errs[i] = fmt.Errorf("map phase, community %s: %w", c.ID, err)
				budget.settle(reserved, prompt)
				return
			}
			out[i] = evidence.PartialAnswer{CommunityID: c.ID, Answer: strings.TrimSpace(res.Answer), Score: res.Score}
			real := prompt
			if relevant(out[i]) {
				real += estimateTokens(out[i].Answer) + perPartial
			}
			budget.settle(reserved, real)
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	out, errs = out[:mapped], errs[:mapped]
	// A community whose map call failed (after the client's retries) is left out, as an
	// irrelevant one is: one bad answer must not sink the question. Only when every call
	// failed is the question answered with an error.
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
			m.log.WarnContext(ctx, "map call failed; community left out", "err", err)
		}
	}
	if failed > 0 && failed == mapped {
		return nil, nil, errors.Join(errs...)
	}
	return keepRelevant(out, errs), comms[:mapped], nil
}
