package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// observed records, across every test of the package, the statuses each documented
// operation answered with ("POST /v1/query" -> 200, 400, ...).
var observed = struct {
	sync.Mutex
	m map[string]map[int]bool
}{m: map[string]map[int]bool{}}

// recordStatuses serves a, recording the status of every request a route matched.
func recordStatuses(a *API) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pattern := a.mux.Handler(r)
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		a.ServeHTTP(sw, r)
		if pattern == "" {
			return // no operation: the mux's 404 and 405
		}
		observed.Lock()
		defer observed.Unlock()
		if observed.m[pattern] == nil {
			observed.m[pattern] = map[int]bool{}
		}
		observed.m[pattern][sw.status] = true
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(status int) {
	if !w.wrote {
		w.status, w.wrote = status, true
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// TestMain runs the tests, then checks that openapi.json documents every status any
// route answered with during them (issue 12: the API returned 429 and 500 where the
// document listed neither).
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && !testing.Short() {
		if missing := undocumentedStatuses(); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: openapi.json does not document statuses the API returned:\n  %s\n", strings.Join(missing, "\n  "))
			code = 1
		}
	}
	os.Exit(code)
}

func undocumentedStatuses() []string {
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPI(), &doc); err != nil {
		return []string{"openapi.json: " + err.Error()}
	}
	observed.Lock()
	defer observed.Unlock()
	var missing []string
	for pattern, statuses := range observed.m {
		method, path, _ := strings.Cut(pattern, " ")
		path = strings.ReplaceAll(path, "...}", "}") // a wildcard {id...} is {id} in the document
		op, ok := doc.Paths[path][strings.ToLower(method)]
		for status := range statuses {
			if !ok || op.Responses[strconv.Itoa(status)] == nil {
				missing = append(missing, fmt.Sprintf("%s %d", pattern, status))
			}
		}
	}
	slices.Sort(missing)
	return missing
}
