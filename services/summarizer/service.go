package summarizer

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strconv"
	"sync"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/service"
	"github.com/graphrag/graphrag/pkg/textseg"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// Config tunes the summarizer. New gives ContextTokens and ReportEmbed their
// DefaultConfig value when zero, and Stage its own when its Workers is zero. Validate
// rejects what New would not run with.
type Config struct {
	// ContextTokens bounds the community context given to the model.
	ContextTokens int
	// ReportEmbed is what is embedded for a report: ReportEmbedNone (the default: nothing
	// by the model; the query service selects reports by their members' entity vectors
	// and their words, and the record's vector is the offline embedder's of its title and
	// summary, docs/adr/0070-reports-need-no-embedding.md), ReportEmbedFull (title,
	// summary and findings) or ReportEmbedSummary (title and summary), both by the
	// embedding model, for a reader of the report vectors outside the query service.
	ReportEmbed string
	Stage       pipeline.StageConfig
}

// What Config.ReportEmbed may say is embedded for a report.
const (
	ReportEmbedNone    = "none"
	ReportEmbedFull    = "full"
	ReportEmbedSummary = "summary"
)

// DefaultWorkers is how many community events a replica handles at once by default.
// More than an LLM-bound stage's usual 4: the reports of concurrent handlers are written
// together (reportWriter), so concurrency is what makes the groups large: on a 2k-chunk
// corpus offline, 1,546 writes for 3,065 reports at 4 workers, ~220 at 32, and a quarter
// less process CPU (docs/benchmarks.md). With a model, the client's own concurrency
// limit still bounds the requests in flight.
const DefaultWorkers = 32

// DefaultConfig: an 8k-token context, DefaultWorkers per replica.
func DefaultConfig() Config {
	st := pipeline.DefaultStageConfig()
	st.Workers = DefaultWorkers
	return Config{ContextTokens: 8000, ReportEmbed: ReportEmbedNone, Stage: st}
}

// withDefaults gives the fields whose zero stands for their default (see Config) their
// DefaultConfig value.
func (c Config) withDefaults() Config {
	def := DefaultConfig()
	service.FillZeros(&c, def, "ContextTokens", "ReportEmbed")
	c.Stage = c.Stage.Or(def.Stage)
	return c
}

// Validate names the flag of every invalid report or consumer value.
func (c Config) Validate() error {
	var p service.Problems
	service.AtLeast(&p, "-report-context-tokens", c.ContextTokens, 1)
	service.OneOf(&p, "-report-embed", c.ReportEmbed, ReportEmbedNone, ReportEmbedFull, ReportEmbedSummary)
	p.Join(c.Stage.Validate("summarizer"))
	return p.Err()
}

// Deps are the backends of the summarizer.
type Deps struct {
	Bus     *bus.Bus
	Graph   GraphReader
	Vectors VectorStore
	// Embedder turns texts into vectors: the LLM client's embeddings or the
	// offline embedder.
	Embedder llm.Embedder
	LLM      *llm.Client // nil: extractive reports
	Logger   *slog.Logger
}

// Service is the summarizer.
type Service struct {
	cfg    Config
	deps   Deps
	log    *slog.Logger
	runner *pipeline.Runner
	dim    int

	// stopping ends the handlers' waits for a model endpoint that is down; stopPauses
	// ends the record of the pause (pipeline.ReportPauses).
	stopping   chan struct{}
	stores     *pipeline.Dependencies // waits out an outage of a store
	stopOnce   sync.Once
	logOnce    sync.Once
	stopPauses func()

	// handling serializes the handling of one community within this replica: every
	// detection run announces the communities still without a report, so an event
	// of the next run may arrive while the previous run's is being handled, and both
	// would ask the model.
	handling keyLock

	// writer writes the reports of concurrent handlers together.
	writer *reportWriter
	// state is schema.StateBucket, where reports the store refused are quarantined.
	state bus.KV
}

// keyLock is a mutex per key.
type keyLock struct {
	mu   sync.Mutex
	held map[string]chan struct{}
}

// lock waits until no one else holds key, takes it, and returns its release.
func (k *keyLock) lock(ctx context.Context, key string) (func(), error) {
	for {
		k.mu.Lock()
		ch, busy := k.held[key]
		if !busy {
			if k.held == nil {
				k.held = map[string]chan struct{}{}
			}
			ch = make(chan struct{})
			k.held[key] = ch
			k.mu.Unlock()
			return func() {
				k.mu.Lock()
				delete(k.held, key)
				k.mu.Unlock()
				close(ch)
			}, nil
		}
		k.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for another handling of community %s: %w", key, ctx.Err())
		}
	}
}

// New prepares the summarizer.
func New(cfg Config, deps Deps) (*Service, error) {
	if deps.Bus == nil || deps.Graph == nil || deps.Vectors == nil || deps.Embedder == nil {
		return nil, errors.New("summarizer: bus, graph store, vector store and embedder are required")
	}
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("summarizer: %w", err)
	}
	log := deps.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Service{cfg: cfg, deps: deps, log: log.With("service", "summarizer"), stopping: make(chan struct{}),
		writer: &reportWriter{embedder: llm.NonZero(deps.Embedder), vectors: deps.Vectors}}
	instruments().metrics.Zero(context.Background())
	s.stores = pipeline.NewDependencies(map[string]pipeline.Probe{
		graphstore.Dependency: pipeline.ProbeOf(deps.Graph), vectorstore.Dependency: pipeline.ProbeOf(deps.Vectors)}, s.log)
	s.runner = pipeline.NewRunner(deps.Bus, pipeline.StageSummarizer, events.KindCommunities, cfg.Stage, s.pausing(s.stores.Handler(s.handleCommunity)), s.log)
	pipeline.StartQuarantineMetric(pipeline.StageSummarizer)
	return s, nil
}

// pausing runs h with model calls that wait out an outage of the endpoint, so that the
// stage pauses instead of failing its messages (a waiting worker holds its message: with
// every worker waiting, the consumer pulls nothing more). An outage error that still
// reaches the bus (the service is stopping) keeps the message.
func (s *Service) pausing(h pipeline.Handler) pipeline.Handler {
	return func(ctx context.Context, corpus string, m *bus.Message) error {
		err := h(llm.WaitOutOutages(ctx, s.stopping), corpus, m)
		if errors.Is(err, llm.ErrOutage) {
			return bus.Unavailable(err)
		}
		return err
	}
}

// outageSources are what the summarizer waits for when it is down: the stores, its
// chat client and its embedder when that is a client too.
func (s *Service) outageSources() pipeline.AnyOutage {
	o := pipeline.AnyOutage{s.stores}
	if s.deps.LLM != nil {
		o = append(o, s.deps.LLM)
	}
	if src, ok := s.deps.Embedder.(pipeline.OutageSource); ok && s.deps.Embedder != llm.Embedder(s.deps.LLM) {
		o = append(o, src)
	}
	return o
}

// Start begins consuming.
func (s *Service) Start(ctx context.Context) error {
	dim, err := llm.ProbeDimension(ctx, s.deps.Embedder)
	if err != nil {
		return fmt.Errorf("summarizer: %w", err)
	}
	s.dim = dim
	if s.cfg.ReportEmbed == ReportEmbedNone {
		// No model call: a vector of the offline embedder at the collection's dimension,
		// which the stores require and nothing searches.
		s.writer.embedder = llm.NonZero(hashembed.New(dim))
	}
	if s.state, err = s.deps.Bus.KV(ctx, schema.StateBucket); err != nil {
		return fmt.Errorf("summarizer: opening state bucket: %w", err)
	}
	if err := s.runner.Start(ctx); err != nil {
		return err
	}
	if src := s.outageSources(); len(src) > 0 {
		s.stopPauses = pipeline.ReportPauses(ctx, s.deps.Bus, pipeline.StageSummarizer, src, s.log)
	}
	return nil
}

// Stop stops pulling and finishes in-flight reports (those waiting for the model give
// up and are kept for later); safe twice.
func (s *Service) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() { close(s.stopping) })
	s.stores.Stop()
	err := s.runner.Stop(ctx)
	if s.stopPauses != nil {
		s.stopPauses()
	}
	s.logOnce.Do(func() {
		writes, written := s.writer.counts()
		s.log.InfoContext(ctx, "stopped", "reports_written", written, "report_writes", writes)
	})
	return err
}

// subReportDeliveries is the delivery at which a community report is written even if some
// sub-community reports are still missing (deliveries 1 and 2 wait: 1 s + 5 s of backoff).
const subReportDeliveries = 3

func (s *Service) handleCommunity(ctx context.Context, corpus string, m *bus.Message) error {
	var ev events.Community
	if err := events.Decode(m.Data, &ev); err != nil {
		return bus.Permanent(fmt.Errorf("decoding community: %w", err))
	}
	if ev.Corpus != corpus {
		return bus.Permanent(&events.FieldError{Field: "corpus", Problem: fmt.Sprintf("%q does not match subject corpus %q", ev.Corpus, corpus)})
	}
	com, err := s.deps.Graph.Community(ctx, corpus, ev.ID)
	if errors.Is(err, graphstore.ErrNotFound) {
		s.log.DebugContext(ctx, "stale community event: replaced by a later run", "corpus", corpus, "community", ev.ID)
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading community %s: %w", ev.ID, err)
	}
	release, err := s.handling.lock(ctx, com.ID)
	if err != nil {
		return err
	}
	defer release()
	coll := schema.Collection(corpus, schema.Communities)
	existing, err := s.deps.Vectors.Get(ctx, coll, []string{com.ID})
	if err != nil && !errors.Is(err, vectorstore.ErrNotFound) {
		return fmt.Errorf("community %s: reading its report: %w", com.ID, err)
	}
	if len(existing) == 1 {
		// Written before, by a delivery that stopped before announcing it or for the
		// same community announced by another run: announce it (a duplicate of an
		// announcement made is dropped by its message id), write nothing.
		return s.announce(ctx, corpus, summaryOf(corpus, existing[0], com, ev.Run))
	}
	rec, err := s.newReport(ctx, corpus, com, m.Deliveries, ev.Run)
	if refused := (*refusedError)(nil); errors.As(err, &refused) {
		return s.quarantine(ctx, corpus, com.ID, refused.rec)
	}
	if err != nil {
		return err
	}
	if err := pipeline.ReleaseQuarantined(ctx, s.state, corpus, pipeline.StageSummarizer, coll, []string{com.ID}); err != nil {
		return fmt.Errorf("community %s: %w", com.ID, err)
	}
	// A detection run may have replaced the community while the report was being
	// written, and deleted the reports of replaced communities before this one existed:
	// look again now that it is written, and take it back if the community is gone.
	if _, err := s.deps.Graph.Community(ctx, corpus, com.ID); errors.Is(err, graphstore.ErrNotFound) {
		s.log.DebugContext(ctx, "community replaced while its report was written; deleting the report", "corpus", corpus, "community", com.ID)
		if err := s.deps.Vectors.Delete(ctx, coll, []string{com.ID}); err != nil {
			return fmt.Errorf("community %s: deleting the report of a replaced community: %w", com.ID, err)
		}
		return nil
	} else if err != nil {
		return fmt.Errorf("reading community %s: %w", com.ID, err)
	}
	recordReport(ctx, s.deps.LLM != nil, rec.Attrs[schema.ReportMethod])
	return s.announce(ctx, corpus, summaryOf(corpus, rec, com, ev.Run))
}

// quarantine records a report the store refused as invalid (pipeline.Quarantine) and
// lets the community go without it: nothing is announced, and the grapher does not
// count the community as waiting for its report. The next detection run that finds
// it without a report announces it again, and a report written then releases it.
func (s *Service) quarantine(ctx context.Context, corpus, id string, refused vectorstore.Refused) error {
	if err := pipeline.Quarantine(ctx, s.state, corpus, pipeline.StageSummarizer, schema.Collection(corpus, schema.Communities), []vectorstore.Refused{refused}); err != nil {
		return fmt.Errorf("community %s: %w", id, err)
	}
	s.log.WarnContext(ctx, "community report quarantined", "corpus", corpus, "community", id, "reason", refused.Err)
	return nil
}

// newReport writes com's report: a copy of its only child's when that child has the
// same members (twin.go), else one written from its context.
func (s *Service) newReport(ctx context.Context, corpus string, com graphstore.Community, deliveries uint64, run string) (vectorstore.Record, error) {
	if child, ok, err := s.twinReport(ctx, corpus, com); err != nil {
		return vectorstore.Record{}, err
	} else if ok {
		return s.copyReport(ctx, corpus, com, child, run)
	}
	subs, err := s.subReports(ctx, corpus, com)
	if err != nil {
		return vectorstore.Record{}, err
	}
	// A higher level condenses its sub-communities' reports, which other replicas (or
	// workers) may still be writing: wait for them a couple of redeliveries, then write
	// with what there is. Without the wait the report would depend on timing, and
	// re-indexing identical content would miss the model cache. The check comes before
	// the members are read: a top-level community's members and relationships are much
	// of the graph, and reading them for a delivery that waits was a large share of the
	// summarizer's time at 100k chunks (docs/benchmarks.md).
	if missing := len(com.ChildIDs) - len(subs); missing > 0 && deliveries < subReportDeliveries {
		return vectorstore.Record{}, fmt.Errorf("community %s: %d of %d sub-community reports not written yet; retrying", com.ID, missing, len(com.ChildIDs))
	}
	cc, err := s.contextWith(ctx, corpus, com, subs)
	if err != nil {
		return vectorstore.Record{}, err
	}
	return s.writeReport(ctx, corpus, cc, run)
}

// writeReport writes the community's report (by the model, or extractive) with its
// embedding and returns the record written.
func (s *Service) writeReport(ctx context.Context, corpus string, cc CommunityContext, run string) (vectorstore.Record, error) {
	com := cc.Community
	rep, method, err := s.report(ctx, corpus, cc)
	if err != nil {
		return vectorstore.Record{}, err
	}
	text := rep.Text()
	rj, _ := json.Marshal(rep)
	rec := vectorstore.Record{ID: com.ID, Text: text, Attrs: map[string]string{
		schema.ReportLevel: strconv.Itoa(com.Level), schema.ReportParent: com.ParentID, schema.ReportTitle: rep.Title,
		schema.ReportRating: strconv.FormatFloat(rep.Rating, 'f', 1, 64), schema.ReportMembers: strconv.Itoa(len(com.Members)),
		schema.ReportRelationships: strconv.Itoa(com.RelationshipCount), schema.ReportJSON: string(rj), schema.ReportMethod: method,
		schema.ReportRun: run,
	}}
	if err := s.writer.write(ctx, s.reportSpec(corpus), &rec, s.embedText(rep)); err != nil {
		return vectorstore.Record{}, fmt.Errorf("community %s: writing report: %w", com.ID, err)
	}
	return rec, nil
}

// report asks the model for the community's report, or builds the extractive one; method
// says which.
func (s *Service) report(ctx context.Context, corpus string, cc CommunityContext) (schema.Report, string, error) {
	if s.deps.LLM == nil {
		return Extractive(cc), "extractive/v1", nil
	}
	rep, err := s.llmReport(ctx, cc)
	switch {
	case errors.Is(err, llm.ErrInvalidJSON):
		// The model could not produce a valid report after its retries: a community
		// without a report would be invisible to global search, so write the
		// extractive report instead, and say so in its method.
		s.log.WarnContext(ctx, "the model gave no valid report; writing the extractive one", "corpus", corpus, "community", cc.Community.ID, "err", err)
		return Extractive(cc), "extractive/v1 (model output invalid)", nil
	case errors.Is(err, llm.ErrTimeout) && !errors.Is(err, llm.ErrOutage):
		// The model answers, but not within its largest time budget (pkg/llm grows it
		// with the speed observed): one report must not keep the corpus from completing.
		s.log.WarnContext(ctx, "the model gave no report within its largest time budget; writing the extractive one", "corpus", corpus, "community", cc.Community.ID, "err", err)
		return Extractive(cc), "extractive/v1 (model timed out)", nil
	}
	if err != nil {
		return rep, "", fmt.Errorf("community %s: writing report: %w", cc.Community.ID, err)
	}
	return rep, "llm/" + s.deps.LLM.Config().ChatModel, nil
}

// summaryOf is the summary event announcing the report rec of community com. The run is
// the one the report was written for; run is used for reports that do not record theirs.
func summaryOf(corpus string, rec vectorstore.Record, com graphstore.Community, run string) *events.Summary {
	if r := rec.Attrs[schema.ReportRun]; r != "" {
		run = r
	}
	rating, _ := strconv.ParseFloat(rec.Attrs[schema.ReportRating], 64)
	return &events.Summary{Schema: events.SchemaSummary, Corpus: corpus, CommunityID: com.ID, Level: com.Level,
		Title: textseg.Clip(rec.Attrs[schema.ReportTitle], events.MaxTitleBytes), Rating: rating, Method: rec.Attrs[schema.ReportMethod], Run: run}
}

// announce publishes the summary event of a report written.
func (s *Service) announce(ctx context.Context, corpus string, sum *events.Summary) error {
	b, err := events.Encode(sum)
	if err != nil {
		return bus.Permanent(err)
	}
	if _, err := s.deps.Bus.Publish(ctx, events.Subject(events.KindSummaries, corpus), b, bus.WithMsgID(sum.MsgID())); err != nil {
		return fmt.Errorf("publishing summary: %w", err)
	}
	return nil
}

// RegisterFlags adds the summarizer's flags with the current values as defaults.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.IntVar(&c.ContextTokens, "report-context-tokens", c.ContextTokens, "token budget of the community context given to the model")
	fs.StringVar(&c.ReportEmbed, "report-embed", c.ReportEmbed, "what the embedding model embeds for a community report: "+ReportEmbedNone+" (nothing: the query service selects reports by their members' entity vectors and their words; the record holds the offline embedder's vector), "+ReportEmbedFull+" (title, summary and findings) or "+ReportEmbedSummary+" (title and summary), for readers of report vectors outside the query service")
	c.Stage.RegisterFlags(fs, "summarizer")
}

// reportSpec is the report collection of corpus: reports are found by vector and id, never
// by words, so it has no lexical index (the grapher creates it the same way).
func (s *Service) reportSpec(corpus string) vectorstore.CollectionSpec {
	return vectorstore.CollectionSpec{Name: schema.Collection(corpus, schema.Communities), Dim: s.dim}
}
