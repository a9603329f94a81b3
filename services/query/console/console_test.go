package console

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/services/query/ask"
)

func get(t *testing.T, srv *httptest.Server, path string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func newServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestServesFilesWithSecurityHeaders(t *testing.T) {
	srv := newServer(t)
	tests := []struct{ path, contentType, contains string }{
		{"/ui/", "text/html", `<main id="main"`},
		{"/ui/app.js", "javascript", "function h(tag"},
		{"/ui/style.css", "text/css", "#graph"},
		{"/ui/vendor/cytoscape.min.js", "javascript", "cytoscape"},
		{"/ui/vendor/cytoscape.LICENSE", "text/plain", "Permission is hereby granted"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			resp, body := get(t, srv, tc.path)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, tc.contentType) {
				t.Errorf("Content-Type %q, want %s", ct, tc.contentType)
			}
			if !strings.Contains(body, tc.contains) {
				t.Errorf("body lacks %q", tc.contains)
			}
			if got := resp.Header.Get("Content-Security-Policy"); got != CSP {
				t.Errorf("Content-Security-Policy %q, want %q", got, CSP)
			}
			if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Error("no X-Content-Type-Options: nosniff")
			}
		})
	}
	if resp, _ := get(t, srv, "/ui/nope.js"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("missing file: status %d, want 404", resp.StatusCode)
	}
}

func TestCSPForbidsInlineScript(t *testing.T) {
	for directive := range strings.SplitSeq(CSP, ";") {
		f := strings.Fields(directive)
		if len(f) == 0 || (f[0] != "script-src" && f[0] != "default-src" && f[0] != "style-src") {
			continue
		}
		for _, src := range f[1:] {
			if src == "'unsafe-inline'" || src == "'unsafe-eval'" || src == "*" || strings.HasPrefix(src, "http") {
				t.Errorf("%s allows %s", f[0], src)
			}
		}
	}
}

// The page holds no inline script or style: the CSP would block it.
func TestIndexHasNoInlineCode(t *testing.T) {
	b, err := static.ReadFile("static/index.html")
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, m := range regexp.MustCompile(`<script[^>]*>`).FindAllString(html, -1) {
		if !strings.Contains(m, `src="`) {
			t.Errorf("inline script %s", m)
		}
	}
	for _, bad := range []string{"<style", " style=", " onclick=", " onload=", "javascript:"} {
		if strings.Contains(html, bad) {
			t.Errorf("index.html holds %q", bad)
		}
	}
}

// Corpus text reaches the page only as text: the script never parses strings as HTML.
func TestScriptWritesNoHTML(t *testing.T) {
	for _, f := range []string{"static/app.js", "static/curate.js"} {
		b, err := static.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "DOMParser", "createContextualFragment"} {
			if strings.Contains(string(b), bad) {
				t.Errorf("%s uses %s", f, bad)
			}
		}
	}
}

// The Ask page's mode selector offers every mode of the query API, in its order.
func TestAskOffersEveryMode(t *testing.T) {
	b, err := static.ReadFile("static/app.js")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?s)const MODES = \[(.*?)\n\];`).FindSubmatch(b)
	if block == nil {
		t.Fatal("app.js has no MODES list")
	}
	var got []string
	for _, m := range regexp.MustCompile(`\['([a-z]+)', '[^']+'\]`).FindAllSubmatch(block[1], -1) {
		got = append(got, string(m[1]))
	}
	if !slices.Equal(got, ask.Modes) {
		t.Errorf("the mode selector offers %q, want the API's modes %q", got, ask.Modes)
	}
}
