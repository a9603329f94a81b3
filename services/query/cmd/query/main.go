// Command query serves the query API (HTTP JSON, OpenAPI, MCP over streamable HTTP).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/platform/graphdrivers"
	"github.com/graphrag/graphrag/pkg/platform/vectordrivers"
	"github.com/graphrag/graphrag/pkg/service"
	"github.com/graphrag/graphrag/services/query"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "query:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	cfg := query.DefaultConfig()
	hf := query.HTTPFlags{HTTPConfig: query.DefaultHTTPConfig()}
	return platform.Main(ctx, args, os.Stderr, platform.Spec{
		Name:   "query",
		Needs:  platform.Needs{Graph: graphdrivers.All(), Vectors: vectordrivers.All()},
		Flags:  func(fs *flag.FlagSet) { cfg.RegisterFlags(fs); hf.RegisterFlags(fs) },
		Config: &struct{ Engine, HTTP any }{&cfg, &hf},
		Build: func(_ context.Context, p *platform.Platform, mux *http.ServeMux, log *slog.Logger) ([]service.Component, error) {
			e, err := query.New(cfg, query.Deps{Graph: p.Graph, Vectors: p.Vectors, Embedder: p.Embedder, OfflineEmbedder: p.OfflineEmbedder, LLM: p.LLM, Logger: log})
			if err != nil {
				return nil, err
			}
			hc, err := hf.Load()
			if err != nil {
				return nil, err
			}
			api := query.NewAPI(e, hc, log)
			api.Mount(mux)
			mux.Handle("/mcp", api.Guard(query.MCPHTTPHandler(query.NewMCPServer(e, platform.Version))))
			return nil, nil
		},
	})
}
