package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The settings commands refuse a mistake before any call (a missing corpus, a settings
// file that does not validate, naming its line, a sample out of range), and pass the
// API's own message on.
func TestExtractionSettingsCommandMistakes(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"error":"proposing extraction settings needs a chat model"}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("entity_types: [PERSON]\nexamples:\n  - text: t\n    output:\n      entities: [{name: A, type: PLACE, description: d}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	typo := filepath.Join(dir, "typo.yaml")
	if err := os.WriteFile(typo, []byte("entity_types: [PERSON]\ndomian: storms\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"extraction-settings", "-api", srv.URL}, "-corpus: "},
		{[]string{"extraction-settings", "-api", srv.URL, "-corpus", "demo", "-file", bad}, `examples[0].output.entities[0].type: "PLACE" is not one of entity_types`},
		{[]string{"extraction-settings", "-api", srv.URL, "-corpus", "demo", "-file", typo}, `line 2: unknown key "domian"`},
		{[]string{"extraction-settings", "-api", srv.URL, "-corpus", "demo", "-file", filepath.Join(dir, "none.yaml")}, "no such file"},
		{[]string{"reindex", "-api", srv.URL, "-corpus", "Not A Corpus"}, "-corpus: "},
		{[]string{"reindex", "-api", srv.URL, "-corpus", "demo", "extra"}, "unexpected arguments: extra"},
		{[]string{"prompt-tune", "-api", srv.URL, "-corpus", "demo", "-sample", "0"}, "-sample: 0 is outside 1..30"},
	} {
		var out, errw bytes.Buffer
		err := dispatch(t.Context(), tc.args, &out, &errw)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("graphrag %s: %v, want an error with %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
	if calls != 0 {
		t.Errorf("%d API calls for commands refused before any", calls)
	}
	var out bytes.Buffer
	err := dispatch(t.Context(), []string{"prompt-tune", "-api", srv.URL, "-corpus", "demo"}, &out, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "503 Service Unavailable: proposing extraction settings needs a chat model") {
		t.Errorf("prompt-tune against a service without a model: %v", err)
	}
}
