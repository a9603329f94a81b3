package engine

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
func (e *Engine) graphList(ctx context.Context, corpus string, linked []linkedEntity, passages []passageSeed, pool int, ranking string, evenEntities bool) (graphResult, error) {
	res := graphResult{paths: map[string][]string{}}
	if len(linked) == 0 && len(passages) == 0 {
		return res, nil
	}
	all, err := e.reach(ctx, corpus, linked)
	if err != nil {
		return res, err
	}
	for _, r := range all {
		res.entities = append(res.entities, entityOf(r.ent, r.dist, r.linkedBy))
		// The path that explains a chunk is that of the closest entity naming it.
		for _, c := range firstN(r.ent.ChunkIDs, maxChunksPerEntity) {
			if _, ok := res.paths[c]; !ok {
				res.paths[c] = r.path
			}
		}
	}
	switch ranking {
	case RankPath:
		res.ids, res.scores = pathRanking(all)
	default:
		if res.ids, res.scores, err = e.pprRanking(ctx, corpus, all, linked, passages, evenEntities); err != nil {
			return res, err
		}
	}
	if len(res.ids) > pool {
		res.ids, res.scores = res.ids[:pool], res.scores[:pool]
	}
	return res, nil
}

// reached is an entity the walk reached, with its hop distance and the path to it.
type reached struct {
	ent      graphstore.Entity
	dist     int
	path     []string
	linkedBy string // how a linked entity (distance 0) was linked
}

// reach returns the linked entities (distance 0) then those the walk from them reaches,
// closest and highest PageRank first (the order Neighborhood returns).
func (e *Engine) reach(ctx context.Context, corpus string, linked []linkedEntity) ([]reached, error) {
	keys := make([]string, len(linked))
	for i, l := range linked {
		keys[i] = l.key
	}
	starts, err := e.deps.Graph.Entities(ctx, corpus, keys)
	if err != nil {
		return nil, fmt.Errorf("reading linked entities: %w", err)
	}
	nb, err := e.deps.Graph.Neighborhood(ctx, corpus, keys, e.cfg.Depth, e.cfg.MaxNeighbors)
	if err != nil {
		return nil, fmt.Errorf("walking the graph: %w", err)
	}
	by := map[string]string{}
	for _, l := range linked {
		by[l.key] = l.by
	}
	all := make([]reached, 0, len(starts)+len(nb))
	for _, s := range starts {
		all = append(all, reached{ent: s, dist: 0, path: []string{s.Key}, linkedBy: by[s.Key]})
	}
	for _, n := range nb {
		all = append(all, reached{ent: n.Entity, dist: n.Distance, path: n.Path})
	}
	return all, nil
}

// pathRanking ranks chunks by the distance of the entity naming them, then PageRank (the
// order of all), chunks of an entity in their stored order.
func pathRanking(all []reached) ([]string, []float64) {
	var ids []string
	var scores []float64
	seen := map[string]bool{}
	for _, r := range all {
		for _, c := range firstN(r.ent.ChunkIDs, maxChunksPerEntity) {
			if !seen[c] {
				seen[c] = true
				ids = append(ids, c)
				scores = append(scores, float64(r.dist))
			}
		}
	}
	return ids, scores
}

// pprRanking ranks chunks by personalized PageRank seeded with the linked entities and
// the seed passages. With evenEntities the linked entities share one unit of seed
// weight equally, as the text seeds share theirs (textSeeds): the question's entities
// and the text's passages then weigh the same in the walk.
func (e *Engine) pprRanking(ctx context.Context, corpus string, all []reached, linked []linkedEntity, passages []passageSeed, evenEntities bool) ([]string, []float64, error) {
	ents := make([]graphstore.Entity, len(all))
	for i, r := range all {
		ents[i] = r.ent
	}
	seeds := map[string]float64{}
	for _, l := range linked {
		// Specific entities (few chunks) say more about the question than hubs.
		seeds["e:"+l.key] = l.score / math.Log(math.E+float64(l.chunks))
		if evenEntities {
			seeds["e:"+l.key] = 1 / float64(len(linked))
		}
	}
	for _, p := range passages {
		seeds["c:"+p.id] += p.weight
	}
	return e.pprChunks(ctx, corpus, ents, passages, seeds)
}

// pprChunks ranks chunks by personalized PageRank over the local graph made of the
// reached entities, their relationships, and the chunks that mention them (HippoRAG's
// passage ranking): a chunk that mentions several entities close to the question's
// entities collects mass from all of them, which is what answers multi-hop questions.
func (e *Engine) pprChunks(ctx context.Context, corpus string, ents []graphstore.Entity, passages []passageSeed, seeds map[string]float64) ([]string, []float64, error) {
	// Seed passages and the entities they mention join the reached entities.
	more, err := e.passageEntities(ctx, corpus, ents, passages)
	if err != nil {
		return nil, nil, err
	}
	lg, err := e.localGraph(ctx, corpus, append(ents, more...), passages)
	if err != nil {
		return nil, nil, err
	}
	sv := map[int]float64{}
	for name, w := range seeds {
		if i, ok := lg.idx[name]; ok && w > 0 {
			sv[i] = w
		}
	}
	if len(sv) == 0 {
		return nil, nil, nil
	}
	pr, err := pagerank.Personalized(lg.g, sv, pagerank.WithDamping(e.cfg.Damping))
	if err != nil {
		return nil, nil, fmt.Errorf("personalized pagerank: %w", err)
	}
	ids, scores := chunkScores(lg.names, pr.Scores)
	return ids, scores, nil
}

// passageEntities returns the entities the seed passages mention that ents lacks.
func (e *Engine) passageEntities(ctx context.Context, corpus string, ents []graphstore.Entity, passages []passageSeed) ([]graphstore.Entity, error) {
	if len(passages) == 0 {
		return nil, nil
	}
	have := map[string]bool{}
	for _, en := range ents {
		have[en.Key] = true
	}
	ids := make([]string, len(passages))
	for i, p := range passages {
		ids[i] = p.id
	}
	ce, err := e.deps.Graph.ChunkEntities(ctx, corpus, ids)
	if err != nil {
		return nil, fmt.Errorf("reading the entities of seed passages: %w", err)
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
	if len(more) == 0 {
		return nil, nil
	}
	extra, err := e.deps.Graph.Entities(ctx, corpus, more)
	if err != nil {
		return nil, fmt.Errorf("reading passage entities: %w", err)
	}
	return extra, nil
}

// localGraph is the entity–chunk graph of one question; node names are "e:"+entity key
// and "c:"+chunk id.
type localGraph struct {
	g     *wgraph.Graph
	idx   map[string]int
	names []string
}

func (lg *localGraph) node(name string) int {
	if i, ok := lg.idx[name]; ok {
		return i
	}
	lg.idx[name] = len(lg.names)
	lg.names = append(lg.names, name)
	return len(lg.names) - 1
}

// localGraph links each entity to the chunks that mention it and to the other entities
// by their relationships; the seed passages are nodes even when no entity reaches them.
func (e *Engine) localGraph(ctx context.Context, corpus string, ents []graphstore.Entity, passages []passageSeed) (*localGraph, error) {
	lg := &localGraph{idx: map[string]int{}}
	keys := make([]string, len(ents))
	for i, en := range ents {
		keys[i] = en.Key
		lg.node("e:" + en.Key)
	}
	var edges []wgraph.Edge
	for _, en := range ents {
		u := lg.idx["e:"+en.Key]
		for _, c := range firstN(en.ChunkIDs, maxChunksPerEntity) {
			edges = append(edges, wgraph.Edge{U: u, V: lg.node("c:" + c), W: 1})
		}
	}
	for _, p := range passages {
		lg.node("c:" + p.id)
	}
	// Only the ends and weights are read: no description or chunk lists.
	rels, err := e.deps.Graph.RelationshipsAmong(ctx, corpus, keys, graphstore.Brief)
	if err != nil {
		return nil, fmt.Errorf("reading local relationships: %w", err)
	}
	for _, r := range rels {
		edges = append(edges, wgraph.Edge{U: lg.idx["e:"+r.SourceKey], V: lg.idx["e:"+r.TargetKey], W: math.Max(r.Weight, 0.1)})
	}
	if lg.g, err = wgraph.FromEdges(len(lg.names), edges); err != nil {
		return nil, fmt.Errorf("building the local graph: %w", err)
	}
	return lg, nil
}

// chunkScores returns the chunks with a positive score, best first, then by id.
func chunkScores(names []string, scores []float64) ([]string, []float64) {
	type cs struct {
		id string
		s  float64
	}
	var out []cs
	for i, n := range names {
		if strings.HasPrefix(n, "c:") && scores[i] > 0 {
			out = append(out, cs{n[2:], scores[i]})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].s != out[j].s {
			return out[i].s > out[j].s
		}
		return out[i].id < out[j].id
	})
	ids := make([]string, len(out))
	sc := make([]float64, len(out))
	for i, c := range out {
		ids[i], sc[i] = c.id, c.s
	}
	return ids, sc
}
