// Command embedrate measures how fast an OpenAI-compatible embeddings endpoint embeds a
// dataset's passages, as the chunker sends them (schema.ChunkText: title, blank line,
// text; batches of -batch texts through pkg/llm's client). Embedding the chunks is work
// every indexing run with that endpoint does, so the time it prints is the floor of
// indexing with the model on the machine it runs on (docs/benchmarks.md, "Embedding
// work by kind"):
//
//	go run ./tools/cmd/embedrate -dataset ../shared/datasets/musique \
//	    -base-url http://127.0.0.1:18900/v1 -model multilingual-e5-small-q4
//
// A passage longer than the pipeline's chunk size is embedded whole here: the figure is
// for datasets of passages (HotpotQA, MuSiQue), one chunk each.
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
	"time"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/schema"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "embedrate:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("embedrate", flag.ContinueOnError)
	dataset := fs.String("dataset", "", "directory with corpus.jsonl (required)")
	cfg := llm.Config{}
	fs.StringVar(&cfg.EmbedBaseURL, "base-url", "", "the embeddings endpoint, e.g. http://127.0.0.1:18900/v1 (required)")
	fs.StringVar(&cfg.EmbedModel, "model", "", "the embedding model (required)")
	fs.StringVar(&cfg.APIKey, "api-key", os.Getenv("GRAPHRAG_LLM_API_KEY"), "API key, if the endpoint needs one")
	fs.IntVar(&cfg.EmbedBatchSize, "batch", 64, "texts per request (the platform's -llm-embed-batch-size default)")
	fs.IntVar(&cfg.MaxConcurrency, "concurrency", 8, "requests in flight at most (the platform's -llm-max-concurrency default)")
	limit := fs.Int("limit", 0, "embed only the first N passages (0: all)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case *dataset == "":
		return errors.New("-dataset is required")
	case cfg.EmbedBaseURL == "":
		return errors.New("-base-url is required")
	case cfg.EmbedModel == "":
		return errors.New("-model is required")
	case cfg.EmbedBatchSize < 1:
		return fmt.Errorf("-batch: %d is not a positive number of texts", cfg.EmbedBatchSize)
	case cfg.MaxConcurrency < 1:
		return fmt.Errorf("-concurrency: %d is not a positive number of requests", cfg.MaxConcurrency)
	case *limit < 0:
		return fmt.Errorf("-limit: %d is negative", *limit)
	}
	texts, err := chunkTexts(filepath.Join(*dataset, "corpus.jsonl"), *limit)
	if err != nil {
		return err
	}
	cfg.BaseURL = cfg.EmbedBaseURL
	c, err := llm.New(cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	start := time.Now()
	vecs, err := c.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("embedding %d passages: %w", len(texts), err)
	}
	took := time.Since(start)
	if len(vecs) != len(texts) {
		return fmt.Errorf("the endpoint returned %d vectors for %d passages", len(vecs), len(texts))
	}
	u := c.Usage()
	secs := took.Seconds()
	fmt.Fprintf(stdout, "%d passages, %d tokens (the endpoint's count), %d requests of up to %d, at most %d in flight\n",
		len(texts), u.PromptTokens, u.Calls, cfg.EmbedBatchSize, cfg.MaxConcurrency)
	fmt.Fprintf(stdout, "%.1f s: %.0f tokens/s, %.1f passages/s\n", secs, float64(u.PromptTokens)/secs, float64(len(texts))/secs)
	return nil
}

// chunkTexts reads the passages of a corpus.jsonl ({id, title, text} per line) as the
// chunker embeds them.
func chunkTexts(path string, limit int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var texts []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for line := 1; sc.Scan() && (limit == 0 || len(texts) < limit); line++ {
		var d struct{ Title, Text string }
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, line, err)
		}
		if d.Text == "" {
			return nil, fmt.Errorf("%s line %d: the passage has no text", path, line)
		}
		texts = append(texts, schema.ChunkText(d.Title, "", d.Text))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(texts) == 0 {
		return nil, fmt.Errorf("%s holds no passage", path)
	}
	return texts, nil
}
