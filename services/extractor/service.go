package extractor

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/service"
)

const meterName = "github.com/graphrag/graphrag/services/extractor"

// Config tunes the extractor. New gives ChunkTokens, MaxEntities and MaxRelationships
// their DefaultConfig value when zero, and Chunker and Extract theirs when their Workers
// is zero; every other zero is a value. Validate rejects what New would not run with.
type Config struct {
	// ChunkTokens and ChunkOverlap size chunks in BPE tokens (cl100k); the overlap is
	// less than the size (0: none).
	ChunkTokens  int
	ChunkOverlap int
	// MinInformation, in [0, 1], is the information score under which a chunk is not
	// extracted (0: every chunk is).
	MinInformation float64
	// MaxEntities and MaxRelationships cap what one chunk contributes.
	MaxEntities      int
	MaxRelationships int
	// Gleanings is the number of extra LLM passes asking for missed entities (0: none).
	Gleanings int
	// Chunker and Extract tune the two consumers.
	Chunker pipeline.StageConfig
	Extract pipeline.StageConfig
}

// DefaultConfig is documented in docs/configuration.md.
func DefaultConfig() Config {
	ch := pipeline.DefaultStageConfig()
	// Concurrent documents' chunk embeddings share requests (pkg/llm's embed lane), so
	// more documents at once make fuller batches: MuSiQue (1,890 documents of one chunk)
	// took 1,433 chunk requests at 4 and 535 at 16 against an endpoint answering in 20 ms
	// two at a time, and indexed in 101 s instead of 184 s (docs/benchmarks.md).
	ch.Workers = 16
	ex := pipeline.DefaultStageConfig()
	ex.Workers = 8
	return Config{
		ChunkTokens:      600,
		ChunkOverlap:     100,
		MinInformation:   0.35,
		MaxEntities:      25,
		MaxRelationships: 40,
		Chunker:          ch,
		Extract:          ex,
	}
}

// withDefaults gives the fields whose zero stands for their default (see Config) their
// DefaultConfig value.
func (c Config) withDefaults() Config {
	def := DefaultConfig()
	service.FillZeros(&c, def, "ChunkTokens", "MaxEntities", "MaxRelationships")
	c.Chunker, c.Extract = c.Chunker.Or(def.Chunker), c.Extract.Or(def.Extract)
	return c
}

// Validate names the flag of every invalid chunking, extraction or consumer value.
func (c Config) Validate() error {
	var p service.Problems
	service.AtLeast(&p, "-chunk-tokens", c.ChunkTokens, 1)
	if c.ChunkOverlap < 0 || c.ChunkOverlap >= c.ChunkTokens {
		p.Add("-chunk-overlap", "must be in [0, %d) (below -chunk-tokens), got %d", c.ChunkTokens, c.ChunkOverlap)
	}
	service.Within(&p, "-min-information", c.MinInformation, 0, 1)
	service.AtLeast(&p, "-max-entities", c.MaxEntities, 1)
	service.AtLeast(&p, "-max-relationships", c.MaxRelationships, 1)
	service.AtLeast(&p, "-gleanings", c.Gleanings, 0)
	p.Join(c.Chunker.Validate("chunker"))
	p.Join(c.Extract.Validate("extract"))
	return p.Err()
}

// Deps are the backends the extractor uses.
type Deps struct {
	Bus     *bus.Bus
	Vectors VectorStore
	// Embedder turns texts into vectors: the LLM client's embeddings or the
	// offline embedder.
	Embedder llm.Embedder
	// LLM extracts entities when set; nil selects offline extraction.
	LLM    *llm.Client
	Logger *slog.Logger
}

// Service runs the chunker and extractor stages.
type Service struct {
	cfg     Config
	deps    Deps
	log     *slog.Logger
	chunker *pipeline.Runner
	extract *pipeline.Runner
	tax     *taxonomyCache
	dim     int
	pauses  *pauses
	// embedder is deps.Embedder giving every non-empty text a direction (llm.NonZero).
	embedder llm.Embedder
	// state holds the document and corpus records (schema.StateBucket), cache the
	// model answers the deletion of a document forgets (schema.LLMCacheBucket).
	state, cache bus.KV
	// offlineNoted holds the corpora whose settings offline extraction has looked at
	// (noteOfflineSettings).
	offlineNoted sync.Map
}

// New checks the dependencies and prepares the stages.
func New(cfg Config, deps Deps) (*Service, error) {
	if deps.Bus == nil || deps.Vectors == nil || deps.Embedder == nil {
		return nil, errors.New("extractor: bus, vector store and embedder are required")
	}
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("extractor: %w", err)
	}
	log := deps.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Service{cfg: cfg, deps: deps, embedder: llm.NonZero(deps.Embedder), log: log.With("service", "extractor")}
	instruments().metrics.Zero(context.Background())
	pipeline.StartQuarantineMetric(pipeline.StageChunker)
	s.pauses = newPauses(deps.LLM, deps.Embedder, deps.Vectors, s.log)
	s.chunker = pipeline.NewRunner(deps.Bus, pipeline.StageChunker, events.KindDocuments, cfg.Chunker, s.pauses.handler(s.handleDocument), s.log)
	s.extract = pipeline.NewRunner(deps.Bus, pipeline.StageExtractor, events.KindChunks, cfg.Extract, s.pauses.handler(s.handleChunk), s.log)
	return s, nil
}

// Start provisions the pipeline and starts consuming.
func (s *Service) Start(ctx context.Context) error {
	if err := s.openBuckets(ctx); err != nil {
		return err
	}
	dim, err := llm.ProbeDimension(ctx, s.deps.Embedder)
	if err != nil {
		return fmt.Errorf("extractor: %w", err)
	}
	s.dim = dim
	if err := s.chunker.Start(ctx); err != nil {
		return err
	}
	if err := s.extract.Start(ctx); err != nil {
		return err
	}
	s.pauses.report(ctx, s.deps.Bus, s.log)
	return nil
}

// openBuckets opens the key-value buckets the stages read and write.
func (s *Service) openBuckets(ctx context.Context) error {
	kv, err := s.deps.Bus.KV(ctx, schema.StateBucket)
	if err != nil {
		return fmt.Errorf("extractor: opening state bucket: %w", err)
	}
	if s.cache, err = s.deps.Bus.KV(ctx, schema.LLMCacheBucket); err != nil {
		return fmt.Errorf("extractor: opening llm cache bucket: %w", err)
	}
	s.state = kv
	s.tax = newTaxonomyCache(kv, time.Minute)
	return nil
}

// Stop stops pulling, finishes in-flight messages (those waiting for the model give up
// and are kept for later) and returns; safe twice.
func (s *Service) Stop(ctx context.Context) error {
	s.pauses.stop()
	return errors.Join(s.chunker.Stop(ctx), s.extract.Stop(ctx))
}

// Method names the extraction method written into extraction events.
// offlineMethod names the deterministic extractor in extraction events.
const offlineMethod = "offline/v1"

func (s *Service) Method() string {
	if s.deps.LLM == nil {
		return offlineMethod
	}
	return "llm/" + s.deps.LLM.Config().ChatModel
}

// RegisterFlags adds the extractor's flags with the current values as defaults.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.IntVar(&c.ChunkTokens, "chunk-tokens", c.ChunkTokens, "chunk size in tokens (cl100k BPE)")
	fs.IntVar(&c.ChunkOverlap, "chunk-overlap", c.ChunkOverlap, "overlap between consecutive chunks in tokens (whole sentences)")
	fs.Float64Var(&c.MinInformation, "min-information", c.MinInformation, "chunks scoring below this information score are stored but not extracted")
	fs.IntVar(&c.MaxEntities, "max-entities", c.MaxEntities, "entities kept per chunk")
	fs.IntVar(&c.MaxRelationships, "max-relationships", c.MaxRelationships, "relationships kept per chunk")
	fs.IntVar(&c.Gleanings, "gleanings", c.Gleanings, "extra LLM passes asking for missed entities (none once the first answer fills both -max-entities and -max-relationships)")
	c.Chunker.RegisterFlags(fs, "chunker")
	c.Extract.RegisterFlags(fs, "extract")
}
