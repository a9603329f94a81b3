package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// globalCue matches questions about the corpus as a whole. Offline, a question is global
// when it matches; with an LLM, the model decides when no entity was linked.
var globalCue = regexp.MustCompile(`(?i)\b(main|major|key|overall|common|recurring|central|dominant)\s+(themes?|topics?|ideas?|trends?|patterns?|issues?|points?)\b|` +
	`\b(across|throughout)\s+(the|all|these|this)\s+(corpus|documents?|collection|texts?|sources?|books?|articles?|dataset)\b|` +
	`\b(summari[sz]e|overview of|big picture|high[- ]level)\b|\bwhat (is|are) (this|the) (corpus|collection|dataset|documents?) about\b`)

// IsGlobalHeuristic is the offline classifier.
func IsGlobalHeuristic(q string) bool { return globalCue.MatchString(q) }

func (e *Engine) classify(ctx context.Context, q string, linked []linkedEntity) (string, error) {
	if IsGlobalHeuristic(q) {
		return ModeGlobal, nil
	}
	if len(linked) > 0 || e.deps.LLM == nil {
		return ModeLocal, nil
	}
	out, _, err := llm.ChatJSON[struct {
		Scope string `json:"scope"`
	}](ctx, e.deps.LLM, llm.ChatRequest{
		Stage:  "query",
		System: `Classify the question. "local": it asks about specific entities, facts or events. "global": it asks about themes, trends or the corpus as a whole. Return JSON {"scope": "local"|"global"}.`,
		User:   q, MaxTokens: 20,
		JSONSchema: &llm.Schema{Name: "scope", Strict: true, Schema: map[string]any{
			"type": "object", "properties": map[string]any{"scope": map[string]any{"enum": []string{"local", "global"}}},
			"required": []string{"scope"}, "additionalProperties": false}},
	})
	if err != nil {
		e.log.WarnContext(ctx, "classifying the question failed; answering locally", "err", err)
		return ModeLocal, nil
	}
	if out.Scope == ModeGlobal {
		return ModeGlobal, nil
	}
	return ModeLocal, nil
}

// pickLevel chooses the community level for a global question: the coarsest level that
// still has at least `want` reports, else the level with the most reports.
func (e *Engine) pickLevel(ctx context.Context, corpus string, want int) (int, error) {
	gs, err := e.deps.Graph.Stats(ctx, corpus)
	if err != nil {
		return 0, fmt.Errorf("reading graph stats: %w", err)
	}
	best, bestN := 0, -1
	for lvl := gs.Levels - 1; lvl >= 0; lvl-- {
		cs, err := e.deps.Graph.Communities(ctx, corpus, lvl)
		if err != nil {
			return 0, fmt.Errorf("reading level %d: %w", lvl, err)
		}
		if len(cs) >= want {
			return lvl, nil
		}
		if len(cs) > bestN {
			best, bestN = lvl, len(cs)
		}
	}
	return best, nil
}

// global answers with map-reduce over community reports.
func (e *Engine) global(ctx context.Context, req Request, t *timer, onDelta func(string) error) (*Response, error) {
	if err := e.checkCorpus(ctx, req.Corpus); err != nil {
		return nil, err
	}
	qvec, err := e.embedQuery(ctx, req.Query)
	if err != nil {
		return nil, err
	}
	var level int
	if req.Level != nil {
		level = *req.Level
	} else if level, err = e.pickLevel(ctx, req.Corpus, max(2, e.cfg.MapTopK)); err != nil {
		return nil, err
	}
	// With an LLM every mapped community costs a call, so MapTopK bounds the map phase
	// (0 = all at the level, pruned). Offline the map phase is free: map them all and let
	// the scores choose.
	k := e.cfg.MapTopK
	all := k == 0 || e.deps.LLM == nil
	if all {
		k = 10000
	}
	hits, err := e.selectReports(ctx, req.Corpus, qvec, level, k)
	if err != nil {
		return nil, err
	}
	comms := make([]Community, 0, len(hits))
	for _, h := range hits {
		// "All at a level" with an LLM prunes reports far less relevant than the best one.
		if all && e.deps.LLM != nil && h.Score < 0.5*hits[0].Score {
			continue
		}
		comms = append(comms, communityOf(h.Record, h.Score))
	}
	if e.deps.LLM != nil {
		comms = e.withinTokenBudget(req.Query, comms)
	}
	t.mark("select")

	partials, err := e.mapPhase(ctx, req.Query, comms)
	if err != nil {
		return nil, err
	}
	t.mark("map")
	resp := &Response{Mode: ModeGlobal, Context: Retrieved{Communities: comms}, Partials: partials}
	resp.Prompt = ReducePrompt(req.Query, partials)
	rn := newRenumberer(len(partials))
	if e.deps.LLM != nil && len(partials) > 0 {
		if resp.Answer, err = e.generate(ctx, llm.ChatRequest{Stage: "query", System: reduceSystem, User: resp.Prompt, MaxTokens: e.cfg.ReduceTokens}, rn, onDelta); err != nil {
			return nil, fmt.Errorf("reduce phase: %w", err)
		}
	} else if resp.Answer, err = cite(extractiveReduce(partials), rn, onDelta); err != nil {
		return nil, err
	}
	resp.Citations = []Citation{}
	for i, n := range rn.order {
		resp.Citations = append(resp.Citations, Citation{Marker: strconv.Itoa(i + 1), Community: partials[n-1].CommunityID})
	}
	t.mark("reduce")
	resp.Timings = t.done()
	return resp, nil
}

// selectReports returns up to k reports at level, the most similar to the question
// first; without a query vector (a question of stop words only), the reports of the
// level's current communities, the best rated first.
func (e *Engine) selectReports(ctx context.Context, corpus string, qvec []float32, level, k int) ([]vectorstore.Hit, error) {
	// Only the reports of communities the graph holds now: a report of a replaced
	// community must never be mapped, even before the grapher's clean-up removes it.
	cs, err := e.deps.Graph.Communities(ctx, corpus, level)
	if err != nil {
		return nil, fmt.Errorf("reading the communities of level %d: %w", level, err)
	}
	if len(cs) == 0 {
		return nil, nil
	}
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	coll := schema.Collection(corpus, schema.Communities)
	lvl := strconv.Itoa(level)
	if qvec != nil {
		hits, err := e.deps.Vectors.Search(ctx, coll, qvec, min(k, len(ids)), vectorstore.Filter{IDs: ids, Attrs: map[string]string{schema.ReportLevel: lvl}})
		if err != nil && !errors.Is(err, vectorstore.ErrNotFound) {
			return nil, fmt.Errorf("selecting communities: %w", err)
		}
		return hits, nil
	}
	recs, err := e.deps.Vectors.Get(ctx, coll, ids)
	if err != nil && !errors.Is(err, vectorstore.ErrNotFound) {
		return nil, fmt.Errorf("reading community reports: %w", err)
	}
	hits := make([]vectorstore.Hit, 0, len(recs))
	for _, r := range recs {
		if r.Attrs[schema.ReportLevel] == lvl {
			rating, _ := strconv.ParseFloat(r.Attrs[schema.ReportRating], 64)
			hits = append(hits, vectorstore.Hit{Record: r, Score: rating / 10})
		}
	}
	slices.SortStableFunc(hits, vectorstore.CompareHits)
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits, nil
}

// globalTokenBudget bounds the prompt tokens one global question sends to the model:
// its map calls and its reduce call (issue 15: ≤ 50k). Mapping every report of a level
// of a corpus of a thousand passages sends far more (measured by `graphrag bench -only
// globalcost`), at the price of one call per report.
const globalTokenBudget = 50_000

// withinTokenBudget keeps the best-ranked communities (comms is in rank order) whose
// map prompts, and the partial answers they put into the reduce prompt, fit in
// globalTokenBudget; at least the best one. Tokens are estimated at 4 bytes each, as
// the client's rate limiter does.
func (e *Engine) withinTokenBudget(q string, comms []Community) []Community {
	const perPartial = 8 // "[n] (score N) " and the blank line of each partial in the reduce prompt
	spent := estimateTokens(reduceSystem) + estimateTokens(ReducePrompt(q, nil))
	for i, c := range comms {
		spent += estimateTokens(mapSystem) + estimateTokens(mapPrompt(c, q)) + e.cfg.MapMaxTokens + perPartial
		if spent > globalTokenBudget && i > 0 {
			return comms[:i]
		}
	}
	return comms
}

func estimateTokens(s string) int { return len(s)/4 + 1 }

// mapPrompt is the user message of a community's map call.
func mapPrompt(c Community, q string) string {
	return "## Community report\n" + c.Title + "\n" + c.Summary + "\n\n## Question\n" + q
}

const mapSystem = `You answer a question using only one community report from a knowledge graph.
Return JSON {"answer": "...", "score": N}: the answer holds the points of the report relevant to the question (at most 5 bullet points); score is 0-100, how helpful the report is for the question; if it is not relevant, return score 0 and answer "Not relevant".`

const reduceSystem = `You synthesize partial answers, each from one community of a knowledge graph and numbered, into one coherent answer to the question. Remove redundancy, organize by theme, keep the most relevant points first, and cite the partial answers you use as [n]. Use only what the partial answers say.`

// mapPhase asks for a partial answer per community in parallel (bounded), drops the
// irrelevant ones and sorts the rest by score. Wall time is about that of the slowest
// call, not their sum.
func (e *Engine) mapPhase(ctx context.Context, q string, comms []Community) ([]PartialAnswer, error) {
	out := make([]PartialAnswer, len(comms))
	errs := make([]error, len(comms))
	sem := make(chan struct{}, e.cfg.MapConcurrency)
	var wg sync.WaitGroup
	terms := contentTerms(globalCue.ReplaceAllString(q, " "))
	for _, w := range genericWords {
		delete(terms, w)
	}
	for i, c := range comms {
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			defer func() { <-sem }()
			if e.deps.LLM == nil {
				out[i] = extractiveMap(terms, c)
				return
			}
			res, _, err := llm.ChatJSON[struct {
				Answer string  `json:"answer"`
				Score  float64 `json:"score"`
			}](ctx, e.deps.LLM, llm.ChatRequest{
				Stage: "query", System: mapSystem, MaxTokens: e.cfg.MapMaxTokens,
				User: mapPrompt(c, q),
				JSONSchema: &llm.Schema{Name: "partial_answer", Strict: true, Schema: map[string]any{
					"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"},
						"score": map[string]any{"type": "number", "minimum": 0, "maximum": 100}},
					"required": []string{"answer", "score"}, "additionalProperties": false}},
			})
			if err != nil {
				errs[i] = fmt.Errorf("map phase, community %s: %w", c.ID, err)
				return
			}
			out[i] = PartialAnswer{CommunityID: c.ID, Answer: strings.TrimSpace(res.Answer), Score: res.Score}
		})
	}
	wg.Wait()
	// A community whose map call failed (after the client's retries) is left out, as an
	// irrelevant one is: one bad answer must not sink the question. Only when every call
	// failed is the question answered with an error.
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
			e.log.WarnContext(ctx, "map call failed; community left out", "err", err)
		}
	}
	if failed > 0 && failed == len(comms) {
		return nil, errors.Join(errs...)
	}
	kept := out[:0]
	for i, p := range out {
		if errs[i] == nil && p.Score > 0 && !strings.EqualFold(strings.TrimSpace(p.Answer), "not relevant") {
			kept = append(kept, p)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].Score > kept[j].Score })
	return kept, nil
}

// genericWords say that a question is about the corpus, not what it is about.
var genericWords = strings.Fields("theme themes topic topics corpus documents document collection overall main major key across all")

// extractiveMap scores a report offline. A question with content terms scores a report by
// its similarity to the question and the share of those terms it contains; a question
// without any ("what are the main themes?") scores it by its importance rating, so the
// answer surveys the largest, densest communities. The partial answer is the report's
// title and its most relevant sentences.
func extractiveMap(terms map[string]float64, c Community) PartialAnswer {
	if len(terms) == 0 {
		ss := sentences(c.Summary)
		if len(ss) > 2 {
			ss = ss[:2]
		}
		return PartialAnswer{CommunityID: c.ID, Answer: c.Title + ": " + strings.Join(ss, " "), Score: math.Round(c.Rating*100) / 10}
	}
	ss := sentences(c.Summary)
	type sc struct {
		s string
		v float64
		i int
	}
	var scored []sc
	total := 0.0
	for _, v := range terms {
		total += v
	}
	best := 0.0
	for i, s := range ss {
		v := overlap(terms, s)
		best = max(best, v)
		scored = append(scored, sc{s, v, i})
	}
	sort.SliceStable(scored, func(i, j int) bool { return scored[i].v > scored[j].v })
	var parts []string
	for _, s := range scored {
		if len(parts) >= 2 {
			break
		}
		parts = append(parts, s.s)
	}
	lex := 0.0
	if total > 0 {
		lex = best / total
	}
	score := 100 * (0.6*max(c.Score, 0) + 0.4*lex) * (0.5 + c.Rating/20)
	return PartialAnswer{CommunityID: c.ID, Answer: c.Title + ": " + strings.Join(parts, " "), Score: float64(int(score*10)) / 10}
}

// ReducePrompt renders the reduce prompt.
func ReducePrompt(q string, partials []PartialAnswer) string {
	var b strings.Builder
	b.WriteString("## Partial answers\n")
	for i, p := range partials {
		fmt.Fprintf(&b, "[%d] (score %.0f) %s\n\n", i+1, p.Score, p.Answer)
	}
	b.WriteString("## Question\n")
	b.WriteString(q)
	return b.String()
}

func extractiveReduce(partials []PartialAnswer) string {
	if len(partials) == 0 {
		return "No community report in the corpus is relevant to the question."
	}
	var b strings.Builder
	b.WriteString("The corpus covers these themes:\n")
	for i, p := range partials {
		if i >= 5 {
			break
		}
		fmt.Fprintf(&b, "- %s [%d]\n", oneLine(p.Answer, 400), i+1)
	}
	return strings.TrimRight(b.String(), "\n")
}
