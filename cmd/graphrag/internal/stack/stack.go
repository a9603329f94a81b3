package stack

import (
	"errors"
	"flag"
	"log/slog"

	"github.com/graphrag/graphrag/pkg/costestimate"
	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/platform/graphdrivers"
	"github.com/graphrag/graphrag/pkg/platform/natsserver"
	"github.com/graphrag/graphrag/pkg/platform/vectordrivers"
	"github.com/graphrag/graphrag/pkg/service"
	"github.com/graphrag/graphrag/services/extractor"
	"github.com/graphrag/graphrag/services/grapher"
	"github.com/graphrag/graphrag/services/query"
	"github.com/graphrag/graphrag/services/query/ask"
	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/summarizer"
)

// Config is the configuration of the four services.
type Config struct {
	Extractor  extractor.Config
	Grapher    grapher.Config
	Summarizer summarizer.Config
	Query      query.Config
}

// DefaultConfig is every service's default configuration.
func DefaultConfig() Config {
	return Config{Extractor: extractor.DefaultConfig(), Grapher: grapher.DefaultConfig(),
		Summarizer: summarizer.DefaultConfig(), Query: query.DefaultConfig()}
}

// Validate reports every invalid value of the four services, named by its flag.
func (c Config) Validate() error {
	return errors.Join(c.Extractor.Validate(), c.Grapher.Validate(), c.Summarizer.Validate(), c.Query.Validate())
}

// RegisterFlags adds the flags of the four services, but not those of the query
// service's HTTP API (Query.API): a command that serves the API registers them.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	c.Extractor.RegisterFlags(fs)
	c.Grapher.RegisterFlags(fs)
	c.Summarizer.RegisterFlags(fs)
	c.Query.RegisterEngineFlags(fs)
}

// Needs are the backends of the four services in one process: the bus, every graph
// and vector store driver, and the embedded NATS server for an empty -nats-url.
func Needs() platform.Needs {
	return platform.Needs{Bus: true, Model: true, Graph: graphdrivers.All(), Vectors: vectordrivers.All(), NATSServer: natsserver.Start}
}

// Stack is the four services wired on one platform.
type Stack struct {
	Extractor  *extractor.Service
	Grapher    *grapher.Service
	Summarizer *summarizer.Service
	Query      *query.Service
	// Asker answers through Query's engine, and Engine is that engine, for callers in
	// the process (the demo, eval).
	Asker  *ask.Asker
	Engine *engine.Engine
}

// New creates the services on p's backends.
func New(p *platform.Platform, cfg Config, log *slog.Logger) (*Stack, error) {
	var st Stack
	var err error
	if st.Extractor, err = extractor.New(cfg.Extractor, extractor.Deps{Bus: p.Bus, Vectors: p.Vectors, Embedder: p.Embedder, LLM: p.LLM, Logger: log}); err != nil {
		return nil, err
	}
	if p.ExclusiveGraph {
		cfg.Grapher.Lease = false // the store's file lock already allows one grapher
	}
	if st.Grapher, err = grapher.New(cfg.Grapher, grapher.Deps{Bus: p.Bus, Graph: p.Graph, Algorithms: p.Algorithms, Vectors: p.Vectors, Embedder: p.Embedder, LLM: p.LLM, Logger: log}); err != nil {
		return nil, err
	}
	if st.Summarizer, err = summarizer.New(cfg.Summarizer, summarizer.Deps{Bus: p.Bus, Graph: p.Graph, Vectors: p.Vectors, Embedder: p.Embedder, LLM: p.LLM, Logger: log}); err != nil {
		return nil, err
	}
	cfg.Query.Indexing = cfg.Indexing(p.LLM != nil, !p.OfflineEmbedder)
	if st.Query, err = query.New(cfg.Query, query.Deps{Graph: p.Graph, Vectors: p.Vectors, Embedder: p.Embedder, OfflineEmbedder: p.OfflineEmbedder,
		LLM: p.LLM, Logger: log, Version: platform.Version, Bus: p.Bus}); err != nil {
		return nil, err
	}
	st.Asker = st.Query.Asker()
	st.Engine = st.Asker.Engine()
	return &st, nil
}

// Components are the pipeline stages in start order; the query service has no life of
// its own (its handlers run on the HTTP server).
func (s *Stack) Components() []service.Component {
	return []service.Component{s.Extractor, s.Grapher, s.Summarizer}
}

// Indexing is what the cost estimate (package costestimate) needs of the services'
// settings; chat and embed say whether a chat model and an embedding model are
// configured.
func (c Config) Indexing(chat, embed bool) costestimate.Options {
	o := costestimate.DefaultOptions()
	x, g, s := c.Extractor, c.Grapher, c.Summarizer
	o.ChunkTokens, o.ChunkOverlap, o.MinInformation = x.ChunkTokens, x.ChunkOverlap, x.MinInformation
	o.MaxEntities, o.MaxRelationships, o.Gleanings = x.MaxEntities, x.MaxRelationships, x.Gleanings
	o.SummarizeAfter, o.EntityEmbed = g.SummarizeAfter, g.EntityEmbed
	o.ReportContextTokens, o.ReportEmbed = s.ContextTokens, s.ReportEmbed
	o.Chat, o.Embed = chat, embed
	return o
}
