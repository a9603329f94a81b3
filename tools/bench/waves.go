package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/community"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/natsembed"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
	"github.com/graphrag/graphrag/pkg/wgraph"
	"github.com/graphrag/graphrag/services/extractor"
	"github.com/graphrag/graphrag/services/grapher"
	"github.com/graphrag/graphrag/services/summarizer"
)

// countingVectors counts the records the summarizer writes into the report collection:
// each one is a report written (a model call with a chat model) unless it is a copy of
// a child's report (summarizer.Copied).
type countingVectors struct {
	summarizer.VectorStore
	coll           string
	writes, copies atomic.Int64
}

func (c *countingVectors) Upsert(ctx context.Context, coll string, recs []vectorstore.Record) error {
	if coll == c.coll {
		c.writes.Add(int64(len(recs)))
		for _, r := range recs {
			if summarizer.Copied(r) {
				c.copies.Add(1)
			}
		}
	}
	return c.VectorStore.Upsert(ctx, coll, recs)
}

// wavesVariant is how one run publishes the waves and the grapher's setting.
type wavesVariant struct {
	// stream publishes the next wave as soon as the previous one is extracted (a
	// corpus streaming in); otherwise the next wave waits until the corpus is
	// complete (every community reported), so every wave ends with a detection.
	stream     bool
	maxChange  float64 // -community-max-change
	maxChanges int     // -detect-max-changes; 0: the default
	growth     float64 // -detect-growth
	warm       bool    // -detect-warm; set on every row, whatever the grapher's default
}

func (v wavesVariant) mode() string {
	if v.stream {
		return "streaming"
	}
	return "complete"
}

func (v wavesVariant) String() string {
	return fmt.Sprintf("waves %s, max change %g, detect-max-changes %s, detect-growth %g, %s", v.mode(), v.maxChange, v.maxChangesCell(), v.growth, v.start())
}

func (v wavesVariant) start() string {
	if v.warm {
		return "warm"
	}
	return "cold"
}

func (v wavesVariant) maxChangesCell() string {
	if v.maxChanges == 0 {
		return strconv.Itoa(grapher.DefaultConfig().MaxChanges)
	}
	return strconv.Itoa(v.maxChanges)
}

// wavesResult is one indexing of a corpus published in waves.
type wavesResult struct {
	wavesVariant
	docs, waves int
	writes      int64 // report records written
	copies      int64 // of them, copies of a child's report (no model call)
	communities int   // at the end
	detections  int
	wall        time.Duration
	// Modularity of the final top level, and of a cold detection's on the same
	// final graph (members of unrecorded small communities alone in both).
	modularity, coldModularity float64
	// rewrites: complete waves only, the old ids each wave's detection retired.
	rewrites *rewriteBreakdown
}

// wavesStack is the extractor, grapher and summarizer services running in this process
// on embedded NATS and stores, with the offline defaults.
type wavesStack struct {
	bus      *bus.Bus
	graph    *boltgraph.Store
	vectors  *embedded.Store
	embedder *hashembed.Embedder
	counting *countingVectors
	closers  []func() error
}

func (w *wavesStack) close() error {
	var err error
	for _, c := range slices.Backward(w.closers) {
		err = errors.Join(err, c())
	}
	return err
}

// startWavesStack starts the services in dir with the detection settings v.
func startWavesStack(ctx context.Context, dir string, v wavesVariant) (w *wavesStack, err error) {
	w = &wavesStack{}
	defer func() {
		if err != nil {
			err = errors.Join(err, w.close())
		}
	}()
	srv, err := natsembed.Start(natsembed.Config{DataDir: filepath.Join(dir, "nats"), Port: -1}) //nolint:contextcheck // Start takes no context
	if err != nil {
		return w, fmt.Errorf("starting nats: %w", err)
	}
	w.closers = append(w.closers, func() error { srv.Shutdown(); return nil })
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	nc, err := bus.Connect(ctx, bus.ConnConfig{URL: srv.ClientURL(), Name: "bench-waves", Logger: quiet})
	if err != nil {
		return w, fmt.Errorf("connecting to nats: %w", err)
	}
	w.closers = append(w.closers, func() error { nc.Close(); return nil })
	if w.bus, err = bus.New(nc); err != nil {
		return w, fmt.Errorf("opening the bus: %w", err)
	}
	if err := pipeline.Provision(ctx, w.bus, pipeline.DefaultTopology()); err != nil {
		return w, fmt.Errorf("provisioning streams: %w", err)
	}
	if w.graph, err = boltgraph.Open(filepath.Join(dir, "graph.db")); err != nil {
		return w, fmt.Errorf("opening the graph store: %w", err)
	}
	w.closers = append(w.closers, w.graph.Close)
	vs, err := embedded.Open(filepath.Join(dir, "vectors"))
	if err != nil {
		return w, fmt.Errorf("opening the vector store: %w", err)
	}
	w.closers = append(w.closers, vs.Close)
	emb := hashembed.New(benchEmbedDim)
	w.vectors, w.embedder = vs, emb
	w.counting = &countingVectors{VectorStore: vs, coll: schema.Collection(benchCorpus, schema.Communities)}

	ex, err := extractor.New(extractor.DefaultConfig(), extractor.Deps{Bus: w.bus, Vectors: vs, Embedder: emb, Logger: quiet}) //nolint:contextcheck // New starts nothing: it only sets its counters to zero
	if err != nil {
		return w, fmt.Errorf("creating the extractor: %w", err)
	}
	gcfg := grapher.DefaultConfig()
	gcfg.Lease, gcfg.MaxCommunityChange, gcfg.DetectGrowth = false, v.maxChange, v.growth
	gcfg.WarmStart = v.warm
	if v.maxChanges > 0 {
		gcfg.MaxChanges = v.maxChanges
	}
	gr, err := grapher.New(gcfg, grapher.Deps{Bus: w.bus, Graph: w.graph, Vectors: vs, Embedder: emb, Logger: quiet}) //nolint:contextcheck // New starts nothing: it only sets its counters to zero
	if err != nil {
		return w, fmt.Errorf("creating the grapher: %w", err)
	}
	su, err := summarizer.New(summarizer.DefaultConfig(), summarizer.Deps{Bus: w.bus, Graph: w.graph, Vectors: w.counting, Embedder: emb, Logger: quiet}) //nolint:contextcheck // New starts nothing: it only sets its counters to zero
	if err != nil {
		return w, fmt.Errorf("creating the summarizer: %w", err)
	}
	for _, c := range []interface {
		Start(context.Context) error
		Stop(context.Context) error
	}{ex, gr, su} {
		if err := c.Start(ctx); err != nil {
			return w, fmt.Errorf("starting a service: %w", err)
		}
		w.closers = append(w.closers, func() error { return c.Stop(context.WithoutCancel(ctx)) })
	}
	return w, nil
}

// runWaves indexes docs publishing them in waves and waiting after each until the
// corpus is complete (every current community reported). progress gets the report
// writes so far after each wave.
func runWaves(ctx context.Context, dir string, docs []realDoc, waves int, v wavesVariant, progress func(wave int, writes int64, st pipeline.Status)) (res wavesResult, err error) {
	res = wavesResult{wavesVariant: v, docs: len(docs), waves: waves}
	w, err := startWavesStack(ctx, dir, v)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, w.close()) }()
	t0 := time.Now()
	var before []graphstore.Community
	if !v.stream {
		res.rewrites = newRewriteBreakdown()
	}
	for i := range waves {
		lo, hi := i*len(docs)/waves, (i+1)*len(docs)/waves
		for _, d := range docs[lo:hi] {
			if _, err := pipeline.PublishDocument(ctx, w.bus, events.Document{Corpus: benchCorpus, ID: d.ID, Title: d.Title, Text: d.Text}); err != nil {
				return res, fmt.Errorf("publishing %s: %w", d.ID, err)
			}
		}
		wait := pipeline.WaitComplete
		if v.stream && i+1 < waves {
			wait = waitExtracted
		}
		st, err := wait(ctx, w.bus, benchCorpus, 100*time.Millisecond, nil)
		if err != nil {
			return res, fmt.Errorf("waiting for wave %d: %w", i+1, err)
		}
		res.detections = int(st.Graph.Detections)
		if res.rewrites != nil {
			if before, err = res.rewrites.addWave(ctx, w.graph, before); err != nil {
				return res, err
			}
		}
		if progress != nil {
			progress(i+1, w.counting.writes.Load(), st)
		}
	}
	res.wall = time.Since(t0)
	stats, err := w.graph.Stats(ctx, benchCorpus)
	if err != nil {
		return res, fmt.Errorf("reading graph stats: %w", err)
	}
	res.communities, res.writes, res.copies = stats.Communities, w.counting.writes.Load(), w.counting.copies.Load()
	if res.modularity, res.coldModularity, err = finalModularity(ctx, w.graph); err != nil {
		return res, err
	}
	return res, nil
}

// finalModularity scores the corpus's top-level communities, and those a detection
// from scratch finds on the same graph, at the grapher's resolution.
func finalModularity(ctx context.Context, store *boltgraph.Store) (warm, cold float64, err error) {
	snap, err := store.Snapshot(ctx, benchCorpus)
	if err != nil {
		return 0, 0, fmt.Errorf("reading the final graph: %w", err)
	}
	g, err := community.Graph(snap)
	if err != nil {
		return 0, 0, err
	}
	kept, err := store.Communities(ctx, benchCorpus, -1)
	if err != nil {
		return 0, 0, fmt.Errorf("reading the final communities: %w", err)
	}
	o := grapher.DefaultConfig().Detection()
	fresh, err := community.OnSnapshot(ctx, snap, o)
	if err != nil {
		return 0, 0, fmt.Errorf("detecting from scratch: %w", err)
	}
	return wgraph.Modularity(g, topMembership(snap.Keys, kept), o.Resolution),
		wgraph.Modularity(g, topMembership(snap.Keys, fresh.Communities), o.Resolution), nil
}

// topMembership is the membership of the highest level of cs; keys in none of its
// communities are alone.
func topMembership(keys []string, cs []graphstore.Community) []int {
	top := 0
	for _, c := range cs {
		top = max(top, c.Level)
	}
	index := make(map[string]int, len(keys))
	for i, k := range keys {
		index[k] = i
	}
	mem := make([]int, len(keys))
	for i := range mem {
		mem[i] = -1
	}
	next := 0
	for _, c := range cs {
		if c.Level != top {
			continue
		}
		for _, k := range c.Members {
			if i, ok := index[k]; ok {
				mem[i] = next
			}
		}
		next++
	}
	for i := range mem {
		if mem[i] < 0 {
			mem[i], next = next, next+1
		}
	}
	return mem
}

// waitExtracted waits until every chunk published so far is extracted (the grapher
// may still be merging and detecting); it has WaitComplete's signature.
func waitExtracted(ctx context.Context, b *bus.Bus, corpus string, poll time.Duration, _ func(pipeline.Status)) (pipeline.Status, error) {
	for {
		st, err := pipeline.GetStatus(ctx, b, corpus)
		if err != nil {
			return st, fmt.Errorf("reading the corpus status: %w", err)
		}
		done := true
		for _, s := range st.Stages {
			if (s.Stage == pipeline.StageChunker || s.Stage == pipeline.StageExtractor) && s.Done < s.Total {
				done = false
			}
		}
		if done {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, fmt.Errorf("waiting for extraction: %w", ctx.Err())
		case <-time.After(poll):
		}
	}
}

func benchResummarize(ctx context.Context, cfg *benchConfig, r *benchReport) error {
	rc, err := loadRealCorpus(cfg.corpusDir)
	if err != nil {
		return err
	}
	if cfg.waves < 1 {
		return fmt.Errorf("-waves %d: need at least 1", cfg.waves)
	}
	docs, waves := rc.docs, cfg.waves
	if cfg.quick {
		docs, waves = docs[:60], min(waves, 3)
	}
	if cfg.wavesMode != "" && cfg.wavesMode != "complete" && cfg.wavesMode != "streaming" {
		return fmt.Errorf("-waves-mode %q: want complete or streaming", cfg.wavesMode)
	}
	cmd := cfg.command("resummarize")
	if cfg.waves != 10 {
		cmd = strings.Replace(cmd, " -out", fmt.Sprintf(" -waves %d -out", cfg.waves), 1)
	}
	if cfg.wavesMode != "" {
		cmd = strings.Replace(cmd, " -out", " -waves-mode "+cfg.wavesMode+" -out", 1)
	}
	r.command(cmd)
	r.linef("The %d passages of the base corpus (%s) published in %d equal waves, in corpus order, through", len(docs), rc.source, waves)
	r.line("the extractor, grapher and summarizer services in one process (embedded NATS and stores, offline")
	r.line("defaults, grapher defaults: detection after 2 s without a merge). _Complete_ waves: each wave is")
	r.line("published once the corpus is complete (every current community has its report), as when a batch of")
	r.line("documents is added to an indexed corpus, so every wave ends with a detection run. _Streaming_ waves:")
	r.line("each wave is published as soon as the previous one is extracted (a corpus indexed from scratch while")
	r.line("its documents stream in); the grapher's scheduling decides when detection runs. _Report writes_")
	r.line("counts the records the summarizer writes into the report collection; _copies_ are those of a community")
	r.line("with exactly its only child's members, which get the child's report; the others would each be a model")
	r.line("call with a chat model (_model calls_). `-community-max-change` (0.2, community.Stabilize) is how much of a community's membership may")
	r.line("change before it gets a new id and report. `-detect-max-changes` forces a detection run while busy after")
	r.line("that many merged chunks; `-detect-growth` g also holds it back until the graph has grown g-fold since the")
	r.line("last run. The dev set is too small for the default 5,000 to force a run, so the last two rows force runs")
	r.line("after 100 chunks, as 5,000 would at 50k. _Start_: _cold_ detects from scratch each run (`-detect-warm=false`),")
	r.line("_warm_ starts each run after the first from the stored hierarchy (`-detect-warm`, the default, ADR 0032, 0042);")
	r.line("each row sets it explicitly.")
	r.line("_Final modularity_ is that of the top level at the end; _cold modularity_ that of a detection from scratch")
	r.line("on the same final graph (members of communities too small for a record count as alone in both).")
	r.line("")
	return runResummarizeVariants(ctx, cfg, r, docs, waves)
}
