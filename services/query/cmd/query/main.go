// Command query serves the query API (HTTP JSON, OpenAPI, MCP over streamable HTTP).
package main

import (
	"context"
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
	return platform.Main(ctx, args, os.Stderr, platform.Spec{
		Name:   "query",
		Needs:  platform.Needs{Bus: true, Model: true, Graph: graphdrivers.All(), Vectors: vectordrivers.All()}, // the bus: listings, status, uploads
		Flags:  cfg.RegisterFlags,
		Config: &cfg,
		Build: func(_ context.Context, p *platform.Platform, mux *http.ServeMux, log *slog.Logger) ([]service.Component, error) {
			svc, err := query.New(cfg, query.Deps{Graph: p.Graph, Vectors: p.Vectors, Embedder: p.Embedder, OfflineEmbedder: p.OfflineEmbedder,
				LLM: p.LLM, Logger: log, Version: platform.Version, Bus: p.Bus})
			if err != nil {
				return nil, err
			}
			svc.Mount(mux)
			return nil, nil
		},
	})
}
