package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/graphrag/graphrag/cmd/graphrag/internal/stack"
	"github.com/graphrag/graphrag/pkg/costestimate"
	"github.com/graphrag/graphrag/pkg/docread"
	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/service"
)

// runEstimate is `graphrag estimate`: it reads files as publish does, chunks them as the
// extractor will with the services' flags (those of graphrag up) and prints what
// indexing them is expected to ask of the models (package costestimate). Nothing is
// published and no model is called.
func runEstimate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("estimate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := stack.DefaultConfig()
	cfg.RegisterFlags(fs)
	idPrefix := fs.String("id-prefix", "", "prefix of every document id, as graphrag publish gives it")
	dataset := fs.String("dataset", "", "estimate a dataset's corpus.jsonl (one JSON object with id, title and text a line, as graphrag eval indexes it) instead of PATHs")
	chat := fs.Bool("chat", true, "a chat model extracts and writes reports (graphrag up -llm-base-url); false: offline extraction and extractive reports, no chat calls")
	embed := fs.Bool("embed", true, "an embedding model embeds chunks, entities and reports (-llm-embed-model); false: the offline embedder, no embedding calls")
	var prices costestimate.Prices
	fs.Float64Var(&prices.ChatInput, "price-chat-input", 0, "chat model price of prompt tokens, US dollars per million (0 with the other prices 0: no price)")
	fs.Float64Var(&prices.ChatOutput, "price-chat-output", 0, "chat model price of completion tokens, US dollars per million")
	fs.Float64Var(&prices.Embed, "price-embed", 0, "embedding model price, US dollars per million tokens")
	asJSON := fs.Bool("json", false, "print the estimate as JSON")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: graphrag estimate [flags] PATH...   (or -dataset DIR)")
		fmt.Fprintln(stderr, "Reads and chunks the files as graphrag publish and the pipeline would, and prints the chat and")
		fmt.Fprintln(stderr, "embedding calls and tokens indexing them is expected to cost. The flags of graphrag up that")
		fmt.Fprintln(stderr, "shape indexing (-chunk-tokens, -gleanings, -entity-embed, -report-embed, ...) are accepted.")
		fs.PrintDefaults()
	}
	if err := service.ParseFlags(fs, args, platform.EnvPrefix); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := prices.Validate(); err != nil {
		return fmt.Errorf("-%w", err)
	}
	if (*dataset == "") == (fs.NArg() == 0) {
		fs.Usage()
		return errors.New("give PATHs or -dataset, one of the two")
	}
	if *idPrefix != "" && docread.ID(*idPrefix+"x") != *idPrefix+"x" {
		return fmt.Errorf("-id-prefix %q: an id may not begin with white space or one of . / \\ - nor hold control characters", *idPrefix)
	}
	est, err := costestimate.New(cfg.Indexing(*chat, *embed))
	if err != nil {
		return err
	}
	if *dataset != "" {
		err = estimateDataset(est, *dataset)
	} else {
		err = estimatePaths(ctx, est, fs.Args(), *idPrefix)
	}
	if err != nil {
		return err
	}
	var pr *costestimate.Prices
	if prices != (costestimate.Prices{}) {
		pr = &prices
	}
	out, err := est.Estimate(ctx, pr)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	printEstimate(stdout, out)
	if out.Documents == 0 {
		return errors.New("no file could be read as a document")
	}
	return nil
}

// estimatePaths adds every file publish would publish; the others are reported as
// skipped with publish's reason. A path that does not exist is an error, as for publish.
func estimatePaths(ctx context.Context, est *costestimate.Estimator, paths []string, idPrefix string) error {
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("nothing estimated: %w", err)
		}
	}
	files, skips := collect(paths)
	for _, s := range skips {
		est.Skip(s.Path, s.Err.Error())
	}
	return readDocuments(ctx, files, idPrefix, func(f documentFile) error {
		if f.err != nil {
			est.Skip(f.path, f.err.Error())
			return nil
		}
		// A document the chunker refuses is recorded as skipped by Add.
		_ = est.Add(costestimate.Document{ID: f.id, Title: f.doc.Title, Text: f.doc.Text})
		return nil
	})
}

// estimateDataset adds the documents of dir/corpus.jsonl.
func estimateDataset(est *costestimate.Estimator, dir string) error {
	path := filepath.Join(dir, "corpus.jsonl")
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("-dataset: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		var d struct {
			ID    string `json:"id"`
			Title string `json:"title"`
			Text  string `json:"text"`
		}
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return fmt.Errorf("%s line %d: %w", path, line, err)
		}
		if d.ID == "" {
			return fmt.Errorf("%s line %d: no id", path, line)
		}
		_ = est.Add(costestimate.Document{ID: d.ID, Title: d.Title, Text: d.Text})
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	return nil
}

// printEstimate writes the estimate as tables.
func printEstimate(w io.Writer, e costestimate.Estimate) {
	fmt.Fprintf(w, "%d documents, %d chunks (%d extracted, %d chunk tokens); the offline graph: %d entities, %d relationships\n",
		e.Documents, e.Chunks, e.ExtractedChunks, e.ChunkTextTokens, e.Entities, e.Relationships)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	if len(e.Chat) > 0 {
		fmt.Fprintln(w, "\nchat model")
		fmt.Fprintln(tw, "kind\tcalls\tprompt tokens\tcompletion tokens\t")
		for _, l := range append(e.Chat, e.ChatTotal) {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t\n", l.Kind, l.Calls, l.PromptTokens, l.CompletionTokens)
		}
		tw.Flush()
	} else {
		fmt.Fprintln(w, "\nchat model: none (offline extraction and reports)")
	}
	if len(e.Embeddings) > 0 {
		fmt.Fprintln(w, "\nembedding model")
		fmt.Fprintln(tw, "kind\trequests\ttexts\ttokens\t")
		for _, l := range append(e.Embeddings, e.EmbedTotal) {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t\n", l.Kind, l.Requests, l.Texts, l.Tokens)
		}
		tw.Flush()
	} else {
		fmt.Fprintln(w, "\nembedding model: none (the offline embedder)")
	}
	if c := e.Cost; c != nil {
		fmt.Fprintf(w, "\ncost: $%.2f (chat input $%.2f, chat output $%.2f, embeddings $%.2f)\n", c.Total, c.ChatInput, c.ChatOutput, c.Embed)
	}
	if len(e.Skipped) > 0 {
		fmt.Fprintf(w, "\nskipped %d:\n", len(e.Skipped))
		for _, s := range e.Skipped {
			fmt.Fprintf(w, "  %s: %s\n", s.ID, s.Reason)
		}
	}
	fmt.Fprintln(w, "\nTokens are counted at one per 4 bytes. Chunk and entity requests assume no two calls share one (a busy pipeline sends fewer).")
	fmt.Fprintln(w, "Completion tokens and the work after extraction are sized from the offline extractor's graph of these")
	fmt.Fprintln(w, "documents: a model finds a different graph (docs/publishing.md, \"What indexing will cost\").")
}
