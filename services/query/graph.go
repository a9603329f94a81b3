package query

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/pagerank"
	"github.com/graphrag/graphrag/pkg/wgraph"
)

// maxChunksPerEntity bounds how many chunks of one (hub) entity enter the graph list.
const maxChunksPerEntity = 64

// graphResult is the graph list with what explains it.
type graphResult struct {
	ids      []string
	scores   []float64
	paths    map[string][]string // chunk → entity path that led to it
	entities []Entity            // linked (distance 0) then traversed entities
}

// graphList walks the graph from the linked entities and ranks the chunks that name the
// entities it reaches.
func (e *Engine) graphList(ctx context.Context, corpus string, linked []linkedEntity, passages []passageSeed, pool int, ranking string) (graphResult, error) {
	res := graphResult{paths: map[string][]string{}}
	if len(linked) == 0 && len(passages) == 0 {
		return res, nil
	}
	keys := make([]string, len(linked))
	for i, l := range linked {
		keys[i] = l.key
	}
	starts, err := e.deps.Graph.Entities(ctx, corpus, keys)
	if err != nil {
		return res, fmt.Errorf("reading linked entities: %w", err)
	}
	nb, err := e.deps.Graph.Neighborhood(ctx, corpus, keys, e.cfg.Depth, e.cfg.MaxNeighbors)
	if err != nil {
		return res, fmt.Errorf("walking the graph: %w", err)
	}
	by := map[string]string{}
	for _, l := range linked {
		by[l.key] = l.by
	}
	type reached struct {
		ent  graphstore.Entity
		dist int
		path []string
	}
	all := make([]reached, 0, len(starts)+len(nb))
	for _, s := range starts {
		all = append(all, reached{s, 0, []string{s.Key}})
		res.entities = append(res.entities, entityOf(s, 0, by[s.Key]))
	}
	for _, n := range nb {
		all = append(all, reached{n.Entity, n.Distance, n.Path})
		res.entities = append(res.entities, entityOf(n.Entity, n.Distance, ""))
	}
	// The path that explains a chunk is that of the closest entity naming it.
	for _, r := range all {
		for _, c := range firstN(r.ent.ChunkIDs, maxChunksPerEntity) {
			if _, ok := res.paths[c]; !ok {
				res.paths[c] = r.path
			}
		}
	}

	switch ranking {
	case RankPath:
		// By distance, then PageRank (the order Neighborhood returns), chunks of an
		// entity in their stored order.
		seen := map[string]bool{}
		for _, r := range all {
			for _, c := range firstN(r.ent.ChunkIDs, maxChunksPerEntity) {
				if !seen[c] {
					seen[c] = true
					res.ids = append(res.ids, c)
					res.scores = append(res.scores, float64(r.dist))
				}
			}
		}
	default:
		ents := make([]graphstore.Entity, len(all))
		for i, r := range all {
			ents[i] = r.ent
		}
		seeds := map[string]float64{}
		for _, l := range linked {
			// Specific entities (few chunks) say more about the question than hubs.
			seeds["e:"+l.key] = l.score / math.Log(math.E+float64(l.chunks))
		}
		for _, p := range passages {
			seeds["c:"+p.id] += p.weight
		}
		ids, scores, err := e.pprChunks(ctx, corpus, ents, passages, seeds)
		if err != nil {
			return res, err
		}
		res.ids, res.scores = ids, scores
	}
	if len(res.ids) > pool {
		res.ids, res.scores = res.ids[:pool], res.scores[:pool]
	}
	return res, nil
}

// pprChunks ranks chunks by personalized PageRank over the local graph made of the
// reached entities, their relationships, and the chunks that mention them (HippoRAG's
// passage ranking): a chunk that mentions several entities close to the question's
// entities collects mass from all of them, which is what answers multi-hop questions.
func (e *Engine) pprChunks(ctx context.Context, corpus string, ents []graphstore.Entity, passages []passageSeed, seeds map[string]float64) ([]string, []float64, error) {
	idx := map[string]int{}
	var names []string
	node := func(name string) int {
		if i, ok := idx[name]; ok {
			return i
		}
		idx[name] = len(names)
		names = append(names, name)
		return len(names) - 1
	}
	// Seed passages and the entities they mention join the reached entities.
	have := map[string]bool{}
	for _, en := range ents {
		have[en.Key] = true
	}
	if len(passages) > 0 {
		ids := make([]string, len(passages))
		for i, p := range passages {
			ids[i] = p.id
		}
		ce, err := e.deps.Graph.ChunkEntities(ctx, corpus, ids)
		if err != nil {
			return nil, nil, fmt.Errorf("reading the entities of seed passages: %w", err)
		}
		var more []string
		for _, id := range ids {
			for _, k := range ce[id] {
				if !have[k] {
					have[k] = true
					more = append(more, k)
				}
			}
		}
		if len(more) > 0 {
			extra, err := e.deps.Graph.Entities(ctx, corpus, more)
			if err != nil {
				return nil, nil, fmt.Errorf("reading passage entities: %w", err)
			}
			ents = append(ents, extra...)
		}
	}
	keys := make([]string, len(ents))
	for i, en := range ents {
		keys[i] = en.Key
		node("e:" + en.Key)
	}
	var edges []wgraph.Edge
	for _, en := range ents {
		u := idx["e:"+en.Key]
		for _, c := range firstN(en.ChunkIDs, maxChunksPerEntity) {
			edges = append(edges, wgraph.Edge{U: u, V: node("c:" + c), W: 1})
		}
	}
	for _, p := range passages {
		node("c:" + p.id)
	}
	rels, err := e.deps.Graph.RelationshipsAmong(ctx, corpus, keys)
	if err != nil {
		return nil, nil, fmt.Errorf("reading local relationships: %w", err)
	}
	for _, r := range rels {
		edges = append(edges, wgraph.Edge{U: idx["e:"+r.SourceKey], V: idx["e:"+r.TargetKey], W: math.Max(r.Weight, 0.1)})
	}
	g, err := wgraph.FromEdges(len(names), edges)
	if err != nil {
		return nil, nil, fmt.Errorf("building the local graph: %w", err)
	}
	sv := map[int]float64{}
	for name, w := range seeds {
		if i, ok := idx[name]; ok && w > 0 {
			sv[i] = w
		}
	}
	if len(sv) == 0 {
		return nil, nil, nil
	}
	pr, err := pagerank.Personalized(g, sv, pagerank.WithDamping(e.cfg.Damping))
	if err != nil {
		return nil, nil, fmt.Errorf("personalized pagerank: %w", err)
	}
	type cs struct {
		id string
		s  float64
	}
	var out []cs
	for i, n := range names {
		if strings.HasPrefix(n, "c:") && pr.Scores[i] > 0 {
			out = append(out, cs{n[2:], pr.Scores[i]})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].s != out[j].s {
			return out[i].s > out[j].s
		}
		return out[i].id < out[j].id
	})
	ids := make([]string, len(out))
	scores := make([]float64, len(out))
	for i, c := range out {
		ids[i], scores[i] = c.id, c.s
	}
	return ids, scores, nil
}
