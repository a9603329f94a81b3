// Command gencorpus writes a generated development set (corpus.jsonl, questions.jsonl,
// SOURCE.md) into a directory, for `graphrag eval -dataset DIR`: the multi-hop workplace
// set or, with -kind guidelines, the single-fact guidelines set.
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
	kind := fs.String("kind", "workplace", "which set: workplace (multi-hop, work documents) or guidelines (single-fact, guideline sections)")
	out := fs.String("out", "", "write corpus.jsonl, questions.jsonl and SOURCE.md into this directory (required)")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "random seed; the same seed writes byte-identical files")
	fs.IntVar(&cfg.Questions, "questions", cfg.Questions, "number of questions (workplace: split 60/30/10 % into 2, 3 and 4 hops)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("-out is required")
	}
	var (
		set interface{ Write(dir string) error }
		n   [2]int // documents, questions
	)
	switch *kind {
	case "workplace":
		ds, err := gencorpus.Generate(cfg)
		if err != nil {
			return err
		}
		set, n = ds, [2]int{len(ds.Docs), len(ds.Questions)}
	case "guidelines":
		gs, err := gencorpus.GenerateGuidelines(cfg)
		if err != nil {
			return err
		}
		set, n = gs, [2]int{len(gs.Docs), len(gs.Questions)}
	default:
		return fmt.Errorf("-kind %q: want workplace or guidelines", *kind)
	}
	if err := set.Write(*out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %d %s documents and %d questions to %s (seed %d)\n", n[0], *kind, n[1], *out, cfg.Seed)
	return nil
}
