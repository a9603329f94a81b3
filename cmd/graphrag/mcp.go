package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/graphrag/graphrag/cmd/graphrag/internal/stack"
	"github.com/graphrag/graphrag/pkg/catalog"
	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/service"
	"github.com/graphrag/graphrag/services/query"
	"github.com/graphrag/graphrag/services/query/ask"
	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/query/explore"
	"github.com/graphrag/graphrag/services/query/mcpserver"
)

// runMCP serves the MCP tools over stdio. It opens the stores itself; with the embedded
// stores the data directory must not be in use by another process (use the /mcp endpoint
// of the running query service instead).
func runMCP(ctx context.Context, args []string, _, stderr io.Writer) error {
	cfg := query.DefaultConfig() // the engine's and the answerer's flags; the API is not served
	// The client closing stdin ends the session and the process.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	return platform.Main(ctx, args, stderr, platform.Spec{
		Name:   "mcp",
		Needs:  stack.Needs(), // the bus too: list_corpora and list_documents read the pipeline's records
		Flags:  cfg.RegisterEngineFlags,
		Config: &cfg,
		Tune: func(c *service.CommonFlags, b *platform.BackendFlags) {
			if c.HTTPAddr == service.DefaultHTTPAddr {
				c.HTTPAddr = "127.0.0.1:0" // health and metrics only; stdout belongs to the protocol
			}
			if b.NATSPort == platform.DefaultNATSPort {
				b.NATSPort = -1 // the embedded NATS server serves this process alone
			}
		},
		Build: func(_ context.Context, p *platform.Platform, _ *http.ServeMux, log *slog.Logger) ([]service.Component, error) {
			srv, err := newMCPServer(p, cfg, log)
			if err != nil {
				return nil, err
			}
			return []service.Component{service.Loop("mcp-stdio", func(ctx context.Context) error {
				defer cancel()
				return mcpserver.ServeStdio(ctx, srv)
			})}, nil
		},
	})
}

// newMCPServer serves the same tools as the /mcp endpoint of graphrag up: the engine's,
// and the corpus and document listings of the catalog.
func newMCPServer(p *platform.Platform, cfg query.Config, log *slog.Logger) (*mcp.Server, error) {
	e, err := ask.New(cfg.Engine, cfg.Ask, engine.Deps{Graph: p.Graph, Vectors: p.Vectors, Embedder: p.Embedder, OfflineEmbedder: p.OfflineEmbedder, Logger: log}, p.LLM)
	if err != nil {
		return nil, err
	}
	x := explore.New(p.Graph, p.Vectors, explore.WithDefaultNeighbors(e.Engine().Config().MaxNeighbors))
	return mcpserver.New(e, x, platform.Version, log, mcpserver.WithCatalog(catalog.New(p.Bus, p.Graph, p.Vectors))), nil
}
