// Command summarizer runs the summarizer stage: community reports and their embeddings.
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
	"github.com/graphrag/graphrag/services/summarizer"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "summarizer:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	cfg := summarizer.DefaultConfig()
	return platform.Main(ctx, args, os.Stderr, platform.Spec{
		Name:   "summarizer",
		Needs:  platform.Needs{Bus: true, Model: true, Graph: graphdrivers.All(), Vectors: vectordrivers.All()},
		Flags:  func(fs *flag.FlagSet) { cfg.RegisterFlags(fs) },
		Config: &cfg,
		Build: func(_ context.Context, p *platform.Platform, _ *http.ServeMux, log *slog.Logger) ([]service.Component, error) {
			s, err := summarizer.New(cfg, summarizer.Deps{Bus: p.Bus, Graph: p.Graph, Vectors: p.Vectors, Embedder: p.Embedder, LLM: p.LLM, Logger: log}) //nolint:contextcheck // New starts nothing: it only sets its counters to zero
			return []service.Component{s}, err
		},
	})
}
