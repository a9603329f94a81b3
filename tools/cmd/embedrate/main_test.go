package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/llm/llmtest"
)

func writeCorpus(t *testing.T, lines ...string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "corpus.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestEmbedsEveryPassageInBatches(t *testing.T) {
	srv := llmtest.NewServer(llmtest.WithRequestLog())
	defer srv.Close()
	dir := writeCorpus(t,
		`{"id":"a","title":"Gullhead Lighthouse","text":"Arthur Fenwick kept the light."}`,
		`{"id":"b","title":"Marrow Bay","text":"A bay on the north coast."}`,
		`{"id":"c","title":"","text":"An untitled note."}`)
	var out bytes.Buffer
	if err := run(t.Context(), []string{"-dataset", dir, "-base-url", srv.URL(), "-model", "fake", "-batch", "2", "-concurrency", "1"}, &out); err != nil {
		t.Fatalf("run: %v", err)
	}
	var sent []string
	for _, r := range srv.Requests() {
		if r.Embed == nil {
			continue
		}
		in, ok := r.Embed.Input.([]any)
		if !ok {
			t.Fatalf("embeddings input %T, want a list of texts", r.Embed.Input)
		}
		for _, x := range in {
			sent = append(sent, x.(string))
		}
	}
	want := []string{"Gullhead Lighthouse\n\nArthur Fenwick kept the light.", "Marrow Bay\n\nA bay on the north coast.", "An untitled note."}
	slices.Sort(sent) // the client may send the batches in any order
	slices.Sort(want)
	if !slices.Equal(sent, want) {
		t.Errorf("sent %q, want the chunk texts %q", sent, want)
	}
	if !strings.Contains(out.String(), "3 passages") || !strings.Contains(out.String(), "2 requests of up to 2") {
		t.Errorf("report %q does not count 3 passages in 2 requests", out.String())
	}
}

func TestBadInput(t *testing.T) {
	srv := llmtest.NewServer()
	defer srv.Close()
	good := writeCorpus(t, `{"id":"a","title":"T","text":"x"}`)
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"no dataset":   {[]string{"-base-url", srv.URL(), "-model", "m"}, "-dataset is required"},
		"no endpoint":  {[]string{"-dataset", good, "-model", "m"}, "-base-url is required"},
		"no model":     {[]string{"-dataset", good, "-base-url", srv.URL()}, "-model is required"},
		"zero batch":   {[]string{"-dataset", good, "-base-url", srv.URL(), "-model", "m", "-batch", "0"}, "-batch"},
		"bad line":     {[]string{"-dataset", writeCorpus(t, `{"id":"a"`), "-base-url", srv.URL(), "-model", "m"}, "line 1"},
		"empty text":   {[]string{"-dataset", writeCorpus(t, `{"id":"a","title":"T"}`), "-base-url", srv.URL(), "-model", "m"}, "no text"},
		"missing file": {[]string{"-dataset", t.TempDir(), "-base-url", srv.URL(), "-model", "m"}, "corpus.jsonl"},
	} {
		err := run(t.Context(), c.args, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error naming %q", name, err, c.want)
		}
	}
}
