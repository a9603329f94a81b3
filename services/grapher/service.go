package grapher

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/community"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/service"
	"github.com/graphrag/graphrag/pkg/taxonomy"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// Config tunes the grapher. New gives Debounce, MaxChanges, Resolution, MaxLevels,
// MinCommunitySize, Damping, SummarizeAfter, EntityEmbed, BatchSize, BatchWait and
// DetectConcurrency their
// DefaultConfig value when zero, Taxonomy its own when its PerCorpus is zero and Stage
// its own when its Workers is zero; every other zero is a value. Validate rejects what
// New would not run with.
type Config struct {
	// Debounce is how long a corpus must be quiet before communities are detected.
	Debounce time.Duration
	// MaxChanges forces a detection run after this many merged chunks even if busy.
	MaxChanges int
	// DetectGrowth also holds a forced run back until the chunks merged since the last
	// run are this multiple of those merged before it. Each run can rewrite about every
	// report, so a corpus indexed from scratch while busy then costs at most about
	// 1 + 1/DetectGrowth report writes per final community (0: MaxChanges alone).
	DetectGrowth float64
	// Resolution, Seed and MaxLevels parameterize Leiden.
	Resolution float64
	Seed       uint64
	MaxLevels  int
	// MinCommunitySize: smaller communities are kept in the hierarchy of their members
	// but get no community record or report.
	MinCommunitySize int
	// Damping is PageRank's damping factor, in (0, 1).
	Damping float64
	// MaxCommunityChange, in [0, 1], is the share of its members a community may change
	// (and of its size since its report) and keep its id and report; 0 gives every changed
	// membership a new id (see community.Stabilize).
	MaxCommunityChange float64
	// WarmStart starts each detection from the stored hierarchy (ADR 0032), on by
	// default (ADR 0042): far fewer reports rewritten, so fewer model calls, when
	// documents arrive in batches. The communities then depend on the order documents
	// came in (a deleted and re-published document, or a run resumed after a crash,
	// need not give the same hierarchy as one cold run); the graph itself does not.
	// Off gives a hierarchy that depends on the graph alone.
	WarmStart bool
	// SummarizeAfter is the number of distinct descriptions an entity accumulates before
	// they are summarized into one by the LLM (no effect offline).
	SummarizeAfter int
	// EntityEmbed is what is embedded for an entity, which query-time entity linking
	// searches: EntityEmbedDescription (the default: name, type and the whole
	// description, re-embedded whenever the description changes) or EntityEmbedName (name
	// and type, a text that does not change as mentions arrive: an eighth of the tokens).
	EntityEmbed string
	// BatchSize and BatchWait shape group commits to the graph store.
	BatchSize int
	BatchWait time.Duration
	// Taxonomy selects the type consolidation strategy.
	Taxonomy taxonomy.Options
	Stage    pipeline.StageConfig
	// Lease makes the grapher hold the pipeline's grapher lease while it runs, so
	// that of two graphers on one bus (a rollout overlap, a node failure) only one
	// merges and detects; the other waits. Off only where one grapher is certain
	// otherwise (graphrag up on the embedded graph store, whose file lock allows one).
	Lease bool
	// Shards, when not 0, splits the corpora into this many shards (pipeline.ShardOf)
	// which the grapher replicas share: each shard is a lease one replica holds at a time
	// and a durable consumer of its corpora's extractions, and a replica holds its fair
	// share of them (see shards.go, ADR 0064). 0 keeps one active grapher per bus (the
	// grapher lease). The number is fixed once the bus has it.
	Shards int
	// DetectConcurrency is how many corpora one grapher detects at once: a long run of
	// one corpus holds back the runs of the others only when this many run.
	DetectConcurrency int
	// shardPoll is how often a replica looks at the other replicas and the shards
	// (default: a tenth of the lease TTL); tests shorten it.
	shardPoll time.Duration
}

// DefaultConfig holds the seeds' parameters (Leiden γ 1.0, seed 42, 3 levels, minimum
// community size 3, PageRank damping 0.85).
func DefaultConfig() Config {
	st := pipeline.DefaultStageConfig()
	st.Workers = 32 // handlers mostly wait for a group commit
	st.MaxAckPending = 256
	return Config{
		Debounce:           2 * time.Second,
		MaxChanges:         5000,
		DetectGrowth:       5,
		Resolution:         1.0,
		Seed:               42,
		MaxLevels:          3,
		MinCommunitySize:   3,
		Damping:            0.85,
		MaxCommunityChange: community.DefaultMaxChange,
		WarmStart:          true,
		SummarizeAfter:     8,
		EntityEmbed:        EntityEmbedDescription,
		BatchSize:          256,
		BatchWait:          20 * time.Millisecond,
		Taxonomy:           taxonomy.DefaultOptions(),
		Stage:              st,
		Lease:              true,
		DetectConcurrency:  2,
	}
}

// withDefaults gives the fields whose zero stands for their default (see Config) their
// DefaultConfig value.
func (c Config) withDefaults() Config {
	def := DefaultConfig()
	service.FillZeros(&c, def, "Debounce", "MaxChanges", "Resolution", "MaxLevels", "MinCommunitySize",
		"Damping", "SummarizeAfter", "EntityEmbed", "BatchSize", "BatchWait", "DetectConcurrency")
	if c.Taxonomy.PerCorpus == 0 {
		c.Taxonomy = def.Taxonomy
	}
	c.Stage = c.Stage.Or(def.Stage)
	return c
}

// Validate names the flag of every invalid detection, merge, taxonomy or consumer
// value.
func (c Config) Validate() error {
	var p service.Problems
	service.Positive(&p, "-detect-debounce", c.Debounce)
	service.AtLeast(&p, "-detect-max-changes", c.MaxChanges, 1)
	service.AtLeast(&p, "-detect-growth", c.DetectGrowth, 0)
	service.Positive(&p, "-leiden-resolution", c.Resolution)
	service.AtLeast(&p, "-leiden-max-levels", c.MaxLevels, 1)
	service.AtLeast(&p, "-min-community-size", c.MinCommunitySize, 1)
	service.WithinOpen(&p, "-pagerank-damping", c.Damping, 0, 1)
	service.Within(&p, "-community-max-change", c.MaxCommunityChange, 0, 1)
	service.AtLeast(&p, "-summarize-descriptions-after", c.SummarizeAfter, 1)
	service.OneOf(&p, "-entity-embed", c.EntityEmbed, EntityEmbedDescription, EntityEmbedName)
	service.AtLeast(&p, "-merge-batch", c.BatchSize, 1)
	service.Within(&p, "-shards", c.Shards, 0, pipeline.MaxShards)
	service.AtLeast(&p, "-detect-concurrency", c.DetectConcurrency, 1)
	service.OneOf(&p, "-taxonomy-strategy", c.Taxonomy.Strategy, taxonomy.Stratified, taxonomy.Global)
	service.AtLeast(&p, "-taxonomy-types-per-corpus", c.Taxonomy.PerCorpus, 1)
	service.Within(&p, "-taxonomy-min-percent", c.Taxonomy.MinPercent, 0, 100)
	p.Join(c.Stage.Validate("grapher"))
	return p.Err()
}

// Deps are the backends of the grapher.
type Deps struct {
	Bus   *bus.Bus
	Graph GraphStore
	// Algorithms, when set and available, runs Leiden and PageRank inside the graph
	// store (Neo4j GDS); otherwise the grapher runs them in Go on a snapshot.
	Algorithms graphstore.Algorithms
	Vectors    VectorStore
	// Embedder turns texts into vectors: the LLM client's embeddings or the
	// offline embedder.
	Embedder llm.Embedder
	LLM      *llm.Client // optional: description summaries and type aliases
	Logger   *slog.Logger
}

// versionCacheEntries bounds the merger's memory of current document versions
// (about 100 bytes an entry).
const versionCacheEntries = 100_000

// Service is the grapher.
type Service struct {
	cfg    Config
	deps   Deps
	log    *slog.Logger
	runner *pipeline.Runner
	merger *merger
	kv     bus.KV
	dim    int
	// embedder is deps.Embedder giving every non-empty text a direction (llm.NonZero).
	embedder llm.Embedder
	lease    *bus.Lease
	failed   chan error
	// holder names this grapher in the leases it holds.
	holder string

	mu      sync.Mutex
	corpora map[string]*corpusState
	// all stands for every corpus when the grapher is not sharded; owned holds the
	// shards a sharded one holds (see shards.go).
	all    *shard
	owned  map[int]*shard
	member *bus.Lease // a sharded grapher's membership (see rebalance)
	saveMu sync.Mutex // serializes state saves (saveState)

	// detectSlots bounds the detection runs under way (Config.DetectConcurrency).
	detectSlots chan struct{}
	detectCtx   context.Context // the parent of every detection's context
	quitBalance chan struct{}   // ends balance (sharded)
	balanced    chan struct{}   // closed when balance has returned

	started      atomic.Bool // Start succeeded
	stopPauses   func()      // ends the record of a pause (pipeline.ReportPauses)
	outages      *pipeline.Dependencies
	cancelDetect context.CancelFunc
	unobserve    func() // ends the lease gauge's reports
	stop         chan struct{}
	done         chan struct{}
	once         sync.Once
}

type corpusState struct {
	state      pipeline.GraphState
	lastChange time.Time
	merged     int // chunks merged since the start, pending ones included
	// unreported lists the current communities without a report as last seen (nil:
	// not known since the start); reportsChecked is when (see checkReports).
	unreported     []string
	reportsChecked time.Time
	// detecting is set while a detection run of the corpus is under way.
	detecting bool
}

// New prepares the grapher.
func New(cfg Config, deps Deps) (*Service, error) {
	if deps.Bus == nil || deps.Graph == nil || deps.Vectors == nil || deps.Embedder == nil {
		return nil, errors.New("grapher: bus, graph store, vector store and embedder are required")
	}
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("grapher: %w", err)
	}
	log := deps.Logger
	if log == nil {
		log = slog.Default()
	}
	host, _ := os.Hostname()
	s := &Service{cfg: cfg, deps: deps, embedder: llm.NonZero(deps.Embedder), log: log.With("service", "grapher"), corpora: map[string]*corpusState{},
		stop: make(chan struct{}), done: make(chan struct{}), failed: make(chan error, 1),
		holder: fmt.Sprintf("%s/%d/%x", host, os.Getpid(), rand.Uint64()), all: &shard{n: -1}, owned: map[int]*shard{},
		detectSlots: make(chan struct{}, cfg.DetectConcurrency), quitBalance: make(chan struct{}), balanced: make(chan struct{})}
	s.merger = newMerger(deps.Graph, newVersionCache(nil, versionCacheEntries), cfg.BatchSize, cfg.BatchWait)
	instruments().metrics.Zero(context.Background())
	s.outages = pipeline.NewDependencies(map[string]pipeline.Probe{
		graphstore.Dependency: pipeline.ProbeOf(deps.Graph), vectorstore.Dependency: pipeline.ProbeOf(deps.Vectors)}, s.log)
	s.runner = pipeline.NewRunner(deps.Bus, pipeline.StageGrapher, events.KindExtractions, cfg.Stage, s.outages.Handler(s.handleExtraction), s.log)
	pipeline.StartQuarantineMetric(pipeline.StageGrapher)
	return s, nil
}

// Start takes the grapher lease (waiting while another grapher holds it), loads the
// progress of every corpus (a crash between a merge and a detection run leaves the
// corpus dirty, and detection resumes), then starts consuming and scheduling.
func (s *Service) Start(ctx context.Context) (err error) {
	s.unobserve = observeLease(s.active, func() int { return len(s.heldShards()) })
	if s.cfg.Shards > 0 {
		return s.startSharded(ctx)
	}
	if s.cfg.Lease {
		if err := s.acquireLease(ctx); err != nil {
			return err
		}
		defer func() {
			if err != nil {
				err = errors.Join(err, s.lease.Release(context.WithoutCancel(ctx)))
			}
		}()
	}
	// Checked with the lease held: a sharded grapher shards the stream before it waits
	// for this lease to be free (startSharded).
	if n, err := pipeline.Shards(ctx, s.deps.Bus, events.KindExtractions); err != nil {
		return fmt.Errorf("grapher: %w", err)
	} else if n > 0 {
		return fmt.Errorf("grapher: the bus's extractions are in %d shards: start every grapher with -shards %d", n, n)
	}
	if err := s.probe(ctx); err != nil {
		return err
	}
	corpora, err := s.deps.Graph.Corpora(ctx)
	if err != nil {
		return fmt.Errorf("grapher: listing corpora: %w", err)
	}
	for _, c := range corpora {
		st, err := pipeline.LoadGraphState(ctx, s.kv, c)
		if err != nil {
			return err
		}
		s.corpora[c] = &corpusState{state: st}
	}
	s.merger.start() //nolint:contextcheck // the merge loop runs each batch under its requesters' contexts
	if err := s.runner.Start(ctx); err != nil {
		return err
	}
	s.started.Store(true)
	s.stopPauses = func() {}
	if src := s.outageSources(); len(src) > 0 {
		s.stopPauses = pipeline.ReportPauses(ctx, s.deps.Bus, pipeline.StageGrapher, src, s.log)
	}
	// Detection outlives Start's context (cancelled when shutdown begins) but not Stop,
	// which cancels it: a corpus whose detection is cut stays dirty, and the next
	// grapher detects it again, as after a crash.
	dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancelDetect, s.detectCtx = cancel, dctx
	s.all.ctx = dctx
	go s.schedule(dctx)
	return nil
}

// probe opens the state bucket and learns the embedding dimension.
func (s *Service) probe(ctx context.Context) error {
	kv, err := s.deps.Bus.KV(ctx, schema.StateBucket)
	if err != nil {
		return fmt.Errorf("grapher: opening state bucket: %w", err)
	}
	s.kv = kv
	s.merger.versions.kv = kv
	s.merger.cur.kv = kv
	dim, err := llm.ProbeDimension(ctx, s.deps.Embedder)
	if err != nil {
		return fmt.Errorf("grapher: %w", err)
	}
	s.dim = dim
	return nil
}

// Stop stops consuming, lets in-flight merges commit, cancels a running detection and
// waits for it to return, and releases the lease, so a successor need not wait for it
// to expire.
func (s *Service) Stop(ctx context.Context) error {
	var err error
	s.once.Do(func() {
		if s.unobserve != nil {
			defer s.unobserve()
		}
		if !s.started.Load() {
			close(s.stop)
			return // Start failed or never ran: it released what it had taken
		}
		s.outages.Stop() // merges waiting for a store give their messages back
		err = s.stopConsumers(ctx)
		s.merger.stop()
		close(s.stop)
		s.cancelDetect()
		select {
		case <-s.done:
		case <-ctx.Done():
			err = errors.Join(err, fmt.Errorf("grapher: waiting for detection: %w", ctx.Err()))
		}
		s.stopPauses()
		if s.lease != nil {
			err = errors.Join(err, s.lease.Release(ctx))
		}
		err = errors.Join(err, s.releaseShards(ctx))
	})
	return err
}

// active reports whether this grapher is the one merging: started and holding its lease
// (or running without one).
func (s *Service) active() bool {
	if !s.started.Load() {
		return false
	}
	if s.cfg.Shards > 0 {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.owned) > 0
	}
	if s.lease == nil {
		return !s.cfg.Lease
	}
	select {
	case <-s.lease.Lost():
		return false
	default:
		return true
	}
}

// Failed reports the loss of the lease: the process must stop merging, since
// another grapher may be taking over (service.Run then shuts it down).
func (s *Service) Failed() <-chan error { return s.failed }

func (s *Service) acquireLease(ctx context.Context) error {
	l, err := s.deps.Bus.AcquireLease(ctx, schema.LeaseBucket, bus.LeaseOptions{Key: schema.GrapherLease, Holder: s.holder, Logger: s.log})
	if err != nil {
		return fmt.Errorf("grapher: %w", err)
	}
	s.lease = l
	go func() {
		select {
		case <-l.Lost():
			s.failed <- fmt.Errorf("grapher: %w", l.Err())
		case <-s.stop:
		}
	}()
	return nil
}

// schedule runs detection for corpora that are dirty and quiet (or very busy), each
// run on its own goroutine, at most DetectConcurrency at once and one per corpus: a
// long run of one corpus holds back neither the merges nor (while a slot is free) the
// runs of the others. A due corpus that finds no free slot is tried again at the next
// tick, in the map's random order, so that the corpora waiting take turns.
func (s *Service) schedule(ctx context.Context) {
	defer close(s.done)
	var runs sync.WaitGroup
	defer runs.Wait()
	tick := time.NewTicker(min(s.cfg.Debounce/4, 250*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
		for _, corpus := range s.dueNow(ctx) {
			select {
			case <-s.stop:
				return
			case s.detectSlots <- struct{}{}:
			default:
				continue // every slot busy: the corpus stays due
			}
			sh := s.beginDetection(corpus)
			if sh == nil {
				<-s.detectSlots // no longer ours, or already running
				continue
			}
			runs.Go(func() { //nolint:contextcheck // a run lives in its shard's context, derived from ctx
				s.runDetection(sh, corpus)
			})
		}
		s.checkReports(ctx)
	}
}

// beginDetection marks a corpus of an owned shard as detecting and returns the shard,
// or nil when the corpus is no longer this grapher's or is detecting already.
func (s *Service) beginDetection(corpus string) *shard {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.corpora[corpus]
	sh := s.owner(corpus)
	if !ok || sh == nil || st.detecting {
		return nil
	}
	st.detecting = true
	sh.runs.Add(1)
	return sh
}

// runDetection runs one detection of a corpus of sh under sh's context (cancelled by
// Stop, and when the shard is given up or lost) and frees its slot.
func (s *Service) runDetection(sh *shard, corpus string) {
	defer func() {
		s.mu.Lock()
		if st, ok := s.corpora[corpus]; ok {
			st.detecting = false
		}
		s.mu.Unlock()
		sh.runs.Done()
		<-s.detectSlots
	}()
	ctx := sh.ctx
	// A model outage pauses detection (descriptions and embeddings need the model)
	// rather than failing and re-running it every tick; Stop ends the wait.
	start := time.Now()
	err := s.Detect(llm.WaitOutOutages(ctx, s.stop), corpus)
	if ctx.Err() == nil {
		recordDetection(ctx, time.Since(start), err)
	}
	if err != nil && ctx.Err() == nil {
		if s.outages.Await(ctx, err) == nil {
			return // a store was down and answers again: the corpus, still dirty, runs next
		}
		s.detectFailed(ctx, corpus, err)
	}
	// Cancelled (Stop, or the shard given up): the corpus stays dirty.
}

// Pauses between failed detection runs of a corpus: the first retry after about
// retryFirst, doubling with every failure up to retryCeiling, with jitter.
const (
	retryFirst   = time.Second
	retryCeiling = 5 * time.Minute
)

// retryAfter is the pause after the failures-th failed run in a row: retryFirst·2^(n-1)
// capped at retryCeiling, drawn from its upper half so that graphers and corpora that
// failed together do not retry together.
func retryAfter(failures int, jitter float64) time.Duration {
	d := retryCeiling
	if failures < 20 && retryFirst<<(failures-1) < retryCeiling {
		d = retryFirst << (failures - 1)
	}
	return d/2 + time.Duration(jitter*float64(d/2))
}

// detectFailed records a failed run: the corpus stays dirty and is tried again after
// a pause that grows with every failure in a row, and status says since when and why
// it fails. A run that succeeds clears this (Detect).
func (s *Service) detectFailed(ctx context.Context, corpus string, err error) {
	now := time.Now().UTC()
	s.mu.Lock()
	st := s.corpora[corpus]
	g := &st.state
	if g.Failures == 0 {
		g.FailingSince = now
	}
	g.Failures++
	g.LastError = shortID(err.Error())
	wait := retryAfter(g.Failures, rand.Float64())
	g.NextRetry = now.Add(wait)
	failures, since := g.Failures, g.FailingSince
	s.mu.Unlock()
	s.log.Error("community detection failed; will retry", "corpus", corpus, "err", err, "failures", failures,
		"failing_since", since, "retry_in", wait.Round(time.Millisecond).String())
	if err := s.saveState(ctx, corpus); err != nil {
		s.log.Warn("recording the failed detection run", "corpus", corpus, "err", err)
	}
}

// dueNow lists the corpora to detect now: due, and for those that are merely quiet
// (not forced), nothing still on its way to the grapher. On a loaded machine merges can
// pause longer than the debounce while chunks wait for the chunker or the extractor;
// a run then would rewrite reports that the next run rewrites again.
func (s *Service) dueNow(ctx context.Context) []string {
	due, forced := s.due()
	out := due[:0]
	for i, c := range due {
		if !forced[i] && s.upstreamBusy(ctx, c) {
			s.mu.Lock()
			if st, ok := s.corpora[c]; ok {
				st.lastChange = time.Now() // look again after another debounce
			}
			s.mu.Unlock()
			continue
		}
		out = append(out, c)
	}
	return out
}

// due lists the dirty corpora that are quiet or forced (see forced), and which are forced.
func (s *Service) due() (due []string, forced []bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for c, st := range s.corpora {
		if !st.state.Dirty || now.Before(st.state.NextRetry) || st.detecting || s.owner(c) == nil {
			continue
		}
		f := s.forced(st)
		if f || now.Sub(st.lastChange) >= s.cfg.Debounce {
			due, forced = append(due, c), append(forced, f)
		}
	}
	return due, forced
}

// upstreamBusy reports whether documents or chunks of the corpus wait for the chunker
// or the extractor. An error reading the status counts as idle: detection goes ahead
// as it did before this check.
func (s *Service) upstreamBusy(ctx context.Context, corpus string) bool {
	st, err := pipeline.GetStatus(ctx, s.deps.Bus, corpus)
	if err != nil {
		s.log.Warn("reading the pipeline status before detection", "corpus", corpus, "err", err)
		return false
	}
	for _, ss := range st.Stages {
		if (ss.Stage == pipeline.StageChunker || ss.Stage == pipeline.StageExtractor) && ss.Pending+ss.InFlight > 0 {
			return true
		}
	}
	return false
}

// forced reports whether a busy corpus has merged enough since its last detection
// run to detect now anyway: MaxChanges chunks, and DetectGrowth times those merged
// before (so the runs while a corpus streams in grow geometrically).
func (s *Service) forced(st *corpusState) bool {
	before := max(st.merged-st.state.Changes, 0)
	return st.state.Changes >= s.cfg.MaxChanges && float64(st.state.Changes) >= s.cfg.DetectGrowth*float64(before)
}

// markDirty records a merge; the first merge after a run persists Dirty before the
// message is acknowledged, so status never reports a corpus complete too early and a
// crash never forgets a pending detection.
func (s *Service) markDirty(ctx context.Context, corpus string) error {
	s.mu.Lock()
	st, ok := s.corpora[corpus]
	if !ok {
		st = &corpusState{}
		s.corpora[corpus] = st
	}
	st.lastChange = time.Now()
	st.state.Changes++
	st.merged++
	wasDirty := st.state.Dirty
	st.state.Dirty = true
	s.mu.Unlock()
	if wasDirty {
		return nil
	}
	return s.saveState(ctx, corpus)
}

// RegisterFlags adds the grapher's flags with the current values as defaults.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.DurationVar(&c.Debounce, "detect-debounce", c.Debounce, "quiet time after the last merge before communities are detected")
	fs.IntVar(&c.MaxChanges, "detect-max-changes", c.MaxChanges, "merged chunks that force a detection run even while busy")
	fs.Float64Var(&c.DetectGrowth, "detect-growth", c.DetectGrowth, "a forced detection run while busy also waits until the chunks merged since the last run are this multiple of those merged before it (0: -detect-max-changes alone)")
	fs.Float64Var(&c.Resolution, "leiden-resolution", c.Resolution, "Leiden resolution γ (higher: more, smaller communities)")
	fs.Uint64Var(&c.Seed, "leiden-seed", c.Seed, "Leiden random seed (fixed for determinism)")
	fs.IntVar(&c.MaxLevels, "leiden-max-levels", c.MaxLevels, "community levels kept")
	fs.IntVar(&c.MinCommunitySize, "min-community-size", c.MinCommunitySize, "smallest community that gets a report")
	fs.Float64Var(&c.Damping, "pagerank-damping", c.Damping, "PageRank damping factor")
	fs.Float64Var(&c.MaxCommunityChange, "community-max-change", c.MaxCommunityChange, "share of its members a community may change (and of its size since its report) and keep its id and report (0: any change is a new community)")
	fs.BoolVar(&c.WarmStart, "detect-warm", c.WarmStart, "start each community detection from the stored hierarchy: fewer reports rewritten, but communities depend on document order (false: communities depend on the graph alone, every run from scratch)")
	fs.IntVar(&c.SummarizeAfter, "summarize-descriptions-after", c.SummarizeAfter, "descriptions an entity accumulates before the LLM merges them")
	fs.StringVar(&c.EntityEmbed, "entity-embed", c.EntityEmbed, "what is embedded for an entity, for query-time entity linking: "+EntityEmbedDescription+" (name, type and description, re-embedded as the description grows) or "+EntityEmbedName+" (name and type, embedded once: far fewer tokens, but entity linking measured lower with E5)")
	fs.IntVar(&c.BatchSize, "merge-batch", c.BatchSize, "chunks merged into the graph store per group commit")
	fs.StringVar(&c.Taxonomy.Strategy, "taxonomy-strategy", c.Taxonomy.Strategy, "entity type consolidation: stratified or global")
	fs.IntVar(&c.Taxonomy.PerCorpus, "taxonomy-types-per-corpus", c.Taxonomy.PerCorpus, "entity types kept per corpus")
	fs.Float64Var(&c.Taxonomy.MinPercent, "taxonomy-min-percent", c.Taxonomy.MinPercent, "minimum share of a corpus's mentions for a kept type")
	fs.BoolVar(&c.Lease, "lease", c.Lease, "hold the grapher lease in NATS so that one grapher is active per bus, a second one waiting (not needed, and not taken, on the embedded graph store, which admits one process)")
	fs.IntVar(&c.Shards, "shards", c.Shards, "split the corpora into this many shards, each held by one grapher replica at a time through its own lease, so that replicas share the corpora; fixed once the bus has them (0: one active grapher per bus)")
	fs.IntVar(&c.DetectConcurrency, "detect-concurrency", c.DetectConcurrency, "corpora one grapher detects communities of at once, so that a long run of one corpus does not hold back the others")
	c.Stage.RegisterFlags(fs, "grapher")
}
