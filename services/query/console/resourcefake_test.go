//go:build browser

package console_test

// A thin, test-only stand-in for the documents-and-corpora routes of the API contract
// (GET /v1/corpora, GET /v1/corpora/{c}/status, GET and POST /v1/corpora/{c}/documents),
// used only while the branch under test lacks them (startStack probes first). It sits in
// front of the real `graphrag up` and proxies every other request to it; status comes
// from `graphrag status -json` and uploads are published with `graphrag publish`, so the
// pipeline behind the console is the real one. Its documents list knows only the files
// uploaded through it, and reports no chunk counts.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

type fakeDoc struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Chunks  int    `json:"chunks"`
	State   string `json:"state"`
	Updated string `json:"updated"`
}

type resourceFake struct {
	s    *stack
	srv  *httptest.Server
	dir  string
	mu   sync.Mutex
	docs map[string][]*fakeDoc // corpus → documents uploaded through the fake
	url  string
}

func newResourceFake(t *testing.T, s *stack) *resourceFake {
	t.Helper()
	dir, err := os.MkdirTemp("", "graphrag-ui-uploads-")
	if err != nil {
		t.Fatal(err)
	}
	f := &resourceFake{s: s, dir: dir, docs: map[string][]*fakeDoc{}}
	target, _ := url.Parse(s.direct)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1 // server-sent events pass through as they come
	mux := http.NewServeMux()
	mux.Handle("/", proxy)
	mux.HandleFunc("GET /v1/corpora", f.corpora)
	mux.HandleFunc("GET /v1/corpora/{corpus}/status", f.status)
	mux.HandleFunc("GET /v1/corpora/{corpus}/documents", f.list)
	mux.HandleFunc("POST /v1/corpora/{corpus}/documents", f.upload)
	f.srv = httptest.NewServer(f.authorized(mux))
	f.url = f.srv.URL
	return f
}

// authorized applies the real process's bearer check to the fake's own routes by
// asking the real API with the same header.
func (f *resourceFake) authorized(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isFakeRoute(r) {
			req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, f.s.direct+"/v1/corpora/demo/stats", nil)
			req.Header.Set("Authorization", r.Header.Get("Authorization"))
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusUnauthorized {
					writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "missing or invalid bearer token"})
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

var fakeRoute = regexp.MustCompile(`^/v1/corpora(/[^/]+/(status|documents))?$`)

func isFakeRoute(r *http.Request) bool { return fakeRoute.MatchString(r.URL.Path) }

func (f *resourceFake) close() {
	f.srv.Close()
	_ = os.RemoveAll(f.dir)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// pipelineStatus is what `graphrag status -json` prints.
type pipelineStatus struct {
	Corpus string `json:"corpus"`
	Stages []struct {
		Stage        string `json:"stage"`
		Total        uint64 `json:"total"`
		Pending      uint64 `json:"pending"`
		InFlight     uint64 `json:"in_flight"`
		Done         uint64 `json:"done"`
		DeadLettered uint64 `json:"dead_lettered"`
	} `json:"stages"`
	Graph struct {
		Dirty      bool      `json:"dirty"`
		LastRunAt  time.Time `json:"last_run_at"`
		Levels     int       `json:"levels"`
		Detections int       `json:"detections"`
	} `json:"graph"`
	Complete bool `json:"complete"`
}

func (f *resourceFake) pipelineStatus(r *http.Request, corpus string) (pipelineStatus, error) {
	var st pipelineStatus
	out, err := exec.CommandContext(r.Context(), graphragBin, "status", "-json", "-corpus", corpus, "-nats-url", f.s.natsURL).Output()
	if err != nil && len(out) == 0 {
		return st, fmt.Errorf("graphrag status: %w", err)
	}
	return st, json.Unmarshal(out, &st)
}

func stateOf(st pipelineStatus) string {
	switch {
	case len(st.Stages) == 0 || st.Stages[0].Total == 0:
		return "empty"
	case st.Complete:
		return "complete"
	default:
		return "indexing"
	}
}

func (f *resourceFake) corpora(w http.ResponseWriter, r *http.Request) {
	st, err := f.pipelineStatus(r, "demo")
	if err != nil {
		writeJSON(w, 500, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, 200, map[string]any{"corpora": []map[string]any{{"name": "demo", "state": stateOf(st)}}})
}

func (f *resourceFake) status(w http.ResponseWriter, r *http.Request) {
	corpus := r.PathValue("corpus")
	st, err := f.pipelineStatus(r, corpus)
	if err != nil {
		writeJSON(w, 500, map[string]string{"error": err.Error()})
		return
	}
	deads := []map[string]any{}
	for _, s := range st.Stages {
		if s.DeadLettered > 0 {
			deads = append(deads, map[string]any{"stage": s.Stage, "reason": "(reasons come with the real route)", "count": s.DeadLettered})
		}
	}
	lastRun := ""
	if !st.Graph.LastRunAt.IsZero() {
		lastRun = st.Graph.LastRunAt.Format(time.RFC3339)
	}
	writeJSON(w, 200, map[string]any{"corpus": corpus, "state": stateOf(st), "stages": st.Stages, "dead_letters": deads,
		"llm":       map[string]int{"calls": 0, "prompt_tokens": 0, "completion_tokens": 0},
		"detection": map[string]any{"runs": st.Graph.Detections, "levels": st.Graph.Levels, "last_run": lastRun, "current": !st.Graph.Dirty}})
}

func (f *resourceFake) list(w http.ResponseWriter, r *http.Request) {
	corpus := r.PathValue("corpus")
	st, err := f.pipelineStatus(r, corpus)
	if err != nil {
		writeJSON(w, 500, map[string]string{"error": err.Error()})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	docs := []*fakeDoc{}
	for _, d := range f.docs[corpus] {
		if st.Complete {
			d.State = "indexed"
		}
		docs = append(docs, d)
	}
	writeJSON(w, 200, map[string]any{"documents": docs, "next": ""})
}

var unsafeID = regexp.MustCompile(`[^A-Za-z0-9._/-]+`)

func (f *resourceFake) upload(w http.ResponseWriter, r *http.Request) {
	corpus := r.PathValue("corpus")
	if err := r.ParseMultipartForm(8 << 20); err != nil {
		writeJSON(w, 400, map[string]string{"error": err.Error()})
		return
	}
	dir, err := os.MkdirTemp(f.dir, "upload-")
	if err != nil {
		writeJSON(w, 500, map[string]string{"error": err.Error()})
		return
	}
	var paths []string
	var docs []*fakeDoc
	for _, fh := range r.MultipartForm.File["file"] {
		src, err := fh.Open()
		if err != nil {
			writeJSON(w, 400, map[string]string{"error": err.Error()})
			return
		}
		b, _ := io.ReadAll(src)
		src.Close()
		name := filepath.Base(fh.Filename)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			writeJSON(w, 500, map[string]string{"error": err.Error()})
			return
		}
		paths = append(paths, p)
		title := name
		for line := range strings.SplitSeq(string(b), "\n") {
			if t, ok := strings.CutPrefix(line, "# "); ok {
				title = strings.TrimSpace(t)
				break
			}
		}
		docs = append(docs, &fakeDoc{ID: unsafeID.ReplaceAllString(name, "_"), Title: title, State: "pending", Updated: time.Now().UTC().Format(time.RFC3339)})
	}
	if len(paths) == 0 {
		writeJSON(w, 400, map[string]string{"error": "no file in the multipart field \"file\""})
		return
	}
	args := append([]string{"publish", "-corpus", corpus, "-nats-url", f.s.natsURL}, paths...)
	if out, err := exec.CommandContext(r.Context(), graphragBin, args...).CombinedOutput(); err != nil {
		writeJSON(w, 500, map[string]string{"error": fmt.Sprintf("graphrag publish: %v: %s", err, out)})
		return
	}
	f.mu.Lock()
	ids := []string{}
	for _, d := range docs {
		f.docs[corpus] = append(f.docs[corpus], d)
		ids = append(ids, d.ID)
	}
	f.mu.Unlock()
	writeJSON(w, http.StatusAccepted, map[string]any{"ids": ids})
}
