// Command graphrag is the operator CLI of the GraphRAG platform: run the whole platform in
// one process, publish and delete documents, watch indexing, ask questions, serve MCP over stdio
// and evaluate retrieval on a dataset. It holds no business logic: every command calls the
// packages the services use; eval lives in package eval (whose report types the benchmarks
// in tools/bench read), and internal/stack wires the four services on one platform for up,
// eval and the tests. The benchmarks are not part of the product: tools/cmd/bench.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/graphrag/graphrag/cmd/graphrag/eval"
)

type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"init", "write a settings file (graphrag.yaml) with every setting of every binary, its help and default", runInit},
		{"up", "run the whole platform in one process on embedded defaults (NATS, stores, the four services, the query API)", runUp},
		{"publish", "publish files or directories (Markdown, text, HTML, PDF) to a corpus", runPublish},
		{"estimate", "estimate the model calls and tokens (and price) of indexing files, without publishing them", runEstimate},
		{"delete", "delete documents from a corpus (or drop the corpus) in every store", runDelete},
		{"status", "show a corpus's indexing progress per stage", runStatus},
		{"query", "ask a question through the query API", runQuery},
		{"mcp", "serve the MCP tools over stdio on the configured stores", runMCP},
		{"curate", "merge, split, rename, type or pin entities and delete or add relationships of a corpus's graph, through the query API; list and undo", runCurate},
		{"extraction-settings", "show a corpus's extraction settings (entity types, domain, examples, prompt) or save them from a YAML file", runExtractionSettings},
		{"reindex", "extract a corpus's chunks again under its current extraction settings", runReindex},
		{"prompt-tune", "propose extraction settings from a sample of a corpus with the configured chat model", runPromptTune},
		{"export", "write a corpus's graph, communities with reports and chunks as JSON Lines, GraphML or GraphRAG's Parquet tables", runExport},
		{"eval", "index a dataset and score retrieval strategies (recall@k, all-gold@k, MRR, latency)", eval.Run},
	}
}

func main() {
	// The first SIGINT/SIGTERM cancels ctx for commands without their own handling;
	// services (up) handle signals themselves for graceful shutdown.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := dispatch(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "graphrag:", err)
		}
		os.Exit(1)
	}
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return flag.ErrHelp
		}
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	usage(stderr)
	return fmt.Errorf("unknown command %q", args[0])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: graphrag <command> [flags]   (graphrag <command> -h for its flags)")
	fmt.Fprintln(w)
	width := 0
	for _, c := range commands() {
		width = max(width, len(c.name))
	}
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-*s %s\n", width, c.name, c.summary)
	}
}
