package query

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// Engine answers questions. It is safe for concurrent use.
type Engine struct {
	cfg  Config
	deps Deps
	log  *slog.Logger
}

// New builds an engine.
func New(cfg Config, deps Deps) (*Engine, error) {
	if deps.Graph == nil || deps.Vectors == nil || deps.Embedder == nil {
		return nil, errors.New("query: graph store, vector store and embedder are required")
	}
	cfg = cfg.withDefaults(deps.OfflineEmbedder)
	if cfg.GraphRanking != RankPPR && cfg.GraphRanking != RankPath {
		return nil, fmt.Errorf("query: graph ranking %q is not %s or %s", cfg.GraphRanking, RankPPR, RankPath)
	}
	log := deps.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Engine{cfg: cfg, deps: deps, log: log.With("service", "query")}, nil
}

// Config returns the effective configuration.
func (e *Engine) Config() Config { return e.cfg }

// timer records phase durations in milliseconds.
type timer struct {
	start time.Time
	last  time.Time
	m     map[string]float64
}

func newTimer() *timer {
	now := time.Now()
	return &timer{start: now, last: now, m: map[string]float64{}}
}

func (t *timer) mark(phase string) {
	now := time.Now()
	t.m[phase] += float64(now.Sub(t.last).Microseconds()) / 1000
	t.last = now
}

func (t *timer) done() map[string]float64 {
	t.m["total"] = float64(time.Since(t.start).Microseconds()) / 1000
	return t.m
}

// retrieval is the internal result of local retrieval.
type retrieval struct {
	ctx    Context
	linked []linkedEntity
	qvec   []float32
}

// Retrieve runs local retrieval and returns the ranked context.
func (e *Engine) Retrieve(ctx context.Context, req Request) (Context, map[string]float64, error) {
	if err := req.Validate(); err != nil {
		return Context{}, nil, err
	}
	t := newTimer()
	r, err := e.retrieve(ctx, req, t)
	if err != nil {
		return Context{}, nil, err
	}
	return r.ctx, t.done(), nil
}

func (e *Engine) embedQuery(ctx context.Context, q string) ([]float32, error) {
	vecs, err := e.deps.Embedder.Embed(ctx, []string{q})
	if err != nil {
		return nil, fmt.Errorf("embedding the query: %w", err)
	}
	if len(vecs) != 1 {
		return nil, errors.New("embedding the query: no vector returned")
	}
	return vecs[0], nil
}

func (e *Engine) checkCorpus(ctx context.Context, corpus string) error {
	n, err := e.deps.Vectors.Count(ctx, schema.Collection(corpus, schema.Chunks))
	if errors.Is(err, vectorstore.ErrNotFound) || (err == nil && n == 0) {
		return fmt.Errorf("%w: %s", ErrUnknownCorpus, corpus)
	}
	if err != nil {
		return fmt.Errorf("reading corpus %s: %w", corpus, err)
	}
	return nil
}

func (e *Engine) retrieve(ctx context.Context, req Request, t *timer) (*retrieval, error) {
	if err := e.checkCorpus(ctx, req.Corpus); err != nil {
		return nil, err
	}
	topK := req.TopK
	if topK == 0 {
		topK = e.cfg.TopK
	}
	pool := max(e.cfg.Pool, topK)
	weights := e.cfg.Weights
	if req.Weights != nil {
		weights = *req.Weights
	}
	ranking := e.cfg.GraphRanking
	if req.GraphRanking != "" {
		ranking = req.GraphRanking
	}
	chunks := schema.Collection(req.Corpus, schema.Chunks)
	qvec, err := e.embedQuery(ctx, req.Query)
	if err != nil {
		return nil, err
	}
	t.mark("embed")

	// Dense and lexical lists (a list whose weight is zero is not computed).
	var dense, lexical []vectorstore.Hit
	if weights.Dense > 0 {
		if dense, err = e.deps.Vectors.Search(ctx, chunks, qvec, pool, vectorstore.Filter{}); err != nil {
			return nil, fmt.Errorf("dense search: %w", err)
		}
		t.mark("dense")
	}
	if weights.Lexical > 0 {
		lexical, err = e.deps.Vectors.SearchText(ctx, chunks, req.Query, pool, vectorstore.Filter{})
		if err != nil && !errors.Is(err, vectorstore.ErrUnsupported) {
			return nil, fmt.Errorf("lexical search: %w", err)
		}
		t.mark("lexical")
	}

	// Entity linking and the graph list.
	linked, err := e.link(ctx, req.Corpus, req.Query, qvec)
	if err != nil {
		return nil, err
	}
	t.mark("link")
	var gl graphResult
	if weights.Graph > 0 {
		var passages []passageSeed
		if ranking == RankPPR && e.cfg.PassageSeeds > 0 {
			passages = e.passageSeeds(weights, dense, lexical, e.cfg.PassageSeeds)
		}
		if gl, err = e.graphList(ctx, req.Corpus, linked, passages, pool, ranking); err != nil {
			return nil, err
		}
		t.mark("graph")
	} else {
		gl = graphResult{paths: map[string][]string{}}
	}
	sl := graphResult{paths: map[string][]string{}}
	if weights.Subject > 0 {
		passages := e.passageSeeds(weights, dense, lexical, e.cfg.SubjectPassages)
		if sl, err = e.subjectList(ctx, req.Corpus, req.Query, linked, passages, lexical); err != nil {
			return nil, err
		}
		t.mark("subject")
	}

	lists := []RankedList{
		hitsList("dense", weights.Dense, dense),
		hitsList("lexical", weights.Lexical, lexical),
		{Name: "graph", Weight: weights.Graph, IDs: gl.ids, Scores: gl.scores},
		{Name: "subject", Weight: weights.Subject, IDs: sl.ids, Scores: sl.scores},
	}
	fused := RRF(e.cfg.RRFK, lists...)
	if len(fused) > topK {
		fused = fused[:topK]
	}
	// Records we already hold from the dense and lexical hits; the rest (found only by
	// the graph) are fetched by id, never dropped.
	recs := map[string]vectorstore.Record{}
	for _, h := range append(append([]vectorstore.Hit{}, dense...), lexical...) {
		recs[h.ID] = h.Record
	}
	var missing []string
	for _, f := range fused {
		if _, ok := recs[f.ID]; !ok {
			missing = append(missing, f.ID)
		}
	}
	if len(missing) > 0 {
		got, err := e.deps.Vectors.Get(ctx, chunks, missing)
		if err != nil {
			return nil, fmt.Errorf("fetching %d graph-only chunks: %w", len(missing), err)
		}
		for _, r := range got {
			recs[r.ID] = r
		}
	}
	out := &retrieval{linked: linked, qvec: qvec}
	for _, f := range fused {
		r, ok := recs[f.ID]
		if !ok {
			continue // deleted since the graph was built
		}
		path := gl.paths[f.ID]
		if path == nil {
			path = sl.paths[f.ID]
		}
		out.ctx.Chunks = append(out.ctx.Chunks, Chunk{ID: f.ID, DocumentID: r.Attrs[schema.ChunkDocumentID], Title: r.Attrs[schema.ChunkTitle],
			Subject: r.Attrs[schema.ChunkSubject], Text: r.Text, Score: f.Score, Lists: f.Hits, GraphPath: path})
	}
	t.mark("fuse")

	out.ctx.Entities = gl.entities
	if err := e.evidence(ctx, req.Corpus, out.ctx.Entities, qvec); err != nil {
		return nil, err
	}
	rels, err := e.relationships(ctx, req.Corpus, linked)
	if err != nil {
		return nil, err
	}
	out.ctx.Relationships = rels
	t.mark("evidence")
	comms, err := e.communities(ctx, req.Corpus, qvec, req.Level, e.cfg.CommunityTopK)
	if err != nil {
		return nil, err
	}
	out.ctx.Communities = comms
	t.mark("communities")
	return out, nil
}

func hitsList(name string, w float64, hits []vectorstore.Hit) RankedList {
	l := RankedList{Name: name, Weight: w}
	for _, h := range hits {
		l.IDs = append(l.IDs, h.ID)
		l.Scores = append(l.Scores, h.Score)
	}
	return l
}

// evidence picks, for each linked entity, its own chunk that best matches the query: a
// dense search restricted to the chunks that mention it (node-centric context expansion).
func (e *Engine) evidence(ctx context.Context, corpus string, ents []Entity, qvec []float32) error {
	chunks := schema.Collection(corpus, schema.Chunks)
	keys := []string{}
	for _, en := range ents {
		if en.Distance == 0 {
			keys = append(keys, en.Key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	full, err := e.deps.Graph.Entities(ctx, corpus, keys)
	if err != nil {
		return fmt.Errorf("reading linked entities: %w", err)
	}
	best := map[string]string{}
	for _, en := range full {
		ids := en.ChunkIDs
		if len(ids) > 2000 {
			ids = ids[:2000]
		}
		if len(ids) == 0 {
			continue
		}
		hits, err := e.deps.Vectors.Search(ctx, chunks, qvec, 1, vectorstore.Filter{IDs: ids})
		if err != nil {
			return fmt.Errorf("searching the chunks of %q: %w", en.Key, err)
		}
		if len(hits) > 0 {
			best[en.Key] = hits[0].ID
		}
	}
	for i := range ents {
		ents[i].Evidence = best[ents[i].Key]
	}
	return nil
}

func (e *Engine) relationships(ctx context.Context, corpus string, linked []linkedEntity) ([]Relationship, error) {
	if len(linked) == 0 {
		return nil, nil
	}
	keys := make([]string, len(linked))
	for i, l := range linked {
		keys[i] = l.key
	}
	rels, err := e.deps.Graph.RelationshipsOf(ctx, corpus, keys, 20)
	if err != nil {
		return nil, fmt.Errorf("reading relationships: %w", err)
	}
	out := make([]Relationship, 0, len(rels))
	for _, r := range rels {
		ev := r.ChunkIDs
		if len(ev) > 3 {
			ev = ev[:3]
		}
		out = append(out, Relationship{Source: r.SourceKey, Target: r.TargetKey, Type: r.Type, Description: r.Description,
			Weight: r.Weight, Evidence: ev})
	}
	return out, nil
}

// communities returns the community reports most similar to the query, at a level when
// one is given (nil: any level).
func (e *Engine) communities(ctx context.Context, corpus string, qvec []float32, level *int, k int) ([]Community, error) {
	coll := schema.Collection(corpus, schema.Communities)
	f := vectorstore.Filter{}
	if level != nil {
		f.Attrs = map[string]string{schema.ReportLevel: strconv.Itoa(*level)}
	}
	hits, err := e.deps.Vectors.Search(ctx, coll, qvec, k, f)
	if errors.Is(err, vectorstore.ErrNotFound) {
		return nil, nil // no reports yet
	}
	if err != nil {
		return nil, fmt.Errorf("searching community reports: %w", err)
	}
	out := make([]Community, 0, len(hits))
	for _, h := range hits {
		out = append(out, communityOf(h.Record, h.Score))
	}
	return out, nil
}

func communityOf(r vectorstore.Record, score float64) Community {
	lvl, _ := strconv.Atoi(r.Attrs[schema.ReportLevel])
	rating, _ := strconv.ParseFloat(r.Attrs[schema.ReportRating], 64)
	summary := r.Text
	if i := strings.Index(summary, "\n\n"); i >= 0 {
		summary = summary[i+2:]
	}
	return Community{ID: r.ID, Level: lvl, Title: r.Attrs[schema.ReportTitle], Summary: summary, Rating: rating, Score: score}
}

// Stats counts what a corpus holds.
type Stats struct {
	Corpus        string `json:"corpus"`
	Chunks        int    `json:"chunks"`
	Entities      int    `json:"entities"`
	Relationships int    `json:"relationships"`
	Communities   int    `json:"communities"`
	Levels        int    `json:"levels"`
	Reports       int    `json:"reports"`
}

// Stats reads counts from both stores.
func (e *Engine) Stats(ctx context.Context, corpus string) (Stats, error) {
	if err := (&Request{Corpus: corpus, Query: "x"}).Validate(); err != nil {
		return Stats{}, err
	}
	if err := e.checkCorpus(ctx, corpus); err != nil {
		return Stats{}, err
	}
	gs, err := e.deps.Graph.Stats(ctx, corpus)
	if err != nil {
		return Stats{}, fmt.Errorf("reading graph stats: %w", err)
	}
	st := Stats{Corpus: corpus, Entities: gs.Entities, Relationships: gs.Relationships, Communities: gs.Communities, Levels: gs.Levels}
	if st.Chunks, err = e.deps.Vectors.Count(ctx, schema.Collection(corpus, schema.Chunks)); err != nil {
		return st, fmt.Errorf("counting chunks: %w", err)
	}
	if st.Reports, err = e.deps.Vectors.Count(ctx, schema.Collection(corpus, schema.Communities)); err != nil && !errors.Is(err, vectorstore.ErrNotFound) {
		return st, fmt.Errorf("counting reports: %w", err)
	}
	return st, nil
}

// Neighborhood is an entity with the entities and relationships around it.
type Neighborhood struct {
	Entity        Entity         `json:"entity"`
	Neighbors     []Entity       `json:"neighbors"`
	Relationships []Relationship `json:"relationships"`
}

// Explore returns the neighbourhood of the entity a name normalizes to.
func (e *Engine) Explore(ctx context.Context, corpus, name string, depth int) (Neighborhood, error) {
	if err := (&Request{Corpus: corpus, Query: name}).Validate(); err != nil {
		return Neighborhood{}, err
	}
	if depth < 1 || depth > 4 {
		return Neighborhood{}, badf("depth: %d is outside 1..4", depth)
	}
	key := normalizeName(name)
	en, err := e.deps.Graph.Entity(ctx, corpus, key)
	if errors.Is(err, graphstore.ErrNotFound) {
		return Neighborhood{}, fmt.Errorf("%w: entity %q (normalized %q) in corpus %s", ErrNotFound, name, key, corpus)
	}
	if err != nil {
		return Neighborhood{}, fmt.Errorf("reading entity: %w", err)
	}
	nb, err := e.deps.Graph.Neighborhood(ctx, corpus, []string{key}, depth, e.cfg.MaxNeighbors)
	if err != nil {
		return Neighborhood{}, fmt.Errorf("walking the graph: %w", err)
	}
	out := Neighborhood{Entity: entityOf(en, 0, "")}
	keys := []string{key}
	for _, n := range nb {
		out.Neighbors = append(out.Neighbors, entityOf(n.Entity, n.Distance, ""))
		keys = append(keys, n.Entity.Key)
	}
	rels, err := e.deps.Graph.RelationshipsAmong(ctx, corpus, keys)
	if err != nil {
		return out, fmt.Errorf("reading relationships: %w", err)
	}
	sort.SliceStable(rels, func(i, j int) bool { return rels[i].Weight > rels[j].Weight })
	for _, r := range rels {
		out.Relationships = append(out.Relationships, Relationship{Source: r.SourceKey, Target: r.TargetKey, Type: r.Type,
			Description: r.Description, Weight: r.Weight, Evidence: firstN(r.ChunkIDs, 3)})
	}
	return out, nil
}

// ErrNotFound is returned when an entity does not exist (the API answers 404).
var ErrNotFound = errors.New("not found")

func entityOf(en graphstore.Entity, dist int, by string) Entity {
	return Entity{Key: en.Key, Name: en.Name, Type: en.Type, Description: en.Description, PageRank: en.PageRank, Distance: dist, LinkedBy: by}
}

func firstN(xs []string, n int) []string {
	if len(xs) > n {
		return xs[:n]
	}
	return xs
}

// passageSeed is a passage that seeds the graph walk.
type passageSeed struct {
	id     string
	weight float64
}

// passageSeeds picks the best dense and lexical passages (fused by RRF with the
// request's weights) as extra walk
// seeds, with weight PassageSeedWeight / rank. HippoRAG 2 seeds its walk with passages
// too: the walk spreads from passages that already match the question to the entities
// they mention and on to the passages about those entities — the second hop of a
// multi-hop question.
func (e *Engine) passageSeeds(w Weights, dense, lexical []vectorstore.Hit, n int) []passageSeed {
	fused := RRF(e.cfg.RRFK, hitsList("dense", w.Dense, dense), hitsList("lexical", w.Lexical, lexical))
	var out []passageSeed
	for i, f := range fused {
		if i >= n {
			break
		}
		out = append(out, passageSeed{id: f.ID, weight: e.cfg.PassageSeedWeight / float64(i+1)})
	}
	return out
}
