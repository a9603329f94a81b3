package engine

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/services/query/internal/phase"
)

// The modes are compositions of three searches the engine already runs, each in one
// place: local retrieval (retrieve: the text, graph and subject lists fused, the linked
// entities, their relationships, the most similar reports), the text lists alone (the
// same retrieval with plan.textOnly), and global search's report selection
// (reportCandidates, ranked by rankReports):
//
//   - naive: the text lists alone;
//   - local: local retrieval;
//   - hybrid: local retrieval, its reports joined by the reports global search ranks
//     first for the question (topReports);
//   - mix: hybrid, its passages the local ones and the naive ones fused by RRF;
//   - drift (Drift): topReports as the primer, the caller's follow-up questions from it,
//     a local retrieval for the question and each follow-up, joined (unionOf: the
//     question's best passages first).
//
// Global search's report selection alone is Reports.

// gather assembles the context of a retrieval mode; linked says whether entity linking
// linked an entity of the graph to the question.
func (e *Engine) gather(ctx context.Context, req Request, t *phase.Timer) (found Retrieved, linked bool, err error) {
	switch req.Mode {
	case "", ModeNaive, ModeLocal:
		r, err := e.retrieve(ctx, req, t) // planOf runs naive as text only
		if err != nil {
			return Retrieved{}, false, err
		}
		return r.found, len(r.linked) > 0, nil
	case ModeHybrid, ModeMix:
		return e.hybrid(ctx, req, t)
	}
	return Retrieved{}, false, BadRequestf("mode: %q is not one of the modes", req.Mode)
}

// hybrid is local retrieval with the reports global search ranks first added to its
// context; for mix, its passages are also fused with the text lists' own ranking (the
// naive passages), so a passage the text lists rank high is not crowded out by the
// graph's.
func (e *Engine) hybrid(ctx context.Context, req Request, t *phase.Timer) (Retrieved, bool, error) {
	r, err := e.retrieve(ctx, req, t)
	if err != nil {
		return Retrieved{}, false, err
	}
	found := r.found
	if req.Mode == ModeMix {
		p := r.p
		p.weights = textWeights(p.weights)
		mctx, ph := t.Begin(ctx, "mix")
		naive, err := e.fuse(mctx, p, r.s, graphResult{}, graphResult{})
		if ph.End(err) != nil {
			return Retrieved{}, false, err
		}
		found.Chunks = fuseChunks(e.cfg.RRFK, p.topK, found.Chunks, naive)
	}
	rctx, ph := t.Begin(ctx, "reports")
	reports, err := e.topReports(rctx, req)
	if ph.End(err) != nil {
		return Retrieved{}, false, err
	}
	found.Communities = joinCommunities(found.Communities, reports)
	return found, len(r.linked) > 0, nil
}

// FollowUpWriter writes the follow-up questions of a drift retrieval: at most n, from
// the community reports ranked first for the question (the primer, best first) and
// keyEntities, the names of the top report's members, most central first.
type FollowUpWriter func(ctx context.Context, question string, primer []Community, keyEntities []string, n int) []string

// drift retrieves in the manner of DRIFT search: the reports global search ranks first
// (the primer) and the key entities of the first are given to write, which returns the
// follow-up questions to ask (at most DriftFollowUps); a local retrieval is run for the
// question and each follow-up, and their contexts are joined into one (unionOf), the
// primer first among its reports.
func (e *Engine) drift(ctx context.Context, req Request, write FollowUpWriter, t *phase.Timer) (Retrieved, []string, error) {
	pctx, ph := t.Begin(ctx, "primer")
	primer, err := e.topReports(pctx, req)
	var keys []string
	if err == nil && len(primer) > 0 {
		keys, err = e.keyEntities(pctx, req.Corpus, primer[0], e.cfg.DriftFollowUps)
	}
	if ph.End(err) != nil {
		return Retrieved{}, nil, err
	}
	fctx, ph := t.Begin(ctx, "follow_ups")
	followUps := write(fctx, req.Query, primer, keys, e.cfg.DriftFollowUps)
	_ = ph.End(nil)
	found := make([]Retrieved, 0, 1+len(followUps))
	for _, q := range append([]string{req.Query}, followUps...) {
		sub := req
		sub.Query, sub.Mode = q, ModeLocal
		r, err := e.retrieve(ctx, sub, t)
		if err != nil {
			return Retrieved{}, nil, fmt.Errorf("searching %q: %w", q, err)
		}
		found = append(found, r.found)
	}
	topK := req.TopK
	if topK == 0 {
		topK = e.cfg.TopK
	}
	_, ph = t.Begin(ctx, "union")
	union := unionOf(e.cfg.RRFK, topK, found)
	union.Communities = joinCommunities(primer, union.Communities)
	_ = ph.End(nil)
	return union, followUps, nil
}

// topReports are the CommunityTopK reports global search ranks first for the question
// (its topic's dense and lexical lists fused, the unrelated pruned), at the level it
// would map.
func (e *Engine) topReports(ctx context.Context, req Request) ([]Community, error) {
	k := e.cfg.CommunityTopK
	comms, err := e.reportCandidates(ctx, req, max(4*k, 64))
	if err != nil {
		return nil, err
	}
	comms = e.rankReports(req.Query, comms, true)
	return comms[:min(k, len(comms))], nil
}

// keyEntities are the names of at most n members of community c, the most central
// (PageRank, then mentions) first.
func (e *Engine) keyEntities(ctx context.Context, corpus string, c Community, n int) ([]string, error) {
	cs, err := e.deps.Graph.Communities(ctx, corpus, c.Level)
	if err != nil {
		return nil, fmt.Errorf("reading the communities of level %d: %w", c.Level, err)
	}
	i := slices.IndexFunc(cs, func(gc graphstore.Community) bool { return gc.ID == c.ID })
	if i < 0 || len(cs[i].Members) == 0 {
		return nil, nil
	}
	ents, err := e.deps.Graph.Entities(ctx, corpus, cs[i].Members, graphstore.Brief)
	if err != nil {
		return nil, fmt.Errorf("reading the members of community %s: %w", c.ID, err)
	}
	slices.SortFunc(ents, func(a, b graphstore.Entity) int {
		return cmp.Or(cmp.Compare(b.PageRank, a.PageRank), cmp.Compare(b.MentionCount, a.MentionCount), cmp.Compare(a.Key, b.Key))
	})
	out := make([]string, 0, n)
	for _, en := range ents[:min(n, len(ents))] {
		out = append(out, en.Name)
	}
	return out, nil
}

// fuseChunks fuses ranked passage lists by RRF with equal weights and returns the best
// topK, each with its record from the first list that holds it and its fused score.
func fuseChunks(k float64, topK int, lists ...[]Chunk) []Chunk {
	byID := map[string]Chunk{}
	ranked := make([]RankedList, 0, len(lists))
	for i, l := range lists {
		rl := RankedList{Name: fmt.Sprint(i), Weight: 1}
		for _, c := range l {
			rl.IDs = append(rl.IDs, c.ID)
			if _, ok := byID[c.ID]; !ok {
				byID[c.ID] = c
			}
		}
		ranked = append(ranked, rl)
	}
	fused := RRF(k, ranked...)
	out := make([]Chunk, 0, min(topK, len(fused)))
	for _, f := range fused[:min(topK, len(fused))] {
		c := byID[f.ID]
		c.Score = f.Score
		out = append(out, c)
	}
	return out
}

// unionOf joins the contexts of a drift search's local retrievals, the question's first:
// their entities, relationships and reports each once, in order of first appearance, and
// topK passages (driftPassages).
func unionOf(k float64, topK int, rs []Retrieved) Retrieved {
	var out Retrieved
	seenEnt, seenRel := map[string]bool{}, map[string]bool{}
	var followUps [][]Chunk
	for i, r := range rs {
		if i > 0 {
			followUps = append(followUps, r.Chunks)
		}
		for _, en := range r.Entities {
			if !seenEnt[en.Key] {
				seenEnt[en.Key] = true
				out.Entities = append(out.Entities, en)
			}
		}
		for _, rel := range r.Relationships {
			key := rel.Source + "\x00" + rel.Type + "\x00" + rel.Target
			if !seenRel[key] {
				seenRel[key] = true
				out.Relationships = append(out.Relationships, rel)
			}
		}
		out.Communities = joinCommunities(out.Communities, r.Communities)
	}
	if len(rs) > 0 {
		out.Chunks = driftPassages(k, topK, rs[0].Chunks, followUps)
	}
	return out
}

// driftPassages are the passages of a drift answer: the first half of topK (rounded up)
// from the question's own search, then the follow-ups' passages fused by RRF, then the
// rest of the question's, each once, at most topK. Fusing the question's list with the
// follow-ups' by RRF instead let the follow-ups outvote it: they name entities of one
// community, so their lists agree with each other on passages the question does not ask
// about (HotpotQA offline, R@5 0.370 against 0.950 for local search; ADR 0062).
func driftPassages(k float64, topK int, question []Chunk, followUps [][]Chunk) []Chunk {
	out := make([]Chunk, 0, topK)
	seen := map[string]bool{}
	add := func(cs []Chunk) {
		for _, c := range cs {
			if len(out) == topK {
				return
			}
			if !seen[c.ID] {
				seen[c.ID] = true
				out = append(out, c)
			}
		}
	}
	half := (topK + 1) / 2
	add(question[:min(half, len(question))])
	add(fuseChunks(k, topK, followUps...))
	add(question)
	return out
}

// joinCommunities appends to a the reports of b it does not hold.
func joinCommunities(a, b []Community) []Community {
	out := slices.Clone(a)
	for _, c := range b {
		if !slices.ContainsFunc(out, func(o Community) bool { return o.ID == c.ID }) {
			out = append(out, c)
		}
	}
	return out
}
