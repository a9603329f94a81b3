// Command grapher runs the grapher stage: graph merges, communities and PageRank.
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
	"github.com/graphrag/graphrag/services/grapher"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "grapher:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	cfg := grapher.DefaultConfig()
	return platform.Main(ctx, args, os.Stderr, platform.Spec{
		Name:   "grapher",
		Needs:  platform.Needs{Bus: true, Model: true, Graph: graphdrivers.All(), Vectors: vectordrivers.All()},
		Flags:  func(fs *flag.FlagSet) { cfg.RegisterFlags(fs) },
		Config: &cfg,
		Build: func(_ context.Context, p *platform.Platform, _ *http.ServeMux, log *slog.Logger) ([]service.Component, error) {
			if p.ExclusiveGraph {
				cfg.Lease = false // the store's file lock already allows one grapher
			}
			s, err := grapher.New(cfg, grapher.Deps{Bus: p.Bus, Graph: p.Graph, Algorithms: p.Algorithms, Vectors: p.Vectors, Embedder: p.Embedder, LLM: p.LLM, Logger: log}) //nolint:contextcheck // New starts nothing: it only sets its counters to zero
			return []service.Component{s}, err
		},
	})
}
