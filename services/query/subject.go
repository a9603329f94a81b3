package query

import (
	"context"
	"fmt"
	"sort"

	"github.com/graphrag/graphrag/pkg/normalize"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// maxSubjectChunks bounds the chunks read to find the passages about the candidate
// entities: a hub's own document may be missed, which costs little (a hub says little
// about the question).
const (
	maxSubjectChunksPerEntity = 128
	maxSubjectChunks          = 4000
)

// subjectList is the second hop of a multi-hop question made explicit. A passage's
// subject is the entity its document is titled after (normalize.Subject). The list holds
// the passages about
//  1. the entities the question names (linked entities), best link first, then
//  2. the entities the best passages mention, best passage first,
//
// the second group ordered by how strongly the seed passages point at it (Σ 1/rank of
// the seeds that mention its subject), then by its own lexical rank. "Who directed the film shot in
// Leland, North Carolina in 1986?": the best passage, about Leland, mentions Maximum
// Overdrive; the passage about Maximum Overdrive names the director but shares almost no
// words with the question, so only this hop finds it. HippoRAG's walk reaches it too,
// but diluted among every other passage that mentions the film; the subject relation
// says which one is about it.
func (e *Engine) subjectList(ctx context.Context, corpus string, linked []linkedEntity, passages []passageSeed, lexical []vectorstore.Hit) (graphResult, error) {
	res := graphResult{paths: map[string][]string{}}
	type source struct {
		key  string
		from string // the passage that mentions the entity; "" for a linked entity
	}
	var sources []source
	seen := map[string]bool{}
	for _, l := range linked {
		if !seen[l.key] {
			seen[l.key] = true
			sources = append(sources, source{key: l.key})
		}
	}
	if len(passages) > 0 {
		ids := make([]string, len(passages))
		for i, p := range passages {
			ids[i] = p.id
		}
		mentions, err := e.deps.Graph.ChunkEntities(ctx, corpus, ids)
		if err != nil {
			return res, fmt.Errorf("reading the entities of the best passages: %w", err)
		}
		// A key may come again from a later passage: the passage about it is no hop
		// from itself but is one from another seed.
		for _, id := range ids {
			for _, k := range mentions[id] {
				sources = append(sources, source{key: k, from: id})
			}
		}
	}
	if len(sources) == 0 {
		return res, nil
	}
	var keys []string
	unique := map[string]bool{}
	for _, s := range sources {
		if !unique[s.key] {
			unique[s.key] = true
			keys = append(keys, s.key)
		}
	}
	ents, err := e.deps.Graph.Entities(ctx, corpus, keys)
	if err != nil {
		return res, fmt.Errorf("reading candidate subjects: %w", err)
	}
	chunksOf := map[string][]string{}
	for _, en := range ents {
		chunksOf[en.Key] = firstN(en.ChunkIDs, maxSubjectChunksPerEntity)
	}

	// The titles of the candidate chunks: those the lexical list holds, the rest read.
	title := map[string]string{}
	lexRank := map[string]int{}
	for i, h := range lexical {
		title[h.ID] = h.Record.Attrs[schema.ChunkTitle]
		lexRank[h.ID] = i + 1
	}
	var missing []string
	asked := map[string]bool{}
	for _, s := range sources {
		for _, c := range chunksOf[s.key] {
			if _, ok := title[c]; !ok && !asked[c] && len(missing) < maxSubjectChunks {
				asked[c] = true
				missing = append(missing, c)
			}
		}
	}
	if len(missing) > 0 {
		recs, err := e.deps.Vectors.Get(ctx, schema.Collection(corpus, schema.Chunks), missing)
		if err != nil {
			return res, fmt.Errorf("reading the titles of %d candidate passages: %w", len(missing), err)
		}
		for _, r := range recs {
			title[r.ID] = r.Attrs[schema.ChunkTitle]
		}
	}

	// Score each passage about a source entity: the question naming its subject puts it
	// in the first tier; otherwise each seed passage mentioning its subject adds 1/rank,
	// so an entity several good passages mention comes before one the first mentions in
	// passing. Ties go to the better lexical rank.
	type cand struct {
		id    string
		tier  int
		score float64
		path  []string
	}
	seedRank := map[string]int{}
	for i, p := range passages {
		seedRank[p.id] = i + 1
	}
	subjectOf := map[string]string{} // title → subject key, computed once
	cands := map[string]*cand{}
	for _, s := range sources {
		for _, c := range chunksOf[s.key] {
			t, ok := title[c]
			if !ok || t == "" || c == s.from {
				continue
			}
			sub, ok := subjectOf[t]
			if !ok {
				sub = normalize.Subject(t)
				subjectOf[t] = sub
			}
			if sub != s.key {
				continue
			}
			x := cands[c]
			if x == nil {
				x = &cand{id: c, tier: 1, path: []string{s.key}}
				cands[c] = x
			}
			if s.from == "" {
				x.tier = 0
			} else {
				x.score += 1 / float64(seedRank[s.from])
			}
		}
	}
	out := make([]*cand, 0, len(cands))
	for _, x := range cands {
		out = append(out, x)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.tier != b.tier {
			return a.tier < b.tier
		}
		if a.score != b.score {
			return a.score > b.score
		}
		ra, rb := lexRank[a.id], lexRank[b.id]
		if (ra > 0) != (rb > 0) {
			return ra > 0
		}
		if ra != rb {
			return ra < rb
		}
		return a.id < b.id
	})
	for i, x := range out {
		res.ids = append(res.ids, x.id)
		res.scores = append(res.scores, 1/float64(i+1))
		res.paths[x.id] = x.path
	}
	return res, nil
}
