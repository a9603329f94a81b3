package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/graphrag/graphrag/cmd/graphrag/internal/stack"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/service"
	"github.com/graphrag/graphrag/services/query/engine"
)

// upConfig is everything `graphrag up` runs.
type upConfig struct {
	stack.Config
	Demo     bool
	Examples string
	Corpus   string
	httpAddr *flag.Flag // the platform's -http-addr, to print the console's address
}

func runUp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := defaultUpConfig()
	return platform.Main(ctx, args, stderr, platform.Spec{
		Name:  "up",
		Needs: stack.Needs(),
		Flags: func(fs *flag.FlagSet) {
			cfg.RegisterFlags(fs)
			cfg.Query.API.RegisterFlags(fs)
			fs.BoolVar(&cfg.Demo, "demo", false, "index the sample corpus and answer its first local and global question, then keep serving")
			fs.StringVar(&cfg.Examples, "examples", cfg.Examples, "directory with corpus/ and questions.jsonl for -demo")
			fs.StringVar(&cfg.Corpus, "corpus", cfg.Corpus, "corpus name for -demo")
			cfg.httpAddr = fs.Lookup("http-addr")
		},
		Config: &cfg,
		Build: func(_ context.Context, p *platform.Platform, mux *http.ServeMux, log *slog.Logger) ([]service.Component, error) {
			st, err := stack.New(p, cfg.Config, log)
			if err != nil {
				return nil, err
			}
			st.Query.Mount(mux)
			comps := st.Components()
			if cfg.Demo {
				comps = append(comps, service.Loop("demo", func(ctx context.Context) error {
					return demo(ctx, p, st.Engine, cfg.Examples, cfg.Corpus, consoleURL(cfg.httpAddr), stdout, stderr)
				}))
			}
			return comps, nil
		},
	})
}

func defaultUpConfig() upConfig {
	return upConfig{Config: stack.DefaultConfig(), Examples: "examples", Corpus: "demo"}
}

// demo indexes the sample corpus and answers its first local and first global question.
func demo(ctx context.Context, p *platform.Platform, eng *engine.Engine, dir, corpus, console string, stdout, stderr io.Writer) error {
	start := time.Now()
	sum, err := publishPaths(ctx, p.Bus, corpus, []string{filepath.Join(dir, "corpus")}, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "published %d documents to corpus %q; indexing...\n", sum.Published, corpus)
	st, err := pipeline.WaitComplete(ctx, p.Bus, corpus, 500*time.Millisecond, nil)
	if err != nil {
		return err
	}
	printStatus(stderr, st)
	fmt.Fprintf(stderr, "indexed in %s\n\n", time.Since(start).Round(time.Millisecond))
	qs, err := readQuestions(filepath.Join(dir, "questions.jsonl"))
	if err != nil {
		return err
	}
	for _, mode := range []string{engine.ModeLocal, engine.ModeGlobal} {
		for _, q := range qs {
			if q.Mode != mode {
				continue
			}
			resp, err := eng.Query(ctx, engine.Request{Corpus: corpus, Query: q.Question, Mode: mode}, nil)
			if err != nil {
				return fmt.Errorf("answering %q: %w", q.Question, err)
			}
			printAnswer(stdout, q.Question, resp)
			break
		}
	}
	fmt.Fprintf(stderr, "serving the query API and the console at %s; try: graphrag query -corpus %s \"...\"   (Ctrl-C to stop)\n", console, corpus)
	return nil
}

// consoleURL is where a browser on this machine finds the console.
func consoleURL(addr *flag.Flag) string {
	a := ":8080"
	if addr != nil {
		a = addr.Value.String()
	}
	if strings.HasPrefix(a, ":") {
		a = "localhost" + a
	}
	return "http://" + a + "/ui/"
}

type sampleQuestion struct {
	Question string   `json:"question"`
	Mode     string   `json:"mode"`
	Expect   []string `json:"expect"`
}

func readQuestions(path string) ([]sampleQuestion, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading sample questions: %w", err)
	}
	defer f.Close()
	var out []sampleQuestion
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var q sampleQuestion
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, q)
	}
	return out, sc.Err()
}

func printAnswer(w io.Writer, q string, r *engine.Response) {
	fmt.Fprintf(w, "Q (%s): %s\n", r.Mode, q)
	fmt.Fprintf(w, "A: %s\n", r.Answer)
	for _, c := range r.Citations {
		if c.ChunkID != "" {
			fmt.Fprintf(w, "   [%s] %s\n", c.Marker, c.ChunkID)
		} else {
			fmt.Fprintf(w, "   [%s] community %s\n", c.Marker, c.Community)
		}
	}
	fmt.Fprintf(w, "   (%.0f ms)\n\n", r.Timings["total"])
}
