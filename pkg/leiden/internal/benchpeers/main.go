package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/leiden/internal/edgelist"
	"github.com/graphrag/graphrag/pkg/wgraph"
	"github.com/graphrag/graphrag/pkg/wgraph/wgraphtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchpeers:", err)
		os.Exit(1)
	}
}

var errUsage = errors.New("usage: benchpeers gen|export|serve [flags]")

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errUsage
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	switch args[0] {
	case "gen":
		out := fs.String("out", ".", "directory for the synthetic edge lists")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return generate(*out)
	case "export":
		dataDir := fs.String("data-dir", "", "data directory of an embedded index (holds graph.db)")
		corpus := fs.String("corpus", "eval", "corpus to export (graphrag eval indexes into \"eval\")")
		out := fs.String("out", "", "edge list to write (.gz to compress)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return export(ctx, *dataDir, *corpus, *out)
	case "serve":
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return serve(ctx, os.Stdin, os.Stdout)
	}
	return errUsage
}

// syntheticSizes are the edge counts of the Go benchmarks (pkg/leiden, graphrag bench).
var syntheticSizes = []struct {
	name  string
	edges int
}{{"sparse-10k", 10_000}, {"sparse-100k", 100_000}, {"sparse-1m", 1_000_000}}

// generate writes the graphs of BenchmarkLeiden and `graphrag bench`:
// wgraphtest.Sparse(edges, 10, 50, 0.2, 2026).
func generate(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	for _, s := range syntheticSizes {
		g, _ := wgraphtest.Sparse(s.edges, 10, 50, 0.2, 2026)
		if err := edgelist.WriteFile(filepath.Join(dir, s.name+".edges"), g); err != nil {
			return fmt.Errorf("generating %s: %w", s.name, err)
		}
	}
	return nil
}

// export writes the entity graph of an embedded index as the grapher sees it:
// the store's snapshot (one undirected edge per pair, weights summed).
func export(ctx context.Context, dataDir, corpus, out string) error {
	if dataDir == "" || out == "" {
		return fmt.Errorf("export needs -data-dir and -out: %w", errUsage)
	}
	st, err := boltgraph.Open(filepath.Join(dataDir, "graph.db"))
	if err != nil {
		return fmt.Errorf("exporting entity graph: %w", err)
	}
	defer st.Close()
	snap, err := st.Snapshot(ctx, corpus)
	if err != nil {
		return fmt.Errorf("exporting entity graph of corpus %q: %w", corpus, err)
	}
	edges := make([]wgraph.Edge, len(snap.Edges))
	for i, e := range snap.Edges {
		edges[i] = wgraph.Edge{U: e.Source, V: e.Target, W: e.Weight}
	}
	g, err := wgraph.FromEdges(len(snap.Keys), edges)
	if err != nil {
		return fmt.Errorf("building entity graph: %w", err)
	}
	return edgelist.WriteFile(out, g)
}
