package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/words"
	"github.com/graphrag/graphrag/services/query/internal/phase"
	"github.com/graphrag/graphrag/services/query/question"
)

// pickLevel chooses the community level for a global question: the coarsest level that
// still has at least `want` reports, else the level with the most reports.
func (e *Engine) pickLevel(ctx context.Context, corpus string, want int) (int, error) {
	levels, err := e.deps.Graph.Levels(ctx, corpus)
	if err != nil {
		return 0, fmt.Errorf("reading the community level count: %w", err)
	}
	best, bestN := 0, -1
	for lvl := levels - 1; lvl >= 0; lvl-- {
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

// reports selects the community reports a global question is answered from (Reports).
func (e *Engine) reports(ctx context.Context, req Request, ranked bool, t *phase.Timer) ([]Community, error) {
	// When every mapped community costs a model call, MapTopK bounds the map phase (0 =
	// all at the level, pruned). Offline the map phase is free: map them all and let the
	// scores choose. A context-only request gets what a model would be mapped: the
	// ranked reports within MapTopK, not every report of the level.
	k := e.cfg.MapTopK
	all := k == 0 || !ranked
	candidates := 10000
	if !all {
		// More candidates than are mapped, for the lexical list to reorder.
		candidates = max(4*k, 64)
	}
	sctx, sel := t.Begin(ctx, "select")
	comms, err := e.reportCandidates(sctx, req, candidates)
	if err != nil {
		return nil, sel.End(err)
	}
	if ranked {
		// Every mapped report is a model call: rank them by the question's topic, dense
		// and lexical lists fused, prune the unrelated, and keep what the budget holds.
		comms = e.rankReports(req.Query, comms, all)
		if !all {
			comms = comms[:min(k, len(comms))]
		}
	}
	_ = sel.End(nil)
	return comms, nil
}

// reportCandidates returns up to n reports of the level a global question is answered
// at (the request's, else pickLevel's), the most similar to the question's topic first.
func (e *Engine) reportCandidates(ctx context.Context, req Request, n int) ([]Community, error) {
	if err := e.checkCorpus(ctx, req.Corpus); err != nil {
		return nil, err
	}
	// Reports are selected by what the question is about, not by how it asks for a
	// survey: "what are the main themes" matches every report alike.
	qvec, err := e.embedQuery(ctx, question.Topic(req.Query))
	if err != nil {
		return nil, err
	}
	var level int
	if req.Level != nil {
		level = *req.Level
	} else if level, err = e.pickLevel(ctx, req.Corpus, max(2, e.cfg.MapTopK)); err != nil {
		return nil, err
	}
	hits, err := e.selectReports(ctx, req.Corpus, qvec, level, n)
	if err != nil {
		return nil, err
	}
	comms := make([]Community, 0, len(hits))
	for _, h := range hits {
		comms = append(comms, CommunityOf(h.Record, h.Score))
	}
	return comms, nil
}

// selectReports returns up to k reports at level, the most similar to the question
// first (memberScores); without a query vector (a question of stop words only), the
// reports of the level's current communities, the best rated first.
func (e *Engine) selectReports(ctx context.Context, corpus string, qvec []float32, level, k int) ([]vectorstore.Hit, error) {
	// Only the reports of communities the graph holds now: a report of a replaced
	// community must never be mapped, even before the grapher's clean-up removes it.
	cs, err := e.deps.Graph.Communities(ctx, corpus, level)
	if err != nil {
		return nil, fmt.Errorf("reading the communities of level %d: %w", level, err)
	}
	return e.rankedReports(ctx, corpus, qvec, cs, k, true)
}

// reportEntityHits is how many of the entities most similar to the question rank the
// reports (memberScores). Offline global search on HotpotQA (docs/adr/0070) mapped
// reports holding 0.889 of the reference points with 200, 0.922 with 1,000 and 0.952
// with 2,000 (0.983 with report vectors, for a third more tokens); at the default
// -map-top-k 5, 0.349, 0.358, 0.358 (0.351).
const reportEntityHits = 2000

// memberScores scores each community of cs by the question's similarity to its members:
// the similarity of its member most similar to the question among the reportEntityHits
// entities nearest to it. A community with no member among them has no score. Reports
// have no vector of their own from the embedding model (ADR 0070): the entity vectors
// are the embedding of what a community is about.
func (e *Engine) memberScores(ctx context.Context, corpus string, qvec []float32, cs []graphstore.Community) (map[string]float64, error) {
	hits, err := e.deps.Vectors.Search(ctx, schema.Collection(corpus, schema.Entities), qvec, reportEntityHits, vectorstore.Filter{})
	if errors.Is(err, vectorstore.ErrNotFound) {
		return nil, nil // no entity embedded yet
	}
	if err != nil {
		return nil, fmt.Errorf("searching the entities of the communities: %w", err)
	}
	sim := make(map[string]float64, len(hits))
	for _, h := range hits {
		sim[h.ID] = h.Score
	}
	scores := map[string]float64{}
	for _, c := range cs {
		for _, m := range c.Members {
			s, ok := sim[m]
			if !ok {
				continue
			}
			if best, scored := scores[c.ID]; !scored || s > best {
				scores[c.ID] = s
			}
		}
	}
	return scores, nil
}

// rankedReports returns up to k reports of the communities cs: with a query vector,
// those of the communities memberScores scores, the best first, then (with all) the
// others by rating; without one, every report by rating. A community without a report
// written yet is left out.
func (e *Engine) rankedReports(ctx context.Context, corpus string, qvec []float32, cs []graphstore.Community, k int, all bool) ([]vectorstore.Hit, error) {
	if len(cs) == 0 || k <= 0 {
		return nil, nil
	}
	var scores map[string]float64
	if qvec != nil {
		var err error
		if scores, err = e.memberScores(ctx, corpus, qvec, cs); err != nil {
			return nil, err
		}
	}
	var unscored []string
	if all {
		for _, c := range cs {
			if _, ok := scores[c.ID]; !ok {
				unscored = append(unscored, c.ID)
			}
		}
	}
	return e.reportsByScore(ctx, corpus, unscored, scores, k, qvec != nil)
}

// nearestCommunities scores the communities (at level; -1: any) as memberScores does,
// by their member most similar to the question among the reportEntityHits entities
// nearest to it, without reading every community: it reads those entities' memberships
// best first, communityBatch at a time, and stops once k communities are scored and the
// next entity is less similar than the k-th (no later one can change the best k). Local
// search needs a few reports; reading the whole hierarchy with its member lists for them
// was most of a local search's time at 100k chunks (docs/benchmarks.md).
func (e *Engine) nearestCommunities(ctx context.Context, corpus string, qvec []float32, level, k int) (map[string]float64, error) {
	scores := map[string]float64{}
	read := 0 // hits whose memberships are read
	for n := communityBatch; ; n = min(8*n, reportEntityHits) {
		// A search returns whole records: asking for the 2,000 nearest to use a few
		// dozen was most of the time, so the search widens only when it must.
		hits, err := e.deps.Vectors.Search(ctx, schema.Collection(corpus, schema.Entities), qvec, n, vectorstore.Filter{})
		if errors.Is(err, vectorstore.ErrNotFound) {
			return nil, nil // no entity embedded yet
		}
		if err != nil {
			return nil, fmt.Errorf("searching the entities of the communities: %w", err)
		}
		for ; read < len(hits); read += communityBatch {
			batch := hits[read:min(read+communityBatch, len(hits))]
			if len(scores) >= k && batch[0].Score < kthScore(scores, k) {
				return scores, nil
			}
			if err := e.scoreMemberships(ctx, corpus, batch, level, scores); err != nil {
				return nil, err
			}
		}
		// Every entity a wider search adds is at most as similar as the last one read:
		// when that one is below the k-th community, the wider search cannot change the
		// best k, and it would read eight times the records.
		if len(hits) < n || n == reportEntityHits ||
			len(scores) >= k && hits[len(hits)-1].Score < kthScore(scores, k) {
			return scores, nil
		}
	}
}

// scoreMemberships gives each community (at level; -1: any) of the entities of hits,
// best first, that has no score yet the similarity of its first member among them.
func (e *Engine) scoreMemberships(ctx context.Context, corpus string, hits []vectorstore.Hit, level int, scores map[string]float64) error {
	keys := make([]string, len(hits))
	for i, h := range hits {
		keys[i] = h.ID
	}
	ents, err := e.deps.Graph.Entities(ctx, corpus, keys)
	if err != nil {
		return fmt.Errorf("reading the communities of the nearest entities: %w", err)
	}
	member := make(map[string][]string, len(ents))
	for _, en := range ents {
		member[en.Key] = en.Communities
	}
	for _, h := range hits {
		for lv, id := range member[h.ID] {
			if id == "" || (level >= 0 && lv != level) {
				continue
			}
			if _, ok := scores[id]; !ok {
				scores[id] = h.Score
			}
		}
	}
	return nil
}

// communityBatch is how many entities nearestCommunities reads at a time.
const communityBatch = 64

// kthScore returns the k-th highest of scores (k ≤ len(scores)).
func kthScore(scores map[string]float64, k int) float64 {
	vs := slices.Collect(maps.Values(scores))
	slices.SortFunc(vs, func(a, b float64) int { return cmp.Compare(b, a) })
	return vs[k-1]
}

// reportsByScore reads and ranks up to k reports: of the scored communities, the best
// k (by score, then id), then of the unscored ones by rating; with byScore false
// (no query vector) every report is ranked by rating. A community without a report
// written yet is left out.
func (e *Engine) reportsByScore(ctx context.Context, corpus string, unscored []string, scores map[string]float64, k int, byScore bool) ([]vectorstore.Hit, error) {
	ids := slices.Collect(maps.Keys(scores))
	slices.SortFunc(ids, func(a, b string) int { return cmp.Or(cmp.Compare(scores[b], scores[a]), cmp.Compare(a, b)) })
	if len(ids) >= k {
		ids = ids[:k] // enough scored communities: read only the best k reports
	} else {
		ids = append(ids, unscored...)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	recs, err := e.deps.Vectors.Get(ctx, schema.Collection(corpus, schema.Communities), ids)
	if errors.Is(err, vectorstore.ErrNotFound) {
		return nil, nil // no report written yet
	}
	if err != nil {
		return nil, fmt.Errorf("reading community reports: %w", err)
	}
	type ranked struct {
		hit    vectorstore.Hit
		scored bool
		rating float64
	}
	rs := make([]ranked, 0, len(recs))
	for _, r := range recs {
		score, scored := scores[r.ID]
		rating, _ := strconv.ParseFloat(r.Attrs[schema.ReportRating], 64)
		if !byScore {
			score = rating / 10
		}
		rs = append(rs, ranked{hit: vectorstore.Hit{Record: r, Score: score}, scored: scored, rating: rating})
	}
	// The scored first, by score; the others (score 0) by rating.
	slices.SortStableFunc(rs, func(a, b ranked) int {
		if a.scored != b.scored {
			if a.scored {
				return -1
			}
			return 1
		}
		if a.scored {
			return vectorstore.CompareHits(a.hit, b.hit)
		}
		return cmp.Or(cmp.Compare(b.rating, a.rating), cmp.Compare(a.hit.ID, b.hit.ID))
	})
	hits := make([]vectorstore.Hit, 0, min(k, len(rs)))
	for _, r := range rs[:min(k, len(rs))] {
		hits = append(hits, r.hit)
	}
	return hits, nil
}

// rankReports orders the candidate reports (comms, most similar first) for the map
// phase by Reciprocal Rank Fusion of their similarity (memberScores) and the share of the
// question's topic words (question.TopicTerms) their title and summary hold, as local search
// fuses its dense and lexical lists: a report naming what is asked ranks high even when
// a long summary dilutes its vector. With prune, a report far less similar than the
// best one (under half its similarity) that holds none of the words is left out.
func (e *Engine) rankReports(q string, comms []Community, prune bool) []Community {
	if len(comms) == 0 {
		return comms
	}
	terms := question.TopicTerms(q)
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
			lex[c.ID] = words.Overlap(terms, c.Title+" "+c.Summary) / total
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
