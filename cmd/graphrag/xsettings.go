package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/extractsettings"
	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/service"
)

// The extraction settings commands are clients of the query API
// (/v1/corpora/{corpus}/extraction-settings, .../proposal, .../reindex), like query:
// the service validates and stores, the CLI reads and writes YAML.

// apiClient calls the query API with a bearer token.
type apiClient struct {
	base  string
	token service.Secret
}

func (c *apiClient) register(fs *flag.FlagSet) {
	fs.StringVar(&c.base, "api", defaultQueryAPI, "query API base URL")
	fs.Var(&c.token, "api-token", "bearer token for the API")
}

// call sends body (JSON, nil for none) and decodes a 2xx answer into out; another
// status is an error with the API's message.
func (c *apiClient) call(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.base, "/")+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token.Value() != "" {
		req.Header.Set("Authorization", "Bearer "+c.token.Value())
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("calling the query API: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("reading the query API's answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		var e struct{ Error string }
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return fmt.Errorf("query API: %s: %s", resp.Status, e.Error)
		}
		return fmt.Errorf("query API: %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("decoding the query API's answer: %w", err)
	}
	return nil
}

func corpusPath(corpus, rest string) string { return "/v1/corpora/" + url.PathEscape(corpus) + rest }

// clientFlags parses the flags of an API client command with a required -corpus.
func clientFlags(fs *flag.FlagSet, args []string, corpus *string) error {
	if err := service.ParseFlags(fs, args, platform.EnvPrefix); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if err := events.ValidateCorpus(*corpus); err != nil {
		return fmt.Errorf("-corpus: %w", err)
	}
	return nil
}

// runExtractionSettings prints a corpus's extraction settings as YAML, or saves those
// of a YAML file (-file).
func runExtractionSettings(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("extraction-settings", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var api apiClient
	api.register(fs)
	corpus := fs.String("corpus", "", "corpus name (required)")
	file := fs.String("file", "", "YAML file of settings to save (- for standard input); without it, print the current settings")
	timeout := fs.Duration("timeout", time.Minute, "request timeout")
	setUsage(fs, stderr, "usage: graphrag extraction-settings -corpus NAME [-file settings.yaml]\n"+
		"Prints a corpus's extraction settings (entity types, domain, examples, system prompt) as YAML, or saves\n"+
		"those of -file as the next version. Saving re-extracts nothing: graphrag reindex -corpus NAME does.")
	if err := clientFlags(fs, args, corpus); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	// The file is checked before any call: its errors name its lines.
	var set extractsettings.Settings
	if *file != "" {
		data, err := readSettingsFile(*file)
		if err != nil {
			return err
		}
		if set, err = extractsettings.ParseYAML(data); err != nil {
			return fmt.Errorf("%s: %w", *file, err)
		}
	}
	path := corpusPath(*corpus, "/extraction-settings")
	var cur extractsettings.Record
	if err := api.call(ctx, http.MethodGet, path, nil, &cur); err != nil {
		return err
	}
	if *file == "" {
		return printSettings(stdout, fmt.Sprintf("extraction settings of corpus %s, version %d%s", cur.Corpus, cur.Version, updated(cur)), cur.Settings)
	}
	var rec extractsettings.Record
	if err := api.call(ctx, http.MethodPut, path, set, &rec); err != nil {
		return err
	}
	if rec.Version == cur.Version {
		fmt.Fprintf(stdout, "corpus %s: extraction settings unchanged (version %d)\n", rec.Corpus, rec.Version)
		return nil
	}
	fmt.Fprintf(stdout, "corpus %s: extraction settings version %d saved; chunks extracted from now on use them.\n"+
		"Nothing is re-extracted until: graphrag reindex -corpus %s\n", rec.Corpus, rec.Version, rec.Corpus)
	return nil
}

func readSettingsFile(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(io.LimitReader(os.Stdin, 1<<20))
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("reading the settings: %w", err)
	}
	return data, nil
}

func updated(r extractsettings.Record) string {
	if r.UpdatedAt.IsZero() {
		return " (none saved: the built-in prompt)"
	}
	return ", saved " + r.UpdatedAt.UTC().Format(time.RFC3339)
}

// printSettings writes settings as YAML under a comment line.
func printSettings(w io.Writer, comment string, s extractsettings.Settings) error {
	y, err := s.YAML()
	if err != nil {
		return err
	}
	if s.IsZero() {
		y = []byte("{}\n")
	}
	_, err = fmt.Fprintf(w, "# %s\n%s", comment, y)
	return err
}

// runReindex has a corpus's chunks extracted again under its current settings.
func runReindex(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("reindex", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var api apiClient
	api.register(fs)
	corpus := fs.String("corpus", "", "corpus name (required)")
	timeout := fs.Duration("timeout", 10*time.Minute, "request timeout (publishing a large corpus's chunks takes a while)")
	setUsage(fs, stderr, "usage: graphrag reindex -corpus NAME\n"+
		"Publishes every extracted chunk of the corpus to the extractor again, to be extracted under the corpus's\n"+
		"current extraction settings; each new extraction replaces the chunk's earlier one in the graph.")
	if err := clientFlags(fs, args, corpus); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	var res extractsettings.Reindexed
	if err := api.call(ctx, http.MethodPost, corpusPath(*corpus, "/reindex"), nil, &res); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "corpus %s: %d chunks of %d documents published for extraction under settings version %d (%d not extracted: left alone)\n"+
		"Progress: graphrag status -corpus %s\n", res.Corpus, res.Chunks, res.Documents, res.SettingsVersion, res.Skipped, res.Corpus)
	return nil
}

// runPromptTune prints extraction settings the chat model proposes from a sample of the
// corpus, as YAML to edit and save with extraction-settings -file.
func runPromptTune(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("prompt-tune", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var api apiClient
	api.register(fs)
	corpus := fs.String("corpus", "", "corpus name (required)")
	sample := fs.Int("sample", extractsettings.DefaultSample, fmt.Sprintf("passages of the corpus shown to the model, 1..%d", extractsettings.MaxSample))
	out := fs.String("out", "", "write the YAML to this file instead of standard output")
	timeout := fs.Duration("timeout", 5*time.Minute, "request timeout")
	setUsage(fs, stderr, "usage: graphrag prompt-tune -corpus NAME [-sample N] [-out settings.yaml]\n"+
		"Asks the query service's chat model for extraction settings (domain, entity types, 2-3 examples) from a\n"+
		"sample of the corpus's passages, and prints them as YAML to review, edit and save with\n"+
		"graphrag extraction-settings -corpus NAME -file settings.yaml. Needs a chat model (-llm-chat-model).")
	if err := clientFlags(fs, args, corpus); err != nil {
		return err
	}
	if *sample < 1 || *sample > extractsettings.MaxSample {
		return fmt.Errorf("-sample: %d is outside 1..%d", *sample, extractsettings.MaxSample)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	var p extractsettings.Proposal
	if err := api.call(ctx, http.MethodPost, corpusPath(*corpus, "/extraction-settings/proposal"), map[string]int{"sample": *sample}, &p); err != nil {
		return err
	}
	var b bytes.Buffer
	var comment strings.Builder
	fmt.Fprintf(&comment, "extraction settings proposed by %s from %d passages of corpus %s: review, edit, then\n"+
		"# graphrag extraction-settings -corpus %s -file THIS_FILE", p.Model, p.Passages, *corpus, *corpus)
	for _, d := range p.Dropped {
		comment.WriteString("\n# left out: " + d)
	}
	if err := printSettings(&b, comment.String(), p.Settings); err != nil {
		return err
	}
	if *out == "" {
		_, err := stdout.Write(b.Bytes())
		return err
	}
	if err := os.WriteFile(*out, b.Bytes(), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", *out, err)
	}
	fmt.Fprintf(stdout, "wrote %s (%d entity types, %d examples)\n", *out, len(p.Settings.EntityTypes), len(p.Settings.Examples))
	return nil
}
