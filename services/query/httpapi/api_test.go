package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/normalize"
	"github.com/graphrag/graphrag/services/query/ask"
	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/query/explore"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// newTestAPI serves the fixture engine behind cfg; the server is closed at cleanup.
func newTestAPI(t *testing.T, cfg Config, opts ...Option) *httptest.Server {
	t.Helper()
	return newTestAPIOver(t, querytest.Demo(t), cfg, opts...)
}

// newTestAPIOver serves an offline engine over st behind cfg.
func newTestAPIOver(t *testing.T, st querytest.Stores, cfg Config, opts ...Option) *httptest.Server {
	t.Helper()
	e, err := ask.New(engine.Config{}, ask.Config{}, engine.Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, Logger: querytest.Logger()}, nil)
	if err != nil {
		t.Fatalf("building engine: %v", err)
	}
	srv := httptest.NewServer(recordStatuses(mustNew(t, e, explore.New(st.Graph, st.Vectors), cfg, opts...)))
	t.Cleanup(srv.Close)
	return srv
}

// mustNew is New for a configuration that passes Validate.
func mustNew(t testing.TB, e *ask.Asker, x Explorer, cfg Config, opts ...Option) *API {
	t.Helper()
	api, err := New(e, x, cfg, querytest.Logger(), opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return api
}

// call sends one request (body is sent verbatim; "" sends none) and returns the response
// with its body read.
func call(t *testing.T, srv *httptest.Server, method, path, token, body string) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+path, rd)
	if err != nil {
		t.Fatalf("building %s %s: %v", method, path, err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the body of %s %s: %v", method, path, err)
	}
	return resp, b
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encoding %v: %v", v, err)
	}
	return string(b)
}

// decodeOK checks a 200 JSON answer and decodes it into out.
func decodeOK(t *testing.T, resp *http.Response, body []byte, out any) {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, body %s: want 200", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		t.Fatalf("decoding %s into %T: %v", body, out, err)
	}
}

// apiErrorOf checks that body is a JSON {"error": "..."} with a non-empty message.
func apiErrorOf(t *testing.T, resp *http.Response, body []byte) string {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var e apiError
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Error == "" {
		t.Fatalf("body %q is not a JSON error (%v)", body, err)
	}
	return e.Error
}

func entityPath(corpus, name string) string {
	return "/v1/corpora/" + url.PathEscape(corpus) + "/entities/" + url.PathEscape(name)
}

func TestHTTPQuery(t *testing.T) {
	srv := newTestAPI(t, DefaultConfig())
	fixtureIDs := map[string]bool{"c1": true, "c2": true, "c3": true}
	tests := []struct {
		name  string
		req   ask.Request
		check func(t *testing.T, r ask.Response)
	}{
		{name: "local", req: ask.Request{Corpus: "demo", Query: "Who designed the Analytical Engine?", Mode: ask.ModeLocal, TopK: 2},
			check: func(t *testing.T, r ask.Response) {
				if r.Answer == "" || len(r.Context.Chunks) == 0 || len(r.Context.Chunks) > 2 {
					t.Fatalf("answer %q with %d chunks: want an answer over 1..2 chunks", r.Answer, len(r.Context.Chunks))
				}
				if r.Context.Chunks[0].ID != "c3" {
					t.Errorf("top chunk = %s, want c3 (the passage on who designed the engine)", r.Context.Chunks[0].ID)
				}
				for _, c := range r.Context.Chunks {
					if !fixtureIDs[c.ID] || c.Text == "" {
						t.Errorf("chunk %+v is not a fixture passage", c)
					}
				}
			}},
		{name: "global", req: ask.Request{Corpus: "demo", Query: "What are the main themes of this corpus?", Mode: ask.ModeGlobal},
			check: func(t *testing.T, r ask.Response) {
				// The fixture has no community reports: the answer says so; no chunks.
				if len(r.Context.Chunks) != 0 {
					t.Errorf("global search returned chunks: %+v", r.Context.Chunks)
				}
			}},
		{name: "global at a level", req: ask.Request{Corpus: "demo", Query: "Summarize the corpus", Mode: ask.ModeGlobal, Level: new(0)},
			check: func(*testing.T, ask.Response) {}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := call(t, srv, http.MethodPost, "/v1/query", "", mustJSON(t, tc.req))
			var r ask.Response
			decodeOK(t, resp, body, &r)
			if r.Mode != tc.req.Mode {
				t.Errorf("mode = %q, want %q", r.Mode, tc.req.Mode)
			}
			if _, ok := r.Timings["total"]; !ok {
				t.Errorf("timings %v lack total", r.Timings)
			}
			tc.check(t, r)
		})
	}
}

func TestHTTPRetrieve(t *testing.T) {
	srv := newTestAPI(t, DefaultConfig())
	resp, body := call(t, srv, http.MethodPost, "/v1/retrieve", "",
		mustJSON(t, ask.Request{Corpus: "demo", Query: "What did Ada Lovelace write for the Analytical Engine?", TopK: 3}))
	var r retrieveResponse
	decodeOK(t, resp, body, &r)
	if len(r.Context.Chunks) == 0 || len(r.Context.Chunks) > 3 {
		t.Fatalf("got %d chunks, want 1..3", len(r.Context.Chunks))
	}
	if r.Context.Chunks[0].ID != "c1" {
		t.Errorf("top chunk = %s, want c1 (Lovelace's algorithm for the engine)", r.Context.Chunks[0].ID)
	}
	for i, c := range r.Context.Chunks {
		if len(c.Lists) == 0 {
			t.Errorf("chunk %s has no list hits", c.ID)
		}
		for _, h := range c.Lists {
			if !slices.Contains([]string{"dense", "lexical", "graph", "subject"}, h.List) || h.Rank < 1 {
				t.Errorf("chunk %s: list hit %+v, want a known list with a 1-based rank", c.ID, h)
			}
		}
		if i > 0 && c.Score > r.Context.Chunks[i-1].Score {
			t.Errorf("chunks not sorted by fused score: %v after %v", c.Score, r.Context.Chunks[i-1].Score)
		}
	}
	if len(r.Context.Entities) == 0 {
		t.Error("no entities in the context")
	}
	if _, ok := r.Timings["total"]; !ok {
		t.Errorf("timings %v lack total", r.Timings)
	}
}

func TestHTTPEntity(t *testing.T) {
	srv := newTestAPI(t, DefaultConfig())
	tests := []struct {
		name, entity, query string
		wantKey             string
		wantNeighbors       []string
	}{
		{name: "normalized name", entity: "the analytical engine,", wantKey: "Analytical Engine",
			wantNeighbors: []string{"Ada Lovelace", "Charles Babbage"}},
		{name: "depth 1", entity: "ADA lovelace", query: "?depth=1", wantKey: "Ada Lovelace",
			wantNeighbors: []string{"Analytical Engine", "Charles Babbage"}},
		{name: "depth 4", entity: "Charles Babbage", query: "?depth=4", wantKey: "Charles Babbage",
			wantNeighbors: []string{"Ada Lovelace", "Analytical Engine"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := call(t, srv, http.MethodGet, entityPath("demo", tc.entity)+tc.query, "", "")
			var nb explore.Neighborhood
			decodeOK(t, resp, body, &nb)
			if nb.Entity.Key != normalize.Name(tc.wantKey) || nb.Entity.Name != tc.wantKey {
				t.Errorf("entity = %+v, want %s", nb.Entity, tc.wantKey)
			}
			var keys, want []string
			for _, n := range nb.Neighbors {
				keys = append(keys, n.Key)
				if n.Distance < 1 {
					t.Errorf("neighbour %+v at distance %d, want ≥ 1", n, n.Distance)
				}
			}
			for _, n := range tc.wantNeighbors {
				want = append(want, normalize.Name(n))
			}
			slices.Sort(keys)
			if !slices.Equal(keys, want) {
				t.Errorf("neighbours = %v, want %v", keys, want)
			}
			if len(nb.Relationships) != 3 {
				t.Errorf("got %d relationships, want the fixture's 3: %+v", len(nb.Relationships), nb.Relationships)
			}
		})
	}
}

func TestHTTPStats(t *testing.T) {
	srv := newTestAPI(t, DefaultConfig())
	resp, body := call(t, srv, http.MethodGet, "/v1/corpora/demo/stats", "", "")
	var st engine.Stats
	decodeOK(t, resp, body, &st)
	if want := (engine.Stats{Corpus: "demo", Chunks: 3, Entities: 3, Relationships: 3}); st != want {
		t.Errorf("stats = %+v, want %+v", st, want)
	}
}

// TestHTTPOpenAPI checks that the document describes exactly the routes the API serves.
func TestHTTPOpenAPI(t *testing.T) {
	srv, _ := newExploreAPI(t, DefaultConfig(), append(newFakes().options(), WithExtractionSettings(&fakeSettings{}))...)
	resp, body := call(t, srv, http.MethodGet, "/openapi.json", "", "")
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("status %d, Content-Type %q: want 200 JSON", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if !bytes.Equal(body, OpenAPI()) {
		t.Error("served document differs from OpenAPI()")
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("openapi.json is not valid JSON: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi version %q, want 3.x", doc.OpenAPI)
	}
	documented := map[string]bool{}
	for p, ops := range doc.Paths {
		for m := range ops {
			if m == "parameters" || m == "summary" || m == "description" {
				continue // path-level fields, not operations
			}
			documented[strings.ToUpper(m)+" "+p] = true
		}
	}

	// The routes New registers, each with a request it must answer with 200.
	routes := []struct{ method, pattern, path, body string }{
		{http.MethodPost, "/v1/query", "/v1/query", `{"corpus":"demo","query":"Who designed the Analytical Engine?"}`},
		{http.MethodPost, "/v1/retrieve", "/v1/retrieve", `{"corpus":"demo","query":"Analytical Engine"}`},
		{http.MethodGet, "/v1/corpora/{corpus}/entities/{name}", entityPath("demo", "Ada Lovelace") + "?depth=1", ""},
		{http.MethodGet, "/v1/corpora/{corpus}/stats", "/v1/corpora/demo/stats", ""},
		{http.MethodGet, "/openapi.json", "/openapi.json", ""},
		// Exploration (explore.go).
		{http.MethodGet, "/v1/corpora/{corpus}/entities", "/v1/corpora/demo/entities?prefix=ada", ""},
		{http.MethodGet, "/v1/corpora/{corpus}/entities/{name}/passages", entityPath("demo", "Ada Lovelace") + "/passages", ""},
		{http.MethodGet, "/v1/corpora/{corpus}/chunks/{id}", "/v1/corpora/demo/chunks/c1", ""},
		{http.MethodGet, "/v1/corpora/{corpus}/communities", "/v1/corpora/demo/communities", ""},
		{http.MethodGet, "/v1/corpora/{corpus}/communities/{id}", "/v1/corpora/demo/communities/" + commTop, ""},
	}
	routes = append(routes, resourceRoutes...)
	routes = append(routes, ollamaRoutes...)
	routes = append(routes, curationRoutes...)
	routes = append(routes, settingsRoutes...)
	served := map[string]bool{}
	for _, r := range routes {
		served[r.method+" "+r.pattern] = true
	}
	// Served beside the API by query.Service.Mount (tested in package query).
	served["POST /mcp"] = true
	for k := range served {
		if !documented[k] {
			t.Errorf("route %s is served but not in openapi.json", k)
		}
	}
	for k := range documented {
		if !served[k] {
			t.Errorf("openapi.json documents %s, which the API does not serve", k)
		}
	}
	for _, r := range routes {
		t.Run(r.method+" "+r.pattern, func(t *testing.T) {
			if resp, body := call(t, srv, r.method, r.path, "", r.body); resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted {
				t.Errorf("status %d, body %s: want 200 or 202", resp.StatusCode, body)
			}
			// The documented methods are the only ones served.
			for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
				if m == r.method || served[m+" "+r.pattern] {
					continue
				}
				if resp, _ := call(t, srv, m, r.path, "", r.body); resp.StatusCode != http.StatusMethodNotAllowed {
					t.Errorf("%s: status %d, want 405", m, resp.StatusCode)
				}
			}
		})
	}
}

type sseEvent struct{ name, data string }

// parseSSE splits a complete event stream into its events.
func parseSSE(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	for block := range strings.SplitSeq(strings.TrimSpace(string(body)), "\n\n") {
		var ev sseEvent
		for line := range strings.SplitSeq(block, "\n") {
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data += strings.TrimPrefix(line, "data: ")
			default:
				t.Fatalf("unexpected line %q in event stream %s", line, body)
			}
		}
		out = append(out, ev)
	}
	return out
}

func TestHTTPQueryStream(t *testing.T) {
	srv := newTestAPI(t, DefaultConfig())
	for _, mode := range []string{ask.ModeLocal, ask.ModeGlobal} {
		t.Run(mode, func(t *testing.T) {
			resp, body := call(t, srv, http.MethodPost, "/v1/query", "",
				mustJSON(t, ask.Request{Corpus: "demo", Query: "Who designed the Analytical Engine?", Mode: mode, Stream: true}))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, body %s: want 200", resp.StatusCode, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Errorf("Content-Type %q, want text/event-stream", ct)
			}
			events := parseSSE(t, body)
			if len(events) < 2 {
				t.Fatalf("got %d events, want deltas then done: %s", len(events), body)
			}
			var streamed strings.Builder
			for _, ev := range events[:len(events)-1] {
				if ev.name != "delta" {
					t.Fatalf("event %q before the last, want delta: %s", ev.name, body)
				}
				var d struct {
					Text *string `json:"text"`
				}
				if err := json.Unmarshal([]byte(ev.data), &d); err != nil || d.Text == nil {
					t.Fatalf("delta data %q is not {\"text\": ...} (%v)", ev.data, err)
				}
				streamed.WriteString(*d.Text)
			}
			last := events[len(events)-1]
			if last.name != "done" {
				t.Fatalf("last event %q, want done: %s", last.name, body)
			}
			var r ask.Response
			if err := json.Unmarshal([]byte(last.data), &r); err != nil {
				t.Fatalf("done data does not decode into Response: %v", err)
			}
			if r.Mode != mode || r.Answer == "" {
				t.Errorf("mode %q answer %q: want a %s answer", r.Mode, r.Answer, mode)
			}
			if streamed.String() != r.Answer {
				t.Errorf("deltas %q, want the answer %q", streamed.String(), r.Answer)
			}
		})
	}
}

func TestHTTPBadInput(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxBodyBytes = 8 << 10 // above MaxQueryBytes, so an oversized query still decodes
	srv := newTestAPI(t, cfg)
	long := strings.Repeat("a", engine.MaxQueryBytes+1)
	tests := []struct {
		name, method, path, body string
		wantStatus               int
		wantErr                  string // substring of the error message
	}{
		{"malformed JSON", http.MethodPost, "/v1/query", `{"corpus":"demo","query":`, 400, "body"},
		{"not an object", http.MethodPost, "/v1/query", `["demo"]`, 400, "body"},
		{"trailing data", http.MethodPost, "/v1/query", `{"corpus":"demo","query":"x"} {}`, 400, "trailing"},
		{"unknown field", http.MethodPost, "/v1/query", `{"corpus":"demo","query":"x","qurey":"y"}`, 400, "qurey"},
		{"unknown field retrieve", http.MethodPost, "/v1/retrieve", `{"corpus":"demo","query":"x","limit":3}`, 400, "limit"},
		{"wrong type", http.MethodPost, "/v1/query", `{"corpus":"demo","query":42}`, 400, "query"},
		{"empty query", http.MethodPost, "/v1/query", `{"corpus":"demo","query":"  "}`, 400, "query: is empty"},
		{"empty query retrieve", http.MethodPost, "/v1/retrieve", `{"corpus":"demo","query":""}`, 400, "query: is empty"},
		{"oversized query", http.MethodPost, "/v1/query", `{"corpus":"demo","query":"` + long + `"}`, 400, "limit 4096"},
		{"invalid corpus name", http.MethodPost, "/v1/query", `{"corpus":"Bad Corpus!","query":"x"}`, 400, "corpus"},
		{"bad mode", http.MethodPost, "/v1/query", `{"corpus":"demo","query":"x","mode":"deep"}`, 400, "mode"},
		{"bad level", http.MethodPost, "/v1/query", `{"corpus":"demo","query":"x","mode":"global","level":17}`, 400, "level"},
		{"negative level", http.MethodPost, "/v1/query", `{"corpus":"demo","query":"x","level":-1}`, 400, "level"},
		{"bad top_k", http.MethodPost, "/v1/retrieve", `{"corpus":"demo","query":"x","top_k":101}`, 400, "top_k: 101 is outside 0..100"},
		{"negative top_k", http.MethodPost, "/v1/query", `{"corpus":"demo","query":"x","top_k":-1}`, 400, "top_k: -1 is outside 0..100"},
		{"top_k not a number", http.MethodPost, "/v1/query", `{"corpus":"demo","query":"x","top_k":"ten"}`, 400, "top_k"},
		{"mode lists the modes", http.MethodPost, "/v1/query", `{"corpus":"demo","query":"x","mode":"deep"}`, 400, "auto, naive, local, global, hybrid, mix, drift"},
		{"user_prompt too long", http.MethodPost, "/v1/query", `{"corpus":"demo","query":"x","user_prompt":"` + strings.Repeat("u", ask.MaxUserPromptBytes+1) + `"}`, 400, "user_prompt: is 2001 bytes, limit 2000"},
		{"user_prompt control character", http.MethodPost, "/v1/query", `{"corpus":"demo","query":"x","user_prompt":"a\u0000b"}`, 400, "user_prompt: holds the control character U+0000"},
		{"response_type too long", http.MethodPost, "/v1/query", `{"corpus":"demo","query":"x","response_type":"` + strings.Repeat("r", ask.MaxResponseTypeBytes+1) + `"}`, 400, "response_type: is 101 bytes, limit 100"},
		{"response_type on two lines", http.MethodPost, "/v1/query", `{"corpus":"demo","query":"x","response_type":"Bullet\nPoints"}`, 400, "response_type: holds the control character U+000A"},
		{"only_context not a boolean", http.MethodPost, "/v1/query", `{"corpus":"demo","query":"x","only_context":"yes"}`, 400, "only_context"},
		{"naive without text lists", http.MethodPost, "/v1/query", `{"corpus":"demo","query":"x","mode":"naive","weights":{"graph":1}}`, 400, "naive mode"},
		{"bad graph ranking", http.MethodPost, "/v1/retrieve", `{"corpus":"demo","query":"x","graph_ranking":"bfs"}`, 400, "graph_ranking"},
		{"all-zero weights", http.MethodPost, "/v1/retrieve", `{"corpus":"demo","query":"x","weights":{"dense":0,"lexical":0,"graph":0}}`, 400, "weights"},
		{"depth not a number", http.MethodGet, entityPath("demo", "Ada Lovelace") + "?depth=two", "", 400, "depth"},
		{"depth zero", http.MethodGet, entityPath("demo", "Ada Lovelace") + "?depth=0", "", 400, "depth"},
		{"depth too large", http.MethodGet, entityPath("demo", "Ada Lovelace") + "?depth=5", "", 400, "depth"},
		{"unknown corpus query", http.MethodPost, "/v1/query", `{"corpus":"nope","query":"x","mode":"local"}`, 404, "unknown corpus"},
		{"unknown corpus global", http.MethodPost, "/v1/query", `{"corpus":"nope","query":"x","mode":"global"}`, 404, "unknown corpus"},
		{"unknown corpus retrieve", http.MethodPost, "/v1/retrieve", `{"corpus":"nope","query":"x"}`, 404, "unknown corpus"},
		{"unknown corpus stats", http.MethodGet, "/v1/corpora/nope/stats", "", 404, "unknown corpus"},
		{"invalid corpus stats", http.MethodGet, "/v1/corpora/NOPE!/stats", "", 400, "corpus"},
		{"unknown entity", http.MethodGet, entityPath("demo", "Grace Hopper"), "", 404, "grace hopper"},
		{"body over MaxBodyBytes", http.MethodPost, "/v1/query", `{"corpus":"demo","query":"` + strings.Repeat("b", 9<<10) + `"}`, 413, "too large"},
		{"body over MaxBodyBytes retrieve", http.MethodPost, "/v1/retrieve", `{"corpus":"demo","query":"` + strings.Repeat("b", 9<<10) + `"}`, 413, "too large"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := call(t, srv, tc.method, tc.path, "", tc.body)
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, body %s: want %d", resp.StatusCode, body, tc.wantStatus)
			}
			if msg := apiErrorOf(t, resp, body); !strings.Contains(msg, tc.wantErr) {
				t.Errorf("error %q does not mention %q", msg, tc.wantErr)
			}
		})
	}

	t.Run("wrong method", func(t *testing.T) {
		// The mux decides before any handler runs; the answer is still a JSON error.
		resp, body := call(t, srv, http.MethodGet, "/v1/query", "", "")
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Fatalf("status %d, body %s: want 405", resp.StatusCode, body)
		}
		if allow := resp.Header.Get("Allow"); !strings.Contains(allow, http.MethodPost) {
			t.Errorf("Allow %q, want POST", allow)
		}
		if msg := apiErrorOf(t, resp, body); !strings.Contains(msg, "POST") {
			t.Errorf("error %q does not name the allowed method", msg)
		}
	})
	t.Run("no route", func(t *testing.T) {
		resp, body := call(t, srv, http.MethodGet, "/v1/nowhere", "", "")
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("status %d, body %s: want 404", resp.StatusCode, body)
		}
		if msg := apiErrorOf(t, resp, body); !strings.Contains(msg, "/v1/nowhere") {
			t.Errorf("error %q does not name the path", msg)
		}
	})
}

func TestHTTPAuth(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Tokens = []string{"alpha-token", "beta-token"}
	srv := newTestAPI(t, cfg)
	tests := []struct {
		name       string
		header     string // Authorization header; "" sends none
		wantStatus int
	}{
		{"no header", "", 401},
		{"wrong token", "Bearer gamma-token", 401},
		{"prefix of a token", "Bearer alpha", 401},
		{"token without scheme", "alpha-token", 401},
		{"basic scheme", "Basic YWxwaGEtdG9rZW46", 401},
		{"empty bearer", "Bearer ", 401},
		{"first token", "Bearer alpha-token", 200},
		{"second token", "Bearer beta-token", 200},
		{"scheme is case-insensitive", "bearer beta-token", 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/v1/corpora/demo/stats", nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, body %s: want %d", resp.StatusCode, body, tc.wantStatus)
			}
			if tc.wantStatus == http.StatusUnauthorized {
				if h := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(h, "Bearer") {
					t.Errorf("WWW-Authenticate %q, want a Bearer challenge", h)
				}
				apiErrorOf(t, resp, body)
				return
			}
			var st engine.Stats
			decodeOK(t, resp, body, &st)
			if st.Chunks != 3 {
				t.Errorf("chunks = %d, want 3", st.Chunks)
			}
		})
	}
	t.Run("POST routes are guarded", func(t *testing.T) {
		for _, p := range []string{"/v1/query", "/v1/retrieve"} {
			if resp, body := call(t, srv, http.MethodPost, p, "", `{"corpus":"demo","query":"x"}`); resp.StatusCode != 401 {
				t.Errorf("%s without a token: status %d, body %s: want 401", p, resp.StatusCode, body)
			}
		}
	})
	t.Run("openapi.json is public", func(t *testing.T) {
		if resp, _ := call(t, srv, http.MethodGet, "/openapi.json", "", ""); resp.StatusCode != 200 {
			t.Errorf("status %d, want 200 without a token", resp.StatusCode)
		}
	})
}

func TestHTTPFlagsLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tokens := write("tokens", "# team tokens\n  alpha-token  \n\nbeta-token\n")
	empty := write("empty", "")
	comments := write("comments", "# nothing yet\n   \n")
	tests := []struct {
		name    string
		args    []string
		want    []string
		wantErr bool
	}{
		{name: "none", args: nil, want: nil},
		{name: "file", args: []string{"-api-tokens-file", tokens}, want: []string{"alpha-token", "beta-token"}},
		{name: "comma list", args: []string{"-api-tokens", " one, two ,,three"}, want: []string{"one", "two", "three"}},
		{name: "both", args: []string{"-api-tokens", "one", "-api-tokens-file", tokens}, want: []string{"one", "alpha-token", "beta-token"}},
		{name: "empty file", args: []string{"-api-tokens-file", empty}, wantErr: true},
		{name: "only comments", args: []string{"-api-tokens-file", comments}, wantErr: true},
		{name: "missing file", args: []string{"-api-tokens-file", filepath.Join(dir, "absent")}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := Flags{Config: DefaultConfig()}
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			f.RegisterFlags(fs)
			if err := fs.Parse(append([]string{"-api-rate", "5", "-api-max-body", "1024"}, tc.args...)); err != nil {
				t.Fatalf("parsing flags: %v", err)
			}
			cfg, err := f.Load()
			if tc.wantErr {
				if err == nil {
					t.Fatalf("Load() = %+v, want an error", cfg)
				}
				t.Logf("error: %v", err)
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if !slices.Equal(cfg.Tokens, tc.want) {
				t.Errorf("tokens = %q, want %q", cfg.Tokens, tc.want)
			}
			if cfg.RatePerSecond != 5 || cfg.MaxBodyBytes != 1024 || cfg.Timeout != DefaultConfig().Timeout {
				t.Errorf("config = %+v: want the flags' rate and body limit, the default timeout", cfg)
			}
		})
	}
	t.Run("missing file error wraps the cause", func(t *testing.T) {
		f := Flags{TokensFile: filepath.Join(dir, "absent")}
		if _, err := f.Load(); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("error %v does not wrap os.ErrNotExist", err)
		}
	})
	t.Run("loaded tokens authenticate", func(t *testing.T) {
		f := Flags{Config: DefaultConfig(), TokensFile: tokens}
		cfg, err := f.Load()
		if err != nil {
			t.Fatal(err)
		}
		srv := newTestAPI(t, cfg)
		for tok, want := range map[string]int{"beta-token": 200, "# team tokens": 401, "": 401} {
			if resp, body := call(t, srv, http.MethodGet, "/v1/corpora/demo/stats", tok, ""); resp.StatusCode != want {
				t.Errorf("token %q: status %d, body %s: want %d", tok, resp.StatusCode, body, want)
			}
		}
	})
}

// New refuses a configuration Validate refuses, naming the flag, instead of repairing
// it (a burst of 0 with a rate used to become 1).
func TestNewValidatesConfig(t *testing.T) {
	st := querytest.Demo(t)
	e, err := ask.New(engine.Config{}, ask.Config{}, engine.Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, Logger: querytest.Logger()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"zero burst", func(c *Config) { c.RatePerSecond, c.Burst = 5, 0 }, "-api-burst"},
		{"negative rate", func(c *Config) { c.RatePerSecond = -1 }, "-api-rate"},
		{"negative timeout", func(c *Config) { c.Timeout = -time.Second }, "-api-timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tc.edit(&cfg)
			api, err := New(e, explore.New(st.Graph, st.Vectors), cfg, querytest.Logger())
			if err == nil || !strings.Contains(err.Error(), tc.want) || api != nil {
				t.Fatalf("New = %v, %v; want an error naming %s", api, err, tc.want)
			}
		})
	}
	// Zero limits take their defaults; no rate needs no burst.
	if _, err := New(e, explore.New(st.Graph, st.Vectors), Config{}, querytest.Logger()); err != nil {
		t.Fatalf("New(Config{}) = %v", err)
	}
}

func TestHTTPRateLimit(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Tokens = []string{"first", "second"}
	cfg.RatePerSecond, cfg.Burst = 1, 2
	srv := newTestAPI(t, cfg)
	// The burst allows two requests at once; at 1/s the bucket cannot refill a whole
	// token between these back-to-back loopback requests.
	for i, want := range []int{200, 200, 429} {
		resp, body := call(t, srv, http.MethodGet, "/v1/corpora/demo/stats", "first", "")
		if resp.StatusCode != want {
			t.Fatalf("request %d: status %d, body %s: want %d", i+1, resp.StatusCode, body, want)
		}
		if want == http.StatusTooManyRequests {
			if ra := resp.Header.Get("Retry-After"); ra == "" {
				t.Error("429 without Retry-After")
			}
			if msg := apiErrorOf(t, resp, body); !strings.Contains(msg, "rate limit") {
				t.Errorf("error %q does not name the rate limit", msg)
			}
		}
	}
	// Another client has its own bucket.
	for i := range 2 {
		if resp, body := call(t, srv, http.MethodGet, "/v1/corpora/demo/stats", "second", ""); resp.StatusCode != 200 {
			t.Errorf("second client, request %d: status %d, body %s: want 200", i+1, resp.StatusCode, body)
		}
	}
	// A rejected token does not consume a client's bucket (auth comes first).
	if resp, _ := call(t, srv, http.MethodGet, "/v1/corpora/demo/stats", "intruder", ""); resp.StatusCode != 401 {
		t.Errorf("unknown token: status %d, want 401", resp.StatusCode)
	}
}

func TestHTTPTimeout(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Timeout = time.Nanosecond // every request's context has expired when the handler runs
	srv := newTestAPI(t, cfg)
	tests := []struct{ name, method, path, body string }{
		{"query", http.MethodPost, "/v1/query", `{"corpus":"demo","query":"Who designed the Analytical Engine?","mode":"local"}`},
		{"global", http.MethodPost, "/v1/query", `{"corpus":"demo","query":"Summarize the corpus","mode":"global"}`},
		{"retrieve", http.MethodPost, "/v1/retrieve", `{"corpus":"demo","query":"Analytical Engine"}`},
		{"entity", http.MethodGet, entityPath("demo", "Ada Lovelace"), ""},
		{"stats", http.MethodGet, "/v1/corpora/demo/stats", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := call(t, srv, tc.method, tc.path, "", tc.body)
			if resp.StatusCode < 500 {
				t.Fatalf("status %d, body %s: want a 5xx (504) for an expired deadline", resp.StatusCode, body)
			}
			msg := apiErrorOf(t, resp, body)
			t.Logf("status %d: %s", resp.StatusCode, msg)
		})
	}
	t.Run("stream", func(t *testing.T) {
		// A stream has sent its 200 before the engine runs: the failure is an error event.
		resp, body := call(t, srv, http.MethodPost, "/v1/query", "", `{"corpus":"demo","query":"Who designed the Analytical Engine?","stream":true}`)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("status %d, Content-Type %q: want a 200 event stream", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		events := parseSSE(t, body)
		last := events[len(events)-1]
		var e apiError
		if err := json.Unmarshal([]byte(last.data), &e); last.name != "error" || err != nil || !strings.Contains(e.Error, "time limit") {
			t.Errorf("events %+v: want a last error event naming the time limit", events)
		}
	})
}

// TestHTTPQueryTextIsData sends text that looks like Cypher and Milvus filter syntax: it
// must be searched for as words, never run, and must leave the stores as they were.
func TestHTTPQueryTextIsData(t *testing.T) {
	srv := newTestAPI(t, DefaultConfig())
	stats := func() engine.Stats {
		t.Helper()
		resp, body := call(t, srv, http.MethodGet, "/v1/corpora/demo/stats", "", "")
		var st engine.Stats
		decodeOK(t, resp, body, &st)
		return st
	}
	before := stats()
	const hostile = `MATCH (n) DETACH DELETE n; id in ["x"] || 1==1`
	for _, mode := range []string{ask.ModeLocal, ask.ModeGlobal, ask.ModeAuto} {
		resp, body := call(t, srv, http.MethodPost, "/v1/query", "", mustJSON(t, ask.Request{Corpus: "demo", Query: hostile, Mode: mode}))
		var r ask.Response
		decodeOK(t, resp, body, &r)
		for _, c := range r.Context.Chunks {
			if c.ID == "x" {
				t.Errorf("mode %s: the filter text selected chunk %q", mode, c.ID)
			}
		}
	}
	resp, body := call(t, srv, http.MethodPost, "/v1/retrieve", "", mustJSON(t, ask.Request{Corpus: "demo", Query: hostile}))
	var rr retrieveResponse
	decodeOK(t, resp, body, &rr)
	if resp, body := call(t, srv, http.MethodGet, entityPath("demo", hostile), "", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("entity named by the hostile text: status %d, body %s: want 404", resp.StatusCode, body)
	}
	if after := stats(); after != before {
		t.Errorf("stats changed: before %+v, after %+v", before, after)
	}
	// The graph itself is intact, not only its counts.
	resp, body = call(t, srv, http.MethodGet, entityPath("demo", "Charles Babbage"), "", "")
	var nb explore.Neighborhood
	decodeOK(t, resp, body, &nb)
	if len(nb.Neighbors) != 2 || len(nb.Relationships) != 3 {
		t.Errorf("neighbourhood after the hostile queries = %+v, want 2 neighbours and 3 relationships", nb)
	}
}

// Every mode answers over the corpus with reports, echoes its name and returns the
// context it composes; only_context returns that context without an answer, and a
// bullet response type makes the extractive answer a list.
func TestHTTPQueryModes(t *testing.T) {
	srv := newTestAPIOver(t, querytest.DemoWithReports(t), DefaultConfig())
	const q = "What did Ada Lovelace write for the Analytical Engine?"
	for _, tc := range []struct {
		mode                 string
		graph, reports, more bool // entities, community reports, follow-ups in the context
	}{
		{ask.ModeNaive, false, false, false},
		{ask.ModeLocal, true, true, false},
		{ask.ModeHybrid, true, true, false},
		{ask.ModeMix, true, true, false},
		{ask.ModeDrift, true, true, true},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			var r ask.Response
			resp, body := call(t, srv, http.MethodPost, "/v1/query", "", mustJSON(t, ask.Request{Corpus: "demo", Query: q, Mode: tc.mode, ResponseType: "Bullet Points"}))
			decodeOK(t, resp, body, &r)
			c := r.Context
			if r.Mode != tc.mode || len(c.Chunks) == 0 || (len(c.Entities) > 0) != tc.graph || (len(c.Communities) > 0) != tc.reports || (len(r.FollowUps) > 0) != tc.more {
				t.Fatalf("mode %s: %d chunks, %d entities, %d reports, follow-ups %q", r.Mode, len(c.Chunks), len(c.Entities), len(c.Communities), r.FollowUps)
			}
			if !strings.HasPrefix(r.Answer, "- ") || len(r.Citations) == 0 {
				t.Errorf("answer %q with %d citations: want a cited bullet list", r.Answer, len(r.Citations))
			}

			var only ask.Response
			resp, body = call(t, srv, http.MethodPost, "/v1/query", "", mustJSON(t, ask.Request{Corpus: "demo", Query: q, Mode: tc.mode, OnlyContext: true}))
			decodeOK(t, resp, body, &only)
			if only.Answer != "" || len(only.Citations) != 0 || only.Mode != tc.mode {
				t.Errorf("only_context: mode %s, answer %q, citations %v: want the mode, no answer", only.Mode, only.Answer, only.Citations)
			}
			if got, want := mustJSON(t, only.Context), mustJSON(t, r.Context); got != want {
				t.Errorf("only_context context differs from the answered one:\n got %s\nwant %s", got, want)
			}

			var rr retrieveResponse
			resp, body = call(t, srv, http.MethodPost, "/v1/retrieve", "", mustJSON(t, ask.Request{Corpus: "demo", Query: q, Mode: tc.mode}))
			decodeOK(t, resp, body, &rr)
			if got, want := mustJSON(t, rr.Context), mustJSON(t, r.Context); got != want {
				t.Errorf("/v1/retrieve context differs from the query's:\n got %s\nwant %s", got, want)
			}
		})
	}
	t.Run("global only_context", func(t *testing.T) {
		var r ask.Response
		resp, body := call(t, srv, http.MethodPost, "/v1/query", "", mustJSON(t, ask.Request{Corpus: "demo", Query: "What are the main themes?", OnlyContext: true}))
		decodeOK(t, resp, body, &r)
		if r.Mode != ask.ModeGlobal || r.Answer != "" || len(r.Context.Communities) == 0 || len(r.Partials) != 0 {
			t.Errorf("auto with a global cue: mode %s, answer %q, %d reports, %d partials: want global's reports, no map phase",
				r.Mode, r.Answer, len(r.Context.Communities), len(r.Partials))
		}
	})
	t.Run("top_k", func(t *testing.T) {
		var r ask.Response
		resp, body := call(t, srv, http.MethodPost, "/v1/query", "", mustJSON(t, ask.Request{Corpus: "demo", Query: q, Mode: ask.ModeMix, TopK: 1}))
		decodeOK(t, resp, body, &r)
		if len(r.Context.Chunks) != 1 {
			t.Errorf("mix with top_k 1: %d passages", len(r.Context.Chunks))
		}
	})
}
