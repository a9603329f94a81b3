package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/graphrag/graphrag/pkg/community"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
	"github.com/graphrag/graphrag/services/grapher"
	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/summarizer"
)

const (
	benchCorpus   = "bench"
	benchEmbedDim = 384 // the offline embedder's default dimension
	writeBatch    = 500
)

// benchStores are the embedded stores holding one synthetic corpus.
type benchStores struct {
	graph    *boltgraph.Store
	vectors  *embedded.Store
	embedder *hashembed.Embedder
	stats    graphstore.Stats
	reports  int
	build    []phaseTime
}

type phaseTime struct {
	name string
	d    time.Duration
}

func (s *benchStores) Close() error {
	return errors.Join(s.vectors.Close(), s.graph.Close())
}

// buildBenchStores writes a synthetic corpus into fresh embedded stores under dir, as the
// pipeline would: chunks (hashembed vectors + BM25) into the vector store, extractions
// merged into the graph store, Leiden + PageRank as the grapher's Detect runs them,
// entity records, and extractive community reports as the summarizer writes them.
func buildBenchStores(ctx context.Context, dir string, c *synthCorpus, cfg *benchConfig) (_ *benchStores, err error) {
	// Exact scans for the rows measured on these stores (the store's default
	// switches to HNSW above 50k records); measureHNSW reopens them with the graph.
	st, err := openBenchStores(dir, embedded.WithExactThreshold(math.MaxInt))
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = st.Close()
		}
	}()
	phase := func(name string, fn func() error) error {
		t0 := time.Now()
		if err := fn(); err != nil {
			return err
		}
		st.build = append(st.build, phaseTime{name, time.Since(t0)})
		cfg.progress("%s: %s", name, time.Since(t0).Round(time.Millisecond))
		return nil
	}
	if err := phase("chunks: embed + vector store (dense + BM25)", func() error { return st.writeChunks(ctx, c) }); err != nil {
		return nil, err
	}
	if err := phase("graph store: merge extractions", func() error { return st.mergeGraph(ctx, c) }); err != nil {
		return nil, err
	}
	var comms []graphstore.Community
	if err := phase("Leiden + PageRank (grapher defaults) and writing them", func() error {
		var err error
		comms, err = st.detect(ctx)
		return err
	}); err != nil {
		return nil, err
	}
	if err := phase("entity records: embed + vector store", func() error { return st.writeEntities(ctx) }); err != nil {
		return nil, err
	}
	if err := phase("community reports (extractive) + vector store", func() error { return st.writeReports(ctx, comms) }); err != nil {
		return nil, err
	}
	if st.stats, err = st.graph.Stats(ctx, benchCorpus); err != nil {
		return nil, fmt.Errorf("reading graph stats: %w", err)
	}
	return st, nil
}

// openBenchStores opens (or creates) the stores of a corpus in dir.
func openBenchStores(dir string, vecOpts ...embedded.Option) (_ *benchStores, err error) {
	st := &benchStores{embedder: hashembed.New(benchEmbedDim)}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	if st.graph, err = boltgraph.Open(filepath.Join(dir, "graph.db")); err != nil {
		return nil, fmt.Errorf("opening the graph store: %w", err)
	}
	if st.vectors, err = embedded.Open(filepath.Join(dir, "vectors"), vecOpts...); err != nil {
		_ = st.graph.Close()
		return nil, fmt.Errorf("opening the vector store: %w", err)
	}
	return st, nil
}

// denseTopIDs returns, per question, the ids of the top k chunks of a dense search.
func denseTopIDs(ctx context.Context, st *benchStores, qs []string, k int) ([][]string, error) {
	coll := schema.Collection(benchCorpus, schema.Chunks)
	out := make([][]string, len(qs))
	for i, q := range qs {
		vecs, err := st.embedder.Embed(ctx, []string{q})
		if err != nil {
			return nil, fmt.Errorf("embedding a question: %w", err)
		}
		hits, err := st.vectors.Search(ctx, coll, vecs[0], k, vectorstore.Filter{})
		if err != nil {
			return nil, fmt.Errorf("dense search: %w", err)
		}
		for _, h := range hits {
			out[i] = append(out[i], h.ID)
		}
	}
	return out, nil
}

// benchRecall is the mean share of truth[i] found in got[i].
func benchRecall(truth, got [][]string) float64 {
	sum, n := 0.0, 0
	for i := range truth {
		if len(truth[i]) == 0 {
			continue
		}
		found := 0
		for _, id := range got[i] {
			if slices.Contains(truth[i], id) {
				found++
			}
		}
		sum += float64(found) / float64(len(truth[i]))
		n++
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

func (s *benchStores) writeChunks(ctx context.Context, c *synthCorpus) error {
	coll := schema.Collection(benchCorpus, schema.Chunks)
	if err := s.vectors.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: coll, Dim: benchEmbedDim, Lexical: true}); err != nil {
		return fmt.Errorf("creating the chunk collection: %w", err)
	}
	for lo := 0; lo < len(c.chunks); lo += writeBatch {
		part := c.chunks[lo:min(lo+writeBatch, len(c.chunks))]
		texts := make([]string, len(part))
		for i, ch := range part {
			texts[i] = ch.text
		}
		vecs, err := s.embedder.Embed(ctx, texts)
		if err != nil {
			return fmt.Errorf("embedding chunks: %w", err)
		}
		recs := make([]vectorstore.Record, len(part))
		for i, ch := range part {
			recs[i] = vectorstore.Record{ID: ch.id, Vector: vecs[i], Text: ch.text, Attrs: map[string]string{
				schema.ChunkDocumentID: ch.docID, schema.ChunkTitle: ch.title, schema.ChunkPosition: strconv.Itoa(lo + i)}}
		}
		if err := s.vectors.Upsert(ctx, coll, recs); err != nil {
			return fmt.Errorf("writing chunks: %w", err)
		}
	}
	return nil
}

func (s *benchStores) mergeGraph(ctx context.Context, c *synthCorpus) error {
	for lo := 0; lo < len(c.chunks); lo += writeBatch {
		batch := make([]graphstore.ChunkExtraction, 0, writeBatch)
		for i := lo; i < min(lo+writeBatch, len(c.chunks)); i++ {
			batch = append(batch, grapher.ToChunkExtraction(c.extraction(benchCorpus, i)))
		}
		if err := s.graph.Merge(ctx, benchCorpus, batch); err != nil {
			return fmt.Errorf("merging extractions: %w", err)
		}
	}
	return nil
}

// detect does what the grapher's Detect does through the stores (without the bus),
// with the grapher's default settings.
func (s *benchStores) detect(ctx context.Context) ([]graphstore.Community, error) {
	res, err := community.Detect(ctx, s.graph, nil, benchCorpus, grapher.DefaultConfig().Detection())
	if err != nil {
		return nil, err
	}
	if err := s.graph.SetPageRank(ctx, benchCorpus, res.PageRank); err != nil {
		return nil, fmt.Errorf("writing pagerank: %w", err)
	}
	if err := s.graph.ReplaceCommunities(ctx, benchCorpus, res.Communities); err != nil {
		return nil, fmt.Errorf("writing communities: %w", err)
	}
	return res.Communities, nil
}

func (s *benchStores) writeEntities(ctx context.Context) error {
	coll := schema.Collection(benchCorpus, schema.Entities)
	if err := s.vectors.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: coll, Dim: benchEmbedDim, Lexical: true}); err != nil {
		return fmt.Errorf("creating the entity collection: %w", err)
	}
	snap, err := s.graph.Snapshot(ctx, benchCorpus)
	if err != nil {
		return fmt.Errorf("listing entities: %w", err)
	}
	for lo := 0; lo < len(snap.Keys); lo += writeBatch {
		ents, err := s.graph.Entities(ctx, benchCorpus, snap.Keys[lo:min(lo+writeBatch, len(snap.Keys))])
		if err != nil {
			return fmt.Errorf("reading entities: %w", err)
		}
		texts := make([]string, len(ents))
		for i, e := range ents {
			texts[i] = grapher.EntityText(e)
		}
		vecs, err := s.embedder.Embed(ctx, texts)
		if err != nil {
			return fmt.Errorf("embedding entities: %w", err)
		}
		recs := make([]vectorstore.Record, len(ents))
		for i, e := range ents {
			recs[i] = vectorstore.Record{ID: e.Key, Vector: vecs[i], Text: texts[i], Attrs: map[string]string{
				schema.EntityName: e.Name, schema.EntityType: e.Type, schema.EntityTextHash: events.Hash(texts[i])[:16]}}
		}
		if err := s.vectors.Upsert(ctx, coll, recs); err != nil {
			return fmt.Errorf("writing entity records: %w", err)
		}
	}
	return nil
}

// writeReports writes the summarizer's extractive report of every community, finest
// level first (coarser reports read their children's).
func (s *benchStores) writeReports(ctx context.Context, comms []graphstore.Community) error {
	coll := schema.Collection(benchCorpus, schema.Communities)
	if err := s.vectors.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: coll, Dim: benchEmbedDim, Lexical: true}); err != nil {
		return fmt.Errorf("creating the community collection: %w", err)
	}
	var recs []vectorstore.Record
	for _, com := range comms {
		ents, err := s.graph.Entities(ctx, benchCorpus, com.Members)
		if err != nil {
			return fmt.Errorf("reading members of %s: %w", com.ID, err)
		}
		sort.SliceStable(ents, func(i, j int) bool { return ents[i].PageRank > ents[j].PageRank })
		rels, err := s.graph.RelationshipsAmong(ctx, benchCorpus, com.Members)
		if err != nil {
			return fmt.Errorf("reading relationships of %s: %w", com.ID, err)
		}
		sort.SliceStable(rels, func(i, j int) bool { return rels[i].Weight > rels[j].Weight })
		rep := summarizer.Extractive(summarizer.CommunityContext{Community: com, Members: ents, Relationships: rels})
		text := rep.Text()
		vecs, err := s.embedder.Embed(ctx, []string{text})
		if err != nil {
			return fmt.Errorf("embedding a report: %w", err)
		}
		rj, err := json.Marshal(rep)
		if err != nil {
			return fmt.Errorf("encoding a report: %w", err)
		}
		recs = append(recs, vectorstore.Record{ID: com.ID, Vector: vecs[0], Text: text, Attrs: map[string]string{
			schema.ReportLevel: strconv.Itoa(com.Level), schema.ReportParent: com.ParentID, schema.ReportTitle: rep.Title,
			schema.ReportRating: strconv.FormatFloat(rep.Rating, 'f', 1, 64), schema.ReportMembers: strconv.Itoa(len(com.Members)),
			schema.ReportRelationships: strconv.Itoa(com.RelationshipCount), schema.ReportJSON: string(rj),
			schema.ReportMethod: "extractive/v1"}})
		if len(recs) == writeBatch {
			if err := s.vectors.Upsert(ctx, coll, recs); err != nil {
				return fmt.Errorf("writing reports: %w", err)
			}
			recs = recs[:0]
		}
	}
	if len(recs) > 0 {
		if err := s.vectors.Upsert(ctx, coll, recs); err != nil {
			return fmt.Errorf("writing reports: %w", err)
		}
	}
	s.reports = len(comms)
	return nil
}

// retrievalResult is the latency of Retrieve over the questions.
type retrievalResult struct {
	chunks      int
	stats       graphstore.Stats
	reports     int
	build       []phaseTime
	questions   int
	p50, p90    time.Duration
	p99, max    time.Duration
	phases      map[string][]float64 // phase -> sorted ms
	meanChunks  float64
	withGraph   float64       // share of answers with at least one graph-list chunk
	linkedShare float64       // share of questions with at least one linked entity
	open        time.Duration // opening the stores (the HNSW variant builds its graph)
	denseRecall float64       // of the dense list against an exact scan
}

// measureRetrieval times engine.Engine.Retrieve with the offline defaults over the
// questions, one at a time, after a warm-up pass over a few of them.
func measureRetrieval(ctx context.Context, st *benchStores, qs []string) (retrievalResult, error) {
	// The stores hold hashing-embedder vectors, so the engine runs with the offline
	// defaults, as `graphrag up` does with that embedder (dense list off, see
	// docs/evaluation.md).
	return measureRetrievalWith(ctx, st, qs, engine.DefaultConfig())
}

// measureRetrievalWith is measureRetrieval with another engine configuration.
func measureRetrievalWith(ctx context.Context, st *benchStores, qs []string, ecfg engine.Config) (retrievalResult, error) {
	eng, err := engine.New(ecfg, engine.Deps{Graph: st.graph, Vectors: st.vectors, Embedder: st.embedder,
		OfflineEmbedder: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return retrievalResult{}, fmt.Errorf("building the query engine: %w", err)
	}
	for _, q := range qs[:min(10, len(qs))] {
		if _, err := eng.Retrieve(ctx, engine.Request{Corpus: benchCorpus, Query: q}); err != nil {
			return retrievalResult{}, fmt.Errorf("warm-up query %q: %w", q, err)
		}
	}
	res := retrievalResult{questions: len(qs), phases: map[string][]float64{}}
	lat := make([]time.Duration, 0, len(qs))
	nChunks, withGraph, linked := 0, 0, 0
	for _, q := range qs {
		t0 := time.Now()
		r, err := eng.Retrieve(ctx, engine.Request{Corpus: benchCorpus, Query: q})
		if err != nil {
			return res, fmt.Errorf("query %q: %w", q, err)
		}
		rc, timings := r.Context, r.Timings
		lat = append(lat, time.Since(t0))
		for k, v := range timings {
			res.phases[k] = append(res.phases[k], v)
		}
		nChunks += len(rc.Chunks)
		if slices.ContainsFunc(rc.Chunks, func(c engine.Chunk) bool {
			return slices.ContainsFunc(c.Lists, func(l engine.ListHit) bool { return l.List == "graph" })
		}) {
			withGraph++
		}
		if slices.ContainsFunc(rc.Entities, func(e engine.Entity) bool { return e.Distance == 0 }) {
			linked++
		}
	}
	slices.Sort(lat)
	for k := range res.phases {
		sort.Float64s(res.phases[k])
	}
	res.p50, res.p90, res.p99, res.max = benchPercentile(lat, 50), benchPercentile(lat, 90), benchPercentile(lat, 99), lat[len(lat)-1]
	res.meanChunks = float64(nChunks) / float64(len(qs))
	res.withGraph = float64(withGraph) / float64(len(qs))
	res.linkedShare = float64(linked) / float64(len(qs))
	return res, nil
}

func benchPercentileF(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// retrievalSizes are the corpus sizes in chunks.
func retrievalSizes(quick bool) []int {
	if quick {
		return []int{1000}
	}
	return []int{1000, 10_000, 100_000}
}

const benchQuestions = 200

func benchRetrieval(ctx context.Context, cfg *benchConfig, r *benchReport) error {
	r.command(cfg.command("retrieval"))
	r.line("`engine.Engine.Retrieve` (local search: embed, dense, BM25, entity linking, graph list by personalized")
	r.line("PageRank, subject list, RRF, evidence, relationships, community reports) on the embedded stores, no LLM, offline")
	r.linef("embedder (hashembed, %d-d). The corpus is synthetic: sentences over a Zipf vocabulary of %d", benchEmbedDim, vocabularySize)
	r.linef("generated words, one entity planted per sentence, %d entities per topic, one entity per %d chunks,", topicSize, chunksPerEntity)
	r.linef("~10%% of chunks naming an entity of another topic. %d generated questions (half name two entities,", benchQuestions)
	r.line("30% one entity and topic words, 20% topic words only) run one at a time after 10 warm-up queries.")
	r.line("Each document is titled after an entity, so the subject list reads and finds passages.")
	r.line("Latency is wall time around `Retrieve`; the phases come from its timings map. The engine runs")
	r.line("with the offline defaults `graphrag up` uses with this embedder: the dense list is off (its")
	r.line("hashed vectors only restate BM25; docs/evaluation.md), so `dense` is 0 below. With an embedding")
	r.line("model the dense list is on, and the exact scan adds about 20 ms at 100k chunks.")
	r.line("")
	var results, withDense []retrievalResult
	var hnsw retrievalResult
	var truth [][]string
	sizes := retrievalSizes(cfg.quick)
	for _, n := range sizes {
		cfg.progress("corpus of %d chunks", n)
		c := newSynthCorpus(n, 2026)
		dir := filepath.Join(cfg.workDir, fmt.Sprintf("retrieval-%d", n))
		st, err := buildBenchStores(ctx, dir, c, cfg)
		if err != nil {
			return err
		}
		qs := c.questions(benchQuestions, 99)
		res, err := measureRetrieval(ctx, st, qs)
		res.chunks, res.stats, res.reports, res.build = n, st.stats, st.reports, st.build
		largest := n == sizes[len(sizes)-1]
		if err == nil && largest {
			truth, err = denseTopIDs(ctx, st, qs, engine.DefaultConfig().Pool)
		}
		if err == nil && largest {
			withDense, err = measureWithDense(ctx, cfg, st, qs, n)
		}
		if cerr := st.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("closing the stores: %w", cerr)
		}
		if err != nil {
			return err
		}
		cfg.progress("%d chunks: p50 %s p99 %s", n, benchFmtMs(res.p50), benchFmtMs(res.p99))
		results = append(results, res)
		if largest {
			if hnsw, err = measureHNSW(ctx, cfg, dir, n, qs, truth); err != nil {
				return err
			}
			hnsw.stats, hnsw.reports = res.stats, res.reports
		}
	}
	rows := [][]string{}
	for _, res := range results {
		rows = append(rows, []string{benchFmtCount(res.chunks), strconv.Itoa(res.stats.Entities), strconv.Itoa(res.stats.Relationships),
			fmt.Sprintf("%d / %d", res.stats.Communities, res.stats.Levels), benchFmtMs(res.p50), benchFmtMs(res.p90), benchFmtMs(res.p99), benchFmtMs(res.max),
			fmt.Sprintf("%.0f%% / %.0f%%", 100*res.linkedShare, 100*res.withGraph), retrievalTarget(res)})
	}
	r.table([]string{"chunks", "entities", "relationships", "communities / levels", "p50", "p90", "p99", "max",
		"linked / graph hit", "target at 100k"}, rows)
	r.line("")
	r.line("_linked_: questions with at least one entity linked; _graph hit_: answers with a chunk from the graph list.")
	r.line("")
	r.line("Median (p50) and p99 of each phase, in ms:")
	r.line("")
	phases := []string{"embed", "dense", "lexical", "link", "graph", "subject", "fuse", "evidence", "communities", "total"}
	header := append([]string{"chunks"}, phases...)
	rows = nil
	for _, res := range results {
		row := []string{benchFmtCount(res.chunks)}
		for _, p := range phases {
			row = append(row, benchPhaseCell(res, p))
		}
		rows = append(rows, row)
	}
	r.table(header, rows)
	r.line("")
	last := results[len(results)-1]
	top := slices.Clone(phases[:len(phases)-1])
	sort.SliceStable(top, func(i, j int) bool {
		return benchPercentileF(last.phases[top[i]], 50) > benchPercentileF(last.phases[top[j]], 50)
	})
	total := benchPercentileF(last.phases["total"], 50)
	r.linef("At %s chunks the largest phases at the median are %s (%.1f ms, %.0f%% of the median total) and %s (%.1f ms, %.0f%%).",
		benchFmtCount(last.chunks), top[0], benchPercentileF(last.phases[top[0]], 50), 100*benchPercentileF(last.phases[top[0]], 50)/total,
		top[1], benchPercentileF(last.phases[top[1]], 50), 100*benchPercentileF(last.phases[top[1]], 50)/total)
	r.line("")
	r.linef("The same %s-chunk corpus with the chunk collection's dense index switched from exact scans (forced", benchFmtCount(hnsw.chunks))
	r.linef("above) to the HNSW graph (`embedded.WithExactThreshold(%d)`, the default; M 24, ef ≥ 6·k); entity", hnsw.chunks/2)
	r.line("and report collections stay exact. Recall is that of the dense list (top 50) against the exact scan.")
	r.line("")
	r.table([]string{"chunks", "dense index", "open (graph build)", "dense recall@50", "p50", "p90", "p99", "dense p50 / p99", "graph p50 / p99", "target at 100k"}, [][]string{
		{benchFmtCount(last.chunks), "exact scan (default)", "-", "1.00", benchFmtMs(last.p50), benchFmtMs(last.p90),
			benchFmtMs(last.p99), benchPhaseCell(last, "dense"), benchPhaseCell(last, "graph"), retrievalTarget(last)},
		{benchFmtCount(hnsw.chunks), "HNSW", benchRound(hnsw.open).String(), fmt.Sprintf("%.2f", hnsw.denseRecall), benchFmtMs(hnsw.p50), benchFmtMs(hnsw.p90),
			benchFmtMs(hnsw.p99), benchPhaseCell(hnsw, "dense"), benchPhaseCell(hnsw, "graph"), retrievalTarget(hnsw)},
	})
	r.line("")
	r.line("The two rows were measured one after the other, under the load of that moment; phases other than")
	r.line("dense do not depend on the dense index, so their difference shows the noise.")
	r.line("")
	r.linef("The same %s-chunk corpus (exact scans) with the dense list on, as with an embedding model, the", benchFmtCount(last.chunks))
	r.line("text lists fused as by default, then with `-walk-carries-text` (the walk seeded by every text passage")
	r.line("and the entity nearest the question, ADR 0074); the two runs one after the other:")
	r.line("")
	rows = nil
	for i, res := range withDense {
		name := []string{"dense on", "dense on, `-walk-carries-text`"}[i]
		rows = append(rows, []string{benchFmtCount(res.chunks), name, benchFmtMs(res.p50), benchFmtMs(res.p90), benchFmtMs(res.p99),
			benchPhaseCell(res, "graph"), benchPhaseCell(res, "fuse"), retrievalTarget(res)})
	}
	r.table([]string{"chunks", "lists", "p50", "p90", "p99", "graph p50 / p99", "fuse p50 / p99", "target at 100k"}, rows)
	if len(withDense) == 2 {
		r.line("")
		r.linef("`-walk-carries-text` against the default fusion, same run: p50 %.2f×, p99 %.2f×.",
			float64(withDense[1].p50)/float64(withDense[0].p50), float64(withDense[1].p99)/float64(withDense[0].p99))
	}
	r.line("")
	r.line("Building the stores (not timed in CI; once per size):")
	r.line("")
	header = []string{"phase"}
	for _, res := range results {
		header = append(header, benchFmtCount(res.chunks)+" chunks")
	}
	rows = nil
	for i, p := range results[0].build {
		row := []string{p.name}
		for _, res := range results {
			row = append(row, benchRound(res.build[i].d).String())
		}
		rows = append(rows, row)
	}
	r.table(header, rows)
	return nil
}

// benchRound keeps three significant figures or so of a duration.
func benchRound(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

// benchRoundShort keeps about three significant figures of a short duration.
func benchRoundShort(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return benchRound(d)
	case d >= 10*time.Millisecond:
		return d.Round(100 * time.Microsecond)
	case d >= 100*time.Microsecond:
		return d.Round(time.Microsecond)
	}
	return d
}

// retrievalTarget judges a 100k-chunk result against the target.
func retrievalTarget(res retrievalResult) string {
	if res.chunks != 100_000 {
		return "-"
	}
	return benchVerdict(res.p50 <= 20*time.Millisecond && res.p99 <= 100*time.Millisecond, "p50 ≤ 20 ms, p99 ≤ 100 ms")
}

// benchPhaseCell is "p50 / p99" of a phase in ms.
func benchPhaseCell(res retrievalResult, phase string) string {
	v := res.phases[phase]
	return fmt.Sprintf("%s / %s", benchFmtFloat(benchPercentileF(v, 50)), benchFmtFloat(benchPercentileF(v, 99)))
}

// measureWithDense measures retrieval with the dense list on, first with the default
// fusion, then with the walk carrying the text lists.
func measureWithDense(ctx context.Context, cfg *benchConfig, st *benchStores, qs []string, n int) ([]retrievalResult, error) {
	var out []retrievalResult
	for _, walk := range []bool{false, true} {
		ecfg := engine.DefaultConfig()
		ecfg.Weights.Dense = 1
		ecfg.WalkCarriesText = walk
		res, err := measureRetrievalWith(ctx, st, qs, ecfg)
		if err != nil {
			return nil, err
		}
		res.chunks = n
		cfg.progress("%d chunks, dense on, walk carries text %v: p50 %s p99 %s", n, walk, benchFmtMs(res.p50), benchFmtMs(res.p99))
		out = append(out, res)
	}
	return out, nil
}

// measureHNSW reopens the stores of the largest corpus with an HNSW graph on the chunk
// collection and measures retrieval and dense recall against the exact scan's ids.
func measureHNSW(ctx context.Context, cfg *benchConfig, dir string, n int, qs []string, truth [][]string) (retrievalResult, error) {
	cfg.progress("%d chunks with the HNSW dense index: building the graph", n)
	t0 := time.Now()
	st, err := openBenchStores(dir, embedded.WithExactThreshold(n/2))
	if err != nil {
		return retrievalResult{}, err
	}
	open := time.Since(t0)
	res, err := measureRetrieval(ctx, st, qs)
	var got [][]string
	if err == nil {
		got, err = denseTopIDs(ctx, st, qs, engine.DefaultConfig().Pool)
	}
	if cerr := st.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("closing the stores: %w", cerr)
	}
	if err != nil {
		return res, err
	}
	res.chunks, res.open, res.denseRecall = n, open, benchRecall(truth, got)
	cfg.progress("%d chunks, HNSW: p50 %s p99 %s, dense recall@50 %.2f", n, benchFmtMs(res.p50), benchFmtMs(res.p99), res.denseRecall)
	return res, nil
}

func benchVerdict(ok bool, what string) string {
	if ok {
		return "met (" + what + ")"
	}
	return "**missed** (" + what + ")"
}
