// Command chatcount serves the fake OpenAI-compatible endpoint of package llmtest as a
// chat model and counts what indexing asks of it, by kind: chunk extractions, gleaning
// passes, entity description summaries and community reports (and, apart, the questions
// `graphrag eval` answers). It prints the endpoint's URL, then, on SIGINT or SIGTERM,
// calls, prompt and completion tokens per kind (docs/benchmarks.md, "Chat model work by
// kind"):
//
//	go run ./pkg/llm/llmtest/cmd/chatcount > counts.txt &
//	graphrag eval -dataset ../shared/datasets/musique -llm-base-url $(head -1 counts.txt) \
//	    -llm-chat-model fake -strategies dense -limit 1 -out /tmp/e.json
//	kill -INT %1; cat counts.txt
//
// The fake answers as a model would in shape, from the prompt alone: an extraction with
// what the offline extractor (package offlinextract) finds in the chunk, a gleaning pass
// with nothing missed, a description summary with the first sentences of the first three
// descriptions, a report with the community's most central entities and strongest
// relationships. So prompt tokens and calls are the services' own; completion tokens are
// those of such answers, and a model's differ.
//
// Tokens are one per 4 bytes (at least one a text), as `graphrag eval` reports them. A
// prompt's tokens are those of its messages and of the JSON schema of its response
// format, which an endpoint that constrains its output to the schema reads too.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/graphrag/graphrag/pkg/llm/llmtest"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "chatcount:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("chatcount", flag.ContinueOnError)
	dim := fs.Int("dim", 64, "dimension of the fake embeddings (when the endpoint embeds too)")
	latency := fs.Duration("latency", 0, "delay of every answer, as a slow endpoint's")
	concurrency := fs.Int("concurrency", 0, "requests served at once (0: any number)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c := newCounter()
	srv := llmtest.NewServer(llmtest.WithDimension(*dim), llmtest.WithLatency(*latency), llmtest.WithMaxConcurrency(*concurrency),
		llmtest.WithScript(c.serve))
	defer srv.Close()
	fmt.Fprintln(stdout, srv.URL())
	if f, ok := stdout.(*os.File); ok {
		_ = f.Sync()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	c.print(stdout)
	return nil
}
