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
	// Reports are selected by what the question is about, not by how it asks for a
	// survey: "what are the main themes" matches every report alike.
	qvec, err := e.embedQuery(ctx, globalTopic(req.Query))
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
	candidates := 10000
	if !all {
		// More candidates than are mapped, for the lexical list to reorder.
		candidates = max(4*k, 64)
	}
	hits, err := e.selectReports(ctx, req.Corpus, qvec, level, candidates)
	if err != nil {
		return nil, err
	}
	comms := make([]Community, 0, len(hits))
	for _, h := range hits {
		comms = append(comms, CommunityOf(h.Record, h.Score))
	}
	if e.deps.LLM != nil {
		// Every mapped report is a model call: rank them by the question's topic, dense
		// and lexical lists fused, prune the unrelated, and keep what the budget holds.
		comms = e.rankReports(req.Query, comms, all)
		if !all {
			comms = comms[:min(k, len(comms))]
		}
	}
	t.mark("select")

	partials, comms, err := e.mapPhase(ctx, req.Query, comms)
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

// rankReports orders the candidate reports (comms, most similar first) for the map
// phase by Reciprocal Rank Fusion of their dense similarity and the share of the
// question's topic words (globalTopic) their title and summary hold, as local search
// fuses its dense and lexical lists: a report naming what is asked ranks high even when
// a long summary dilutes its vector. With prune, a report far less similar than the
// best one (under half its similarity) that holds none of the words is left out.
func (e *Engine) rankReports(q string, comms []Community, prune bool) []Community {
	if len(comms) == 0 {
		return comms
	}
	terms := contentTerms(globalTopic(q))
	for _, w := range genericWords {
		delete(terms, w)
	}
	total := 0.0
	for _, v := range terms {
		total += v
	}
	byID := make(map[string]Community, len(comms))
	lex := make(map[string]float64, len(comms))
	dense := RankedList{Name: "dense", Weight: 1}
	for _, c := range comms {
		byID[c.ID] = c
		dense.IDs = append(dense.IDs, c.ID)
		if total > 0 {
			lex[c.ID] = overlap(terms, c.Title+" "+c.Summary) / total
		}
	}
	lexical := RankedList{Name: "lexical", Weight: 1}
	for _, c := range comms {
		if lex[c.ID] > 0 {
			lexical.IDs = append(lexical.IDs, c.ID)
		}
	}
	sort.SliceStable(lexical.IDs, func(i, j int) bool { return lex[lexical.IDs[i]] > lex[lexical.IDs[j]] })
	best := comms[0].Score
	out := make([]Community, 0, len(comms))
	for _, f := range RRF(e.cfg.RRFK, dense, lexical) {
		c := byID[f.ID]
		if prune && lex[c.ID] == 0 && c.Score < 0.5*best {
			continue
		}
		out = append(out, c)
	}
	return out
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

func (e *Engine) newMapBudget(q string, n int) *mapBudget {
	return &mapBudget{limit: e.cfg.GlobalTokenBudget, freed: make(chan struct{}, n),
		spent: estimateTokens(reduceSystem) + estimateTokens(ReducePrompt(q, nil))}
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

func estimateTokens(s string) int { return len(s)/4 + 1 }

// mapPrompt is the user message of a community's map call.
func mapPrompt(c Community, q string) string {
	return "## Community report\n" + c.Title + "\n" + c.Summary + "\n\n## Question\n" + q
}

const mapSystem = `You answer a question using only one community report from a knowledge graph.
Return JSON {"answer": "...", "score": N}: the answer holds the points of the report relevant to the question (at most 5 bullet points); score is 0-100, how helpful the report is for the question; if it is not relevant, return score 0 and answer "Not relevant".`

const reduceSystem = `You synthesize partial answers, each from one community of a knowledge graph and numbered, into one coherent answer to the question. Remove redundancy, organize by theme, keep the most relevant points first, and cite the partial answers you use as [n]. Use only what the partial answers say.`

// mapPhase asks for a partial answer per community, best-ranked first, in parallel
// (bounded), within the token budget (mapBudget), drops the irrelevant ones and sorts
// the rest by score. It returns the partial answers and the communities it mapped (a
// prefix of comms). Wall time is about that of the slowest wave of calls, not their sum.
func (e *Engine) mapPhase(ctx context.Context, q string, comms []Community) ([]PartialAnswer, []Community, error) {
	terms := contentTerms(globalCue.ReplaceAllString(q, " "))
	for _, w := range genericWords {
		delete(terms, w)
	}
	if e.deps.LLM == nil {
		// Offline the map phase is free: no budget, no calls.
		out := make([]PartialAnswer, 0, len(comms))
		for _, c := range comms {
			out = append(out, extractiveMap(terms, c))
		}
		return keepRelevant(out, nil), comms, nil
	}
	out := make([]PartialAnswer, len(comms))
	errs := make([]error, len(comms))
	sem := make(chan struct{}, e.cfg.MapConcurrency)
	budget := e.newMapBudget(q, len(comms))
	var wg sync.WaitGroup
	inFlight, mapped := 0, 0
dispatch:
	for i, c := range comms {
		prompt := estimateTokens(mapSystem) + estimateTokens(mapPrompt(c, q))
		reserved := prompt + e.cfg.MapMaxTokens + perPartial
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
				budget.settle(reserved, prompt)
				return
			}
			out[i] = PartialAnswer{CommunityID: c.ID, Answer: strings.TrimSpace(res.Answer), Score: res.Score}
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
			e.log.WarnContext(ctx, "map call failed; community left out", "err", err)
		}
	}
	if failed > 0 && failed == mapped {
		return nil, nil, errors.Join(errs...)
	}
	return keepRelevant(out, errs), comms[:mapped], nil
}

// relevant reports whether a partial answer says anything: a positive score and not
// the "Not relevant" the map prompt asks for.
func relevant(p PartialAnswer) bool {
	return p.Score > 0 && !strings.EqualFold(strings.TrimSpace(p.Answer), "not relevant")
}

// keepRelevant drops failed (errs[i] != nil) and irrelevant partial answers and sorts
// the rest by score, best first.
func keepRelevant(out []PartialAnswer, errs []error) []PartialAnswer {
	kept := out[:0]
	for i, p := range out {
		if (errs == nil || errs[i] == nil) && relevant(p) {
			kept = append(kept, p)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].Score > kept[j].Score })
	return kept
}

// globalTopic is what a global question is about: the question without its global cue
// ("the main themes", "across the corpus") and generic words; the question itself when
// nothing else is left ("what are the main themes?" is about everything).
func globalTopic(q string) string {
	words := strings.Fields(globalCue.ReplaceAllString(q, " "))
	kept := words[:0]
	for _, w := range words {
		if !slices.Contains(genericWords, strings.ToLower(strings.Trim(w, ".,;:?!'\"()"))) {
			kept = append(kept, w)
		}
	}
	if len(contentTerms(strings.Join(kept, " "))) == 0 {
		return q
	}
	return strings.Join(kept, " ")
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
