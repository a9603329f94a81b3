package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"

	"golang.org/x/sync/errgroup"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/services/query/internal/phase"
)

// Engine retrieves the context of questions. It is safe for concurrent use.
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
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	if deps.Entities == nil {
		deps.Entities = ProperNounEntities{}
	}
	log := deps.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Engine{cfg: cfg, deps: deps, log: log.With("service", "query")}, nil
}

// Config returns the effective configuration.
func (e *Engine) Config() Config { return e.cfg }

// retrieval is the internal result of local retrieval.
type retrieval struct {
	found  Retrieved
	linked []linkedEntity
	qvec   []float32
	p      plan      // what was asked
	s      *searched // the first step's lists, which mix fuses again as text only
}

// embedQuery embeds the question. It returns nil, not an error, when the embedding has
// no direction (the offline embedder drops stop words, so "What is this about?" embeds
// to the zero vector): cosine similarity is undefined for it and the stores refuse it,
// so every dense search is skipped and the question is answered from what remains (the
// lexical list, exact entity names, the community reports by rating).
func (e *Engine) embedQuery(ctx context.Context, q string) ([]float32, error) {
	vecs, err := e.deps.Embedder.Embed(ctx, []string{q})
	if err != nil {
		return nil, fmt.Errorf("embedding the query: %w", err)
	}
	if len(vecs) != 1 {
		return nil, errors.New("embedding the query: no vector returned")
	}
	if !hasDirection(vecs[0]) {
		e.log.DebugContext(ctx, "the question embeds to the zero vector; dense searches skipped")
		return nil, nil
	}
	return vecs[0], nil
}

// hasDirection reports whether v has a non-zero, finite norm: a vector the stores can
// compare by cosine.
func hasDirection(v []float32) bool {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	return sum > 0 && !math.IsInf(sum, 0) && !math.IsNaN(sum)
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

// retrieve runs local retrieval in four steps; within a step, the searches that do not
// need each other's results run concurrently, so a step takes about as long as its
// slowest search, not their sum.
func (e *Engine) retrieve(ctx context.Context, req Request, t *phase.Timer) (*retrieval, error) {
	if err := e.checkCorpus(ctx, req.Corpus); err != nil {
		return nil, err
	}
	p, err := e.planOf(req)
	if err != nil {
		return nil, err
	}
	s, err := e.search(ctx, p, t)
	if err != nil {
		return nil, err
	}
	gl, sl, err := e.graphLists(ctx, p, s, t)
	if err != nil {
		return nil, err
	}
	out := &retrieval{linked: s.linked, qvec: s.qvec, p: p, s: s}
	fctx, ph := t.Begin(ctx, "fuse")
	if out.found.Chunks, err = e.fuse(fctx, p, s, gl, sl); ph.End(err) != nil {
		return nil, err
	}
	out.found.Entities = gl.entities
	ectx, ph := t.Begin(ctx, "evidence")
	if out.found.Relationships, err = e.explain(ectx, p.corpus, s, out.found.Entities); ph.End(err) != nil {
		return nil, err
	}
	out.found.Communities = s.communities
	return out, nil
}

// plan is what one request asks of retrieval: the configuration with the request's
// overrides applied.
type plan struct {
	corpus, query string
	topK, pool    int
	weights       Weights
	ranking       string
	level         *int
	// textOnly (naive mode) runs the text lists alone: no entity linking, graph walk,
	// subject list, relationship or community report.
	textOnly bool
}

func (e *Engine) planOf(req Request) (plan, error) {
	p := plan{corpus: req.Corpus, query: req.Query, topK: req.TopK, weights: e.cfg.Weights, ranking: e.cfg.GraphRanking, level: req.Level}
	if p.topK == 0 {
		p.topK = e.cfg.TopK
	}
	p.pool = max(e.cfg.Pool, p.topK)
	if req.Weights != nil {
		p.weights = *req.Weights
	}
	if req.GraphRanking != "" {
		p.ranking = req.GraphRanking
	}
	if req.Mode == ModeNaive {
		p.textOnly = true
		p.weights = textWeights(p.weights)
		if p.weights == (Weights{}) {
			if req.Weights != nil {
				return p, BadRequestf("weights: naive mode ranks by the dense and lexical lists; at least one must be positive")
			}
			p.weights.Lexical = 1 // configured without text lists: BM25
		}
	}
	return p, nil
}

// textWeights keeps the weights of the text lists (dense, lexical) of w.
func textWeights(w Weights) Weights { return Weights{Dense: w.Dense, Lexical: w.Lexical} }

// searched holds the results of the first step, the searches that need only the
// question and its embedding.
type searched struct {
	qvec           []float32
	dense, lexical []vectorstore.Hit
	linked         []linkedEntity
	communities    []Community
}

// search runs the first step: the lexical search (which needs no vector) alongside the
// query's embedding, then the dense search, entity linking and the community report
// search, which need only the embedding. A list whose weight is zero is not computed.
// Each search records its own duration under its phase name.
func (e *Engine) search(ctx context.Context, p plan, t *phase.Timer) (*searched, error) {
	s := &searched{}
	chunks := schema.Collection(p.corpus, schema.Chunks)
	g, gctx := errgroup.WithContext(ctx)
	if p.weights.Lexical > 0 {
		g.Go(func() error {
			return t.Timed(gctx, "lexical", func(gctx context.Context) error {
				hits, err := e.deps.Vectors.SearchText(gctx, chunks, p.query, p.pool, vectorstore.Filter{})
				if err != nil && !errors.Is(err, vectorstore.ErrUnsupported) {
					return fmt.Errorf("lexical search: %w", err)
				}
				s.lexical = hits
				return nil
			})
		})
	}
	g.Go(func() error {
		if p.textOnly && p.weights.Dense == 0 {
			return nil // nothing needs the question's vector
		}
		err := t.Timed(gctx, "embed", func(gctx context.Context) (err error) {
			s.qvec, err = e.embedQuery(gctx, p.query)
			return err
		})
		if err != nil {
			return err
		}
		// Go from inside a running member of the group is safe: Wait cannot return first.
		if p.weights.Dense > 0 && s.qvec != nil {
			g.Go(func() error {
				return t.Timed(gctx, "dense", func(gctx context.Context) (err error) {
					if s.dense, err = e.deps.Vectors.Search(gctx, chunks, s.qvec, p.pool, vectorstore.Filter{}); err != nil {
						return fmt.Errorf("dense search: %w", err)
					}
					return nil
				})
			})
		}
		if p.textOnly {
			return nil
		}
		g.Go(func() error {
			return t.Timed(gctx, "link", func(gctx context.Context) (err error) {
				s.linked, err = e.link(gctx, p.corpus, p.query, s.qvec)
				return err
			})
		})
		g.Go(func() error {
			return t.Timed(gctx, "communities", func(gctx context.Context) (err error) {
				s.communities, err = e.communities(gctx, p.corpus, s.qvec, p.level, e.cfg.CommunityTopK)
				return err
			})
		})
		return nil
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return s, nil
}

// graphLists runs the second step: the graph list and the subject list, each from the
// linked entities and the best dense and lexical passages, concurrently. A list whose
// weight is zero is empty.
func (e *Engine) graphLists(ctx context.Context, p plan, s *searched, t *phase.Timer) (gl, sl graphResult, err error) {
	gl = graphResult{paths: map[string][]string{}}
	sl = graphResult{paths: map[string][]string{}}
	g, gctx := errgroup.WithContext(ctx)
	if p.weights.Graph > 0 {
		g.Go(func() error {
			return t.Timed(gctx, "graph", func(gctx context.Context) (err error) {
				var passages []passageSeed
				linked, carries := s.linked, p.walkCarriesText(e.cfg, s)
				switch {
				case carries:
					passages = e.textSeeds(p.weights, s.dense, s.lexical, p.pool)
					linked = walkEntities(s.linked)
				case p.ranking == RankPPR && e.cfg.PassageSeeds > 0:
					passages = e.passageSeeds(p.weights, s.dense, s.lexical, e.cfg.PassageSeeds)
				}
				gl, err = e.graphList(gctx, p.corpus, linked, passages, p.pool, p.ranking, carries)
				return err
			})
		})
	}
	if p.weights.Subject > 0 {
		g.Go(func() error {
			return t.Timed(gctx, "subject", func(gctx context.Context) (err error) {
				passages := e.passageSeeds(p.weights, s.dense, s.lexical, e.cfg.SubjectPassages)
				sl, err = e.subjectList(gctx, p.corpus, p.query, s.linked, passages, s.lexical)
				return err
			})
		})
	}
	if err := g.Wait(); err != nil {
		return gl, sl, err
	}
	return gl, sl, nil
}

// fuse fuses the lists and returns the best topK chunks with their records: those the
// dense and lexical hits carry, the rest (found only by the graph) fetched by id, never
// dropped. When the walk carries the text lists (walkCarriesText), they do not vote
// again: FuseWalk; otherwise the four lists fuse by FuseText.
func (e *Engine) fuse(ctx context.Context, p plan, s *searched, gl, sl graphResult) ([]Chunk, error) {
	text := []RankedList{
		hitsList("dense", p.weights.Dense, s.dense),
		hitsList("lexical", p.weights.Lexical, s.lexical),
	}
	structural := []RankedList{
		{Name: "graph", Weight: p.weights.Graph, IDs: gl.ids, Scores: gl.scores},
		{Name: "subject", Weight: p.weights.Subject, IDs: sl.ids, Scores: sl.scores},
	}
	var fused []Fused
	if p.walkCarriesText(e.cfg, s) {
		fused = FuseWalk(e.cfg.RRFK, text, structural...)
	} else {
		fused = FuseText(e.cfg.RRFK, text, structural...)
	}
	if len(fused) > p.topK {
		fused = fused[:p.topK]
	}
	recs, err := e.chunkRecords(ctx, p.corpus, fused, s)
	if err != nil {
		return nil, err
	}
	var out []Chunk
	for _, f := range fused {
		r, ok := recs[f.ID]
		if !ok {
			continue // deleted since the graph was built
		}
		path := gl.paths[f.ID]
		if path == nil {
			path = sl.paths[f.ID]
		}
		out = append(out, Chunk{ID: f.ID, DocumentID: r.Attrs[schema.ChunkDocumentID], Title: r.Attrs[schema.ChunkTitle],
			Section: r.Attrs[schema.ChunkSection], Subject: r.Attrs[schema.ChunkSubject], Text: r.Text, Score: f.Score, Lists: f.Hits, GraphPath: path})
	}
	return out, nil
}

// chunkRecords returns the records of the fused chunks: those the dense and lexical
// hits hold, and the others read by id.
func (e *Engine) chunkRecords(ctx context.Context, corpus string, fused []Fused, s *searched) (map[string]vectorstore.Record, error) {
	recs := map[string]vectorstore.Record{}
	for _, hits := range [][]vectorstore.Hit{s.dense, s.lexical} {
		for _, h := range hits {
			recs[h.ID] = h.Record
		}
	}
	var missing []string
	for _, f := range fused {
		if _, ok := recs[f.ID]; !ok {
			missing = append(missing, f.ID)
		}
	}
	if len(missing) == 0 {
		return recs, nil
	}
	got, err := e.deps.Vectors.Get(ctx, schema.Collection(corpus, schema.Chunks), missing)
	if err != nil {
		return nil, fmt.Errorf("fetching %d graph-only chunks: %w", len(missing), err)
	}
	for _, r := range got {
		recs[r.ID] = r
	}
	return recs, nil
}

// explain runs the last step: the evidence passage of each linked entity (written into
// ents) and the relationships of the linked entities, concurrently.
func (e *Engine) explain(ctx context.Context, corpus string, s *searched, ents []Entity) ([]Relationship, error) {
	var rels []Relationship
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return e.evidence(gctx, corpus, ents, s.qvec) })
	g.Go(func() (err error) {
		rels, err = e.relationships(gctx, corpus, s.linked)
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return rels, nil
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
	if len(keys) == 0 || qvec == nil {
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

// communities returns the community reports most similar to the query (scored as
// memberScores scores them: nearestCommunities), at a level when one is given (nil: any
// level). Without a query vector there is no similarity to rank by, and the context gets
// no report rather than arbitrary ones.
func (e *Engine) communities(ctx context.Context, corpus string, qvec []float32, level *int, k int) ([]Community, error) {
	if qvec == nil || k <= 0 {
		return nil, nil
	}
	lvl := -1
	if level != nil {
		lvl = *level
	}
	scores, err := e.nearestCommunities(ctx, corpus, qvec, lvl, k)
	if err != nil {
		return nil, err
	}
	hits, err := e.reportsByScore(ctx, corpus, nil, scores, k, true)
	if err != nil {
		return nil, err
	}
	out := make([]Community, 0, len(hits))
	for _, h := range hits {
		out = append(out, CommunityOf(h.Record, h.Score))
	}
	return out, nil
}

// CommunityOf reads a community report record (the summarizer's: its title, a blank
// line, then the summary) as a context entry with a similarity score.
func CommunityOf(r vectorstore.Record, score float64) Community {
	lvl, _ := strconv.Atoi(r.Attrs[schema.ReportLevel])
	rating, _ := strconv.ParseFloat(r.Attrs[schema.ReportRating], 64)
	_, summary := schema.SplitReportText(r.Attrs[schema.ReportTitle], r.Text)
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

// ErrNotFound is returned when an entity does not exist (the API answers 404).
var ErrNotFound = errors.New("not found")

func entityOf(en graphstore.Entity, dist int, by string) Entity {
	return Entity{Key: en.Key, Name: en.Name, Type: en.Type, Description: en.Description, PageRank: en.PageRank, Distance: dist, LinkedBy: by,
		Mentions: en.MentionCount, Communities: en.Communities}
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

// walkCarriesText says the graph walk is seeded by the text lists' passages and ranks
// them for the fusion (FuseWalk): Config.WalkCarriesText, with two text lists (an
// embedding model's dense list and BM25), a personalized-PageRank walk and passage
// seeds. With one text list (the offline embedder) there is no second list whose
// agreement protects a lookup's answer (FuseWalk's head), so the text list keeps its
// vote.
func (p plan) walkCarriesText(cfg Config, s *searched) bool {
	return cfg.WalkCarriesText && p.weights.Graph > 0 && p.ranking == RankPPR && cfg.PassageSeeds > 0 &&
		p.weights.Dense > 0 && len(s.dense) > 0 && p.weights.Lexical > 0 && len(s.lexical) > 0
}

// walkEntities returns the entity that seeds a walk carrying the text lists: the one
// whose vector is nearest the question's, as HippoRAG 2 seeds its walk from the graph's
// vectors nearest the question; exact name links stay for the subject list. Without
// one (no entity vectors), every linked entity.
func walkEntities(linked []linkedEntity) []linkedEntity {
	for _, l := range linked {
		if l.nearest {
			return []linkedEntity{l}
		}
	}
	return linked
}

// textSeeds seeds the walk with the text lists' passages, combined by standard scores
// (combineScores) and cut to the pool, each at a softmax weight exp((s − s₁) / σ) over
// the combined scores s (σ their standard deviation, s₁ the best), the weights summing
// to 1, the seed weight the question's entities share (pprRanking). HippoRAG 2 seeds
// its walk with every passage at its dense score; a softmax with the list's own spread
// as temperature gives the passages the text is sure of most of the mass whatever the
// model's score scale (E5 scores unrelated passages about 0.7, so raw or min-max scores
// spread the mass over the whole list).
func (e *Engine) textSeeds(w Weights, dense, lexical []vectorstore.Hit, pool int) []passageSeed {
	c, _ := combineScores([]RankedList{hitsList("dense", w.Dense, dense), hitsList("lexical", w.Lexical, lexical)})
	n := min(len(c.IDs), pool)
	if n == 0 {
		return nil
	}
	top := RankedList{IDs: c.IDs[:n], Scores: c.Scores[:n]}
	_, sd := meanStd(top)
	ws := make([]float64, n)
	sum := 0.0
	for i, sc := range top.Scores {
		ws[i] = 1
		if sd > 0 {
			ws[i] = math.Exp((sc - top.Scores[0]) / sd)
		}
		sum += ws[i]
	}
	out := make([]passageSeed, n)
	for i, id := range top.IDs {
		out[i] = passageSeed{id: id, weight: ws[i] / sum}
	}
	return out
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
