package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/service"
	"github.com/graphrag/graphrag/services/query/ask"
	"github.com/graphrag/graphrag/services/query/engine"
)

// defaultQueryAPI is where graphrag query looks for the API: graphrag up's default.
const defaultQueryAPI = "http://127.0.0.1:8080"

func runQuery(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("query", flag.ContinueOnError)
	fs.SetOutput(stderr)
	api := fs.String("api", defaultQueryAPI, "query API base URL")
	var token service.Secret
	fs.Var(&token, "api-token", "bearer token for the API")
	corpus := fs.String("corpus", "", "corpus name (required)")
	mode := fs.String("mode", ask.ModeAuto, strings.Join(ask.Modes, ", ")+" (README, \"Which mode when\")")
	topK := fs.Int("top-k", 0, fmt.Sprintf("chunks in the context, 1..%d (0 = server default)", engine.MaxTopK))
	responseType := fs.String("response-type", "", `the answer's form, e.g. "Bullet Points", "Single Paragraph" (empty = the answerer's own)`)
	userPrompt := fs.String("user-prompt", "", "instructions added to the answer prompt after the question")
	onlyContext := fs.Bool("only-context", false, "print the context the mode assembles, without an answer")
	level := fs.Int("level", -1, "community level, 0 the coarsest (-1 = automatic)")
	asJSON := fs.Bool("json", false, "print the whole JSON response")
	stream := fs.Bool("stream", false, "stream the answer as it is generated")
	timeout := fs.Duration("timeout", 2*time.Minute, "request timeout")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: graphrag query -corpus NAME [flags] "question"`)
		fs.PrintDefaults()
	}
	if err := service.ParseFlags(fs, args, platform.EnvPrefix); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errors.New("no question given")
	}
	req := ask.Request{Corpus: *corpus, Query: strings.Join(fs.Args(), " "), Mode: *mode, TopK: *topK, Stream: *stream && !*asJSON && !*onlyContext,
		ResponseType: *responseType, UserPrompt: *userPrompt, OnlyContext: *onlyContext}
	if *level >= 0 {
		req.Level = level
	}
	if err := req.Validate(); err != nil {
		return err
	}
	body, _ := json.Marshal(req)
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(*api, "/")+"/v1/query", bytes.NewReader(body))
	if err != nil {
		return err
	}
	hreq.Header.Set("Content-Type", "application/json")
	if token.Value() != "" {
		hreq.Header.Set("Authorization", "Bearer "+token.Value())
	}
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		return fmt.Errorf("calling the query API: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return fmt.Errorf("query API: %s: %s", resp.Status, e.Error)
		}
		return fmt.Errorf("query API: %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	if req.Stream {
		return printStream(resp.Body, stdout)
	}
	if *asJSON {
		_, err := io.Copy(stdout, resp.Body)
		return err
	}
	var r ask.Response
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return fmt.Errorf("decoding the answer: %w", err)
	}
	if req.OnlyContext {
		printContext(stdout, req.Query, &r)
		return nil
	}
	printAnswer(stdout, req.Query, &r)
	return nil
}

// printContext lists what a mode assembled: the follow-ups of a drift search, the
// passages best first, the entities and the community reports.
func printContext(w io.Writer, q string, r *ask.Response) {
	c := r.Context
	fmt.Fprintf(w, "Q (%s, context only): %s\n", r.Mode, q)
	for _, f := range r.FollowUps {
		fmt.Fprintf(w, "   follow-up: %s\n", f)
	}
	for i, ch := range c.Chunks {
		title := ch.Title
		if title == "" {
			title = ch.DocumentID
		}
		fmt.Fprintf(w, "   %d. %s: %s (%s)\n", i+1, title, snippet(ch.Text, 100), ch.ID)
	}
	if len(c.Entities) > 0 {
		names := make([]string, 0, len(c.Entities))
		for _, en := range c.Entities {
			names = append(names, en.Name)
		}
		fmt.Fprintf(w, "   entities: %s\n", strings.Join(names, ", "))
	}
	for _, rep := range c.Communities {
		fmt.Fprintf(w, "   report: %s (community %s)\n", rep.Title, rep.ID)
	}
	fmt.Fprintf(w, "   (%.0f ms)\n\n", r.Timings["total"])
}

// printStream prints delta events as they come and the citations of the done event.
func printStream(r io.Reader, w io.Writer) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data := []byte(strings.TrimPrefix(line, "data: "))
			switch event {
			case "delta":
				var d struct{ Text string }
				if json.Unmarshal(data, &d) == nil {
					fmt.Fprint(w, d.Text)
				}
			case "error":
				var e struct{ Error string }
				_ = json.Unmarshal(data, &e)
				return fmt.Errorf("query API: %s", e.Error)
			case "done":
				var resp ask.Response
				if err := json.Unmarshal(data, &resp); err == nil {
					fmt.Fprintln(w)
					printCitations(w, &resp)
				}
			}
		}
	}
	return sc.Err()
}
