package summarizer

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// Config tunes the summarizer.
type Config struct {
	// ContextTokens bounds the community context given to the model.
	ContextTokens int
	Stage         pipeline.StageConfig
}

// DefaultConfig: an 8k-token context, 4 workers per replica.
func DefaultConfig() Config {
	return Config{ContextTokens: 8000, Stage: pipeline.DefaultStageConfig()}
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
}

// New prepares the summarizer.
func New(cfg Config, deps Deps) (*Service, error) {
	if deps.Bus == nil || deps.Graph == nil || deps.Vectors == nil || deps.Embedder == nil {
		return nil, errors.New("summarizer: bus, graph store, vector store and embedder are required")
	}
	if cfg.ContextTokens <= 0 {
		cfg.ContextTokens = DefaultConfig().ContextTokens
	}
	if cfg.Stage.Workers == 0 {
		cfg.Stage = DefaultConfig().Stage
	}
	log := deps.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Service{cfg: cfg, deps: deps, log: log.With("service", "summarizer")}
	countersAtZero(context.Background())
	s.runner = pipeline.NewRunner(deps.Bus, pipeline.StageSummarizer, events.KindCommunities, cfg.Stage, s.handleCommunity, s.log)
	return s, nil
}

// Start begins consuming.
func (s *Service) Start(ctx context.Context) error {
	dim, err := llm.ProbeDimension(ctx, s.deps.Embedder)
	if err != nil {
		return fmt.Errorf("summarizer: %w", err)
	}
	s.dim = dim
	return s.runner.Start(ctx)
}

// Stop stops pulling and finishes in-flight reports; safe twice.
func (s *Service) Stop(ctx context.Context) error { return s.runner.Stop(ctx) }

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
	cc, err := s.Context(ctx, corpus, com)
	if err != nil {
		return err
	}
	// A higher level condenses its sub-communities' reports, which other replicas (or
	// workers) may still be writing: wait for them a couple of redeliveries, then write
	// with what there is. Without the wait the report would depend on timing, and
	// re-indexing identical content would miss the model cache.
	if missing := len(com.ChildIDs) - len(cc.SubReports); missing > 0 && m.Deliveries < subReportDeliveries {
		return fmt.Errorf("community %s: %d of %d sub-community reports not written yet; retrying", com.ID, missing, len(com.ChildIDs))
	}
	var rep Report
	method := "extractive/v1"
	if s.deps.LLM != nil {
		method = "llm/" + s.deps.LLM.Config().ChatModel
		rep, err = s.llmReport(ctx, cc)
		if errors.Is(err, llm.ErrInvalidJSON) {
			// The model could not produce a valid report after its retries: a community
			// without a report would be invisible to global search, so write the
			// extractive report instead, and say so in its method.
			s.log.WarnContext(ctx, "the model gave no valid report; writing the extractive one", "corpus", corpus, "community", com.ID, "err", err)
			rep, method, err = Extractive(cc), "extractive/v1 (model output invalid)", nil
		}
		if err != nil {
			return fmt.Errorf("community %s: writing report: %w", com.ID, err)
		}
	} else {
		rep = Extractive(cc)
	}
	text := rep.Text()
	vecs, err := s.deps.Embedder.Embed(ctx, []string{text})
	if err != nil {
		return fmt.Errorf("community %s: embedding report: %w", com.ID, err)
	}
	coll := schema.Collection(corpus, schema.Communities)
	if err := s.deps.Vectors.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: coll, Dim: s.dim, Lexical: true}); err != nil {
		return fmt.Errorf("ensuring community collection: %w", err)
	}
	rj, _ := json.Marshal(rep)
	rec := vectorstore.Record{ID: com.ID, Vector: vecs[0], Text: text, Attrs: map[string]string{
		schema.ReportLevel: strconv.Itoa(com.Level), schema.ReportParent: com.ParentID, schema.ReportTitle: rep.Title,
		schema.ReportRating: strconv.FormatFloat(rep.Rating, 'f', 1, 64), schema.ReportMembers: strconv.Itoa(len(com.Members)),
		schema.ReportRelationships: strconv.Itoa(com.RelationshipCount), schema.ReportJSON: string(rj), schema.ReportMethod: method,
	}}
	if err := s.deps.Vectors.Upsert(ctx, coll, []vectorstore.Record{rec}); err != nil {
		return fmt.Errorf("community %s: writing report: %w", com.ID, err)
	}
	sum := &events.Summary{Schema: events.SchemaSummary, Corpus: corpus, CommunityID: com.ID, Level: com.Level,
		Title: clip(rep.Title, events.MaxTitleBytes), Rating: rep.Rating, Method: method}
	b, err := events.Encode(sum)
	if err != nil {
		return bus.Permanent(err)
	}
	if _, err := s.deps.Bus.Publish(ctx, events.Subject(events.KindSummaries, corpus), b, bus.WithMsgID(sum.MsgID())); err != nil {
		return fmt.Errorf("publishing summary: %w", err)
	}
	recordReport(ctx, s.deps.LLM != nil, method)
	return nil
}

// RegisterFlags adds the summarizer's flags with the current values as defaults.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.IntVar(&c.ContextTokens, "report-context-tokens", c.ContextTokens, "token budget of the community context given to the model")
	c.Stage.RegisterFlags(fs, "summarizer")
}
