package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/graphrag/graphrag/cmd/graphrag/internal/stack"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/service"
	"github.com/graphrag/graphrag/services/query/ask"
	"github.com/graphrag/graphrag/services/query/engine"
)

// upConfig is everything `graphrag up` runs.
type upConfig struct {
	stack.Config
	Demo     bool
	Examples string
	Corpus   string
	httpAddr *flag.Flag // the platform's -http-addr, to print the console's address
	fs       *flag.FlagSet
}

func runUp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := defaultUpConfig()
	explicit := slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(strings.TrimLeft(a, "-"), "examples") }) ||
		os.Getenv(service.EnvVarName(platform.EnvPrefix, "examples")) != ""
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
			cfg.fs = fs
			rate := fs.Lookup("api-rate")
			rate.Usage += "; graphrag up listening on loopback only (the default -http-addr): unlimited unless given"
		},
		Tune:   func(c *service.CommonFlags, _ *platform.BackendFlags) { cfg.localRate(c.HTTPAddr) },
		Config: &cfg,
		Build: func(_ context.Context, p *platform.Platform, mux *http.ServeMux, log *slog.Logger) ([]service.Component, error) {
			if cfg.Demo {
				dir, err := findExamples(cfg.Examples, explicit)
				if err != nil {
					return nil, err
				}
				cfg.Examples = dir
			}
			st, err := stack.New(p, cfg.Config, log)
			if err != nil {
				return nil, err
			}
			st.Query.Mount(mux)
			comps := st.Components()
			if cfg.Demo {
				comps = append(comps, service.Loop("demo", func(ctx context.Context) error {
					return demo(ctx, p, st.Asker, cfg.Examples, cfg.Corpus, apiBase(cfg.httpAddr), stdout, stderr)
				}))
			}
			return comps, nil
		},
	})
}

// localRate lifts the per-client rate limit while the API listens on loopback only and
// -api-rate was not given: there the one client is the user's own console and scripts
// (a script of 60 quick questions got 48 refusals), and the limit guards a shared
// service from one client. Listening on other interfaces keeps the default.
func (c *upConfig) localRate(httpAddr string) {
	set := false
	c.fs.Visit(func(f *flag.Flag) { set = set || f.Name == "api-rate" })
	if !set && isLoopbackAddr(httpAddr) {
		c.Query.API.RatePerSecond = 0
	}
}

// isLoopbackAddr reports whether a listen address takes connections from this host only.
func isLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func defaultUpConfig() upConfig {
	return upConfig{Config: stack.DefaultConfig(), Examples: "examples", Corpus: "demo"}
}

// findExamples returns the directory of the sample corpus: dir when it holds one;
// otherwise, unless dir was given explicitly, the examples/ of the repository the working
// directory is in, or of the one the binary was built in (bin/graphrag). A demo without
// its corpus would publish nothing and wait forever for indexing: not finding it is an
// error, said before anything starts.
func findExamples(dir string, explicit bool) (string, error) {
	if hasExamples(dir) {
		return dir, nil
	}
	if !explicit {
		var tried []string
		if wd, err := os.Getwd(); err == nil {
			tried = append(tried, ancestors(wd)...)
		}
		if exe, err := os.Executable(); err == nil {
			tried = append(tried, ancestors(filepath.Dir(exe))...)
		}
		for _, d := range tried {
			if c := filepath.Join(d, "examples"); hasExamples(c) {
				return c, nil
			}
		}
	}
	return "", fmt.Errorf("-demo: no sample corpus in %s (want %s and %s): run from the repository, or pass -examples with the path of its examples directory",
		dir, filepath.Join(dir, "corpus"), filepath.Join(dir, "questions.jsonl"))
}

func hasExamples(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, "corpus"))
	if err != nil || !st.IsDir() {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, "questions.jsonl"))
	return err == nil
}

// ancestors are dir and the directories above it.
func ancestors(dir string) []string {
	var out []string
	for {
		out = append(out, dir)
		parent := filepath.Dir(dir)
		if parent == dir {
			return out
		}
		dir = parent
	}
}

// demo indexes the sample corpus and answers its first local and first global question.
func demo(ctx context.Context, p *platform.Platform, eng *ask.Asker, dir, corpus, api string, stdout, stderr io.Writer) error {
	start := time.Now()
	sum, err := publishPaths(ctx, p.Bus, corpus, []string{filepath.Join(dir, "corpus")}, publishOptions{progress: stderr})
	if err != nil {
		return err
	}
	if sum.Published+sum.Duplicate == 0 {
		return fmt.Errorf("-demo: no document of %s could be published (%d skipped)", filepath.Join(dir, "corpus"), len(sum.Skipped))
	}
	fmt.Fprintf(stderr, "published %d documents to corpus %q (%d unchanged since the last run); indexing...\n", sum.Published, corpus, sum.Duplicate)
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
	for _, mode := range []string{ask.ModeLocal, ask.ModeGlobal} {
		for _, q := range qs {
			if q.Mode != mode {
				continue
			}
			resp, err := eng.Query(ctx, ask.Request{Corpus: corpus, Query: q.Question, Mode: mode}, nil)
			if err != nil {
				return fmt.Errorf("answering %q: %w", q.Question, err)
			}
			printAnswer(stdout, q.Question, resp)
			break
		}
	}
	fmt.Fprintf(stderr, "serving the query API and the console at %s/ui/; try: %s   (Ctrl-C to stop)\n", api, queryHint(api, corpus))
	return nil
}

// apiBase is where a client on this machine finds the API that -http-addr serves.
func apiBase(addr *flag.Flag) string {
	a := service.DefaultHTTPAddr
	if addr != nil {
		a = addr.Value.String()
	}
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return "http://" + a
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// queryHint is the graphrag query command that reaches the API at api: with -api when
// the API is not where graphrag query looks by default.
func queryHint(api, corpus string) string {
	hint := fmt.Sprintf("graphrag query -corpus %s \"...\"", corpus)
	if api != defaultQueryAPI {
		hint = fmt.Sprintf("graphrag query -api %s -corpus %s \"...\"", api, corpus)
	}
	return hint
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

func printAnswer(w io.Writer, q string, r *ask.Response) {
	fmt.Fprintf(w, "Q (%s): %s\n", r.Mode, q)
	fmt.Fprintf(w, "A: %s\n", r.Answer)
	printCitations(w, r)
	fmt.Fprintf(w, "   (%.0f ms)\n\n", r.Timings["total"])
}

// printCitations lists the sources of an answer by marker: the passage's title and
// opening words with its chunk id, or the community report's title.
func printCitations(w io.Writer, r *ask.Response) {
	chunks := map[string]engine.Chunk{}
	for _, c := range r.Context.Chunks {
		chunks[c.ID] = c
	}
	reports := map[string]engine.Community{}
	for _, c := range r.Context.Communities {
		reports[c.ID] = c
	}
	for _, c := range r.Citations {
		if c.ChunkID != "" {
			ch := chunks[c.ChunkID]
			title := ch.Title
			if title == "" {
				title = c.DocumentID
			}
			fmt.Fprintf(w, "   [%s] %s: %s (%s)\n", c.Marker, title, snippet(ch.Text, 100), c.ChunkID)
			continue
		}
		rep := reports[c.Community]
		fmt.Fprintf(w, "   [%s] %s: %s (community %s)\n", c.Marker, rep.Title, snippet(rep.Summary, 100), c.Community)
	}
}

// snippet is the start of s on one line, at most n bytes, cut at a word.
func snippet(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if i := strings.LastIndexByte(s[:cut], ' '); i > n/2 {
		cut = i
	}
	return s[:cut] + "…"
}
