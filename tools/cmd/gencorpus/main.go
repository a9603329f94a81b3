// Command gencorpus writes the generated workplace development set (corpus.jsonl,
// questions.jsonl, SOURCE.md) into a directory, for `graphrag eval -dataset DIR`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/graphrag/graphrag/tools/gencorpus"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gencorpus:", err)
		os.Exit(1)
	}
}

func run(_ context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("gencorpus", flag.ContinueOnError)
	cfg := gencorpus.DefaultConfig()
	out := fs.String("out", "", "write corpus.jsonl, questions.jsonl and SOURCE.md into this directory (required)")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "random seed; the same seed writes byte-identical files")
	fs.IntVar(&cfg.Questions, "questions", cfg.Questions, "number of questions (split 60/30/10 % into 2, 3 and 4 hops)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("-out is required")
	}
	ds, err := gencorpus.Generate(cfg)
	if err != nil {
		return err
	}
	if err := ds.Write(*out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %d documents and %d questions to %s (seed %d)\n", len(ds.Docs), len(ds.Questions), *out, cfg.Seed)
	return nil
}
