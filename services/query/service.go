package query

import (
	"flag"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/query/httpapi"
	"github.com/graphrag/graphrag/services/query/mcpserver"
)

// Config is the query service's configuration: the engine's and the HTTP API's guard.
type Config struct {
	Engine engine.Config
	API    httpapi.Flags
}

// DefaultConfig is the engine's and the API's default configuration.
func DefaultConfig() Config {
	return Config{Engine: engine.DefaultConfig(), API: httpapi.DefaultFlags()}
}

// RegisterFlags adds the engine's and the API's flags.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	c.Engine.RegisterFlags(fs)
	c.API.RegisterFlags(fs)
}

// Deps are the backends the service reads and what it reports about itself.
type Deps struct {
	Graph   engine.GraphReader
	Vectors engine.VectorReader
	// Embedder turns texts into vectors: the same embedder the pipeline indexed with.
	Embedder llm.Embedder
	// OfflineEmbedder says the embedder is the offline hashing embedder (see
	// engine.Deps).
	OfflineEmbedder bool
	LLM             *llm.Client // nil: extractive answers, heuristic classification
	Logger          *slog.Logger
	// Version is reported to MCP clients.
	Version string
}

// Service is the query service: the engine behind the HTTP API and the MCP tools. It has
// no work of its own between requests; its handlers run on the HTTP server the caller
// mounts them on (Mount), which drains the requests in flight on shutdown.
type Service struct {
	engine *engine.Engine
	api    *httpapi.API
	mcp    http.Handler
}

// New builds the engine, the API (reading the API's token file) and the MCP tools.
func New(cfg Config, deps Deps) (*Service, error) {
	e, err := engine.New(cfg.Engine, engine.Deps{Graph: deps.Graph, Vectors: deps.Vectors, Embedder: deps.Embedder,
		OfflineEmbedder: deps.OfflineEmbedder, LLM: deps.LLM, Logger: deps.Logger})
	if err != nil {
		return nil, err
	}
	api, err := cfg.API.Load()
	if err != nil {
		return nil, fmt.Errorf("query: configuring the HTTP API: %w", err)
	}
	return &Service{
		engine: e,
		api:    httpapi.New(e, api, deps.Logger),
		mcp:    mcpserver.HTTPHandler(mcpserver.New(e, deps.Version, deps.Logger)),
	}, nil
}

// Engine returns the engine, for callers in the same process (the CLI, eval).
func (s *Service) Engine() *engine.Engine { return s.engine }

// Mount adds the service's routes to mux: the HTTP API (/v1/..., /openapi.json) and the
// MCP tools over streamable HTTP (/mcp), behind the same authentication, rate limit and
// deadline; the transport's own plain-text errors are answered in the API's JSON error
// shape.
func (s *Service) Mount(mux *http.ServeMux) {
	s.api.Mount(mux)
	mux.Handle("/mcp", s.api.Guard(httpapi.JSONErrors(s.mcp)))
}
