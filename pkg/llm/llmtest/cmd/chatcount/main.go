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
//	kill %1; cat counts.txt
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
	"io"

	"github.com/graphrag/graphrag/pkg/llm/llmtest/internal/countcmd"
)

func main() { countcmd.Main("chatcount", run) }

func run(args []string, stdout io.Writer) error {
	endpoint, err := countcmd.Parse("chatcount", args, nil)
	if err != nil {
		return err
	}
	c := newCounter()
	countcmd.Serve(stdout, endpoint, c.serve, c.print)
	return nil
}
