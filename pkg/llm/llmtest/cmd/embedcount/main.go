// Command embedcount serves the fake OpenAI-compatible endpoint of package llmtest and
// counts the embedding requests, texts and tokens it receives by kind: the chunks,
// entity texts and community reports of a dataset `graphrag eval` indexes through it,
// and the questions it retrieves with. It prints the endpoint's URL, then, on SIGINT or
// SIGTERM, the counts (docs/benchmarks.md, "Embedding work by kind"):
//
//	go run ./pkg/llm/llmtest/cmd/embedcount -dataset ../shared/datasets/musique > counts.txt &
//	graphrag eval -dataset ../shared/datasets/musique -llm-embed-base-url $(head -1 counts.txt) \
//	    -llm-embed-model fake -strategies dense -limit 20 -out /tmp/e.json
//	kill -INT %1; cat counts.txt
//
// Tokens are the fake's count (one per 4 bytes, at least one a text). A text is a chunk
// when it starts with a document title and a blank line, a question when it is one of the
// dataset's, a report when it holds a blank line otherwise, and an entity text else.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/graphrag/graphrag/pkg/llm/llmtest"
	"github.com/graphrag/graphrag/pkg/llm/llmtest/internal/countcmd"
	"github.com/graphrag/graphrag/pkg/schema"
)

func main() { countcmd.Main("embedcount", run) }

func run(args []string, stdout io.Writer) error {
	var dataset string
	endpoint, err := countcmd.Parse("embedcount", args, func(fs *flag.FlagSet) {
		fs.StringVar(&dataset, "dataset", "", "directory with corpus.jsonl and questions.jsonl (required)")
	})
	if err != nil {
		return err
	}
	if dataset == "" {
		return fmt.Errorf("-dataset is required")
	}
	c, err := newCounter(dataset)
	if err != nil {
		return err
	}
	countcmd.Serve(stdout, endpoint, func(r llmtest.Request) llmtest.Reply {
		if r.Embed != nil {
			c.add(r.Embed.Input)
		}
		return llmtest.Reply{}
	}, c.print)
	return nil
}

var kinds = []string{"chunk", "entity", "report", "question"}

type tally struct{ requests, texts, tokens int }

type counter struct {
	titles, questions map[string]bool

	mu       sync.Mutex
	byKind   map[string]*tally
	requests int
	started  time.Time
}

func newCounter(dir string) (*counter, error) {
	c := &counter{titles: map[string]bool{}, questions: map[string]bool{}, byKind: map[string]*tally{}, started: time.Now()}
	for _, k := range kinds {
		c.byKind[k] = &tally{}
	}
	if err := readField(filepath.Join(dir, "corpus.jsonl"), "title", c.titles); err != nil {
		return nil, err
	}
	if err := readField(filepath.Join(dir, "questions.jsonl"), "question", c.questions); err != nil {
		return nil, err
	}
	return c, nil
}

// readField adds the string field of every JSON line of path to set.
func readField(path, field string, set map[string]bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		if s, ok := m[field].(string); ok {
			set[s] = true
		}
	}
	return sc.Err()
}

func (c *counter) kind(t string) string {
	if c.questions[t] {
		return "question"
	}
	heading, title, ok := schema.HeadingOf(t)
	if !ok {
		return "entity"
	}
	if c.titles[title] || strings.HasPrefix(heading, "doc-") {
		return "chunk"
	}
	return "report"
}

func (c *counter) add(input any) {
	var texts []string
	switch v := input.(type) {
	case string:
		texts = []string{v}
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok {
				texts = append(texts, s)
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests++
	in := map[string]bool{}
	for _, t := range texts {
		k := c.kind(t)
		c.byKind[k].texts++
		c.byKind[k].tokens += len(t)/4 + 1
		in[k] = true
	}
	for k := range in {
		c.byKind[k].requests++
	}
}

func (c *counter) print(w io.Writer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(w, "%-9s %9s %9s %10s\n", "kind", "requests", "texts", "tokens")
	var total tally
	ks := append([]string(nil), kinds...)
	sort.SliceStable(ks, func(i, j int) bool { return ks[i] != "question" && ks[j] == "question" })
	for _, k := range ks {
		t := c.byKind[k]
		fmt.Fprintf(w, "%-9s %9d %9d %10d\n", k, t.requests, t.texts, t.tokens)
		if k != "question" {
			total.texts += t.texts
			total.tokens += t.tokens
		}
	}
	fmt.Fprintf(w, "%-9s %9d %9d %10d\n", "indexing", c.requests-c.byKind["question"].requests, total.texts, total.tokens)
	if ch := c.byKind["chunk"].tokens; ch > 0 {
		fmt.Fprintf(w, "indexing tokens ÷ chunk tokens: %.2f\n", float64(total.tokens)/float64(ch))
	}
}
