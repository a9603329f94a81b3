package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/services/query/ask"
	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/query/explore"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// fuzzTarget is the API over the fixture corpus, with the statuses openapi.json lists
// per operation ("POST /v1/query" -> "200", "400", ...).
type fuzzTarget struct {
	api *API
	doc map[string]map[string]bool
}

func newFuzzTarget(f *testing.F) fuzzTarget {
	f.Helper()
	st := querytest.DemoWithReports(f)
	e, err := ask.New(engine.Config{}, ask.Config{}, engine.Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, Logger: querytest.Logger()}, nil)
	if err != nil {
		f.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPI(), &doc); err != nil {
		f.Fatal(err)
	}
	ft := fuzzTarget{api: mustNew(f, e, explore.New(st.Graph, st.Vectors), DefaultConfig()), doc: map[string]map[string]bool{}}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			k := strings.ToUpper(method) + " " + path
			ft.doc[k] = map[string]bool{}
			for status := range op.Responses {
				ft.doc[k][status] = true
			}
		}
	}
	return ft
}

// serve sends one request and checks what every answer must be: a status the
// document lists for the route, a JSON error in the API's terms, or a JSON (or event
// stream) success.
func (ft fuzzTarget) serve(t *testing.T, req *http.Request) {
	t.Helper()
	_, pattern := ft.api.mux.Handler(req)
	rec := httptest.NewRecorder()
	ft.api.ServeHTTP(rec, req)
	body := rec.Body.Bytes()
	if pattern != "" && !ft.doc[pattern][strconv.Itoa(rec.Code)] {
		t.Fatalf("%s answered %d, which openapi.json does not list: %s", pattern, rec.Code, body)
	}
	if rec.Code >= 400 {
		var e apiError
		if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
			t.Fatalf("status %d with a body that is not a JSON error: %q", rec.Code, body)
		}
		checkAPITerms(t, body)
		if rec.Code >= 500 {
			t.Fatalf("%s: a request's content made the service fail: %d %s", pattern, rec.Code, body)
		}
		return
	}
	if ct := rec.Header().Get("Content-Type"); ct == "text/event-stream" {
		if bytes.Contains(body, []byte("event: error")) {
			checkAPITerms(t, body)
		}
		return
	}
	if !json.Valid(body) {
		t.Fatalf("status %d with a body that is not JSON: %q", rec.Code, body)
	}
}

// FuzzQueryBody sends arbitrary bodies to POST /v1/query and /v1/retrieve. Seeds: the
// requests the tests send, valid and not.
func FuzzQueryBody(f *testing.F) {
	for _, s := range []string{
		`{"corpus":"demo","query":"Who designed the Analytical Engine?"}`,
		`{"corpus":"demo","query":"What is this about?","mode":"global"}`,
		`{"corpus":"demo","query":"Ada Lovelace","mode":"local","top_k":2,"stream":true}`,
		`{"corpus":"demo","query":"x","weights":{"dense":0,"lexical":1,"graph":0},"graph_ranking":"path","level":0}`,
		`{"corpus":"demo","query":"MATCH (n) DETACH DELETE n //"}`,
		`{"corpus":"demo","query":42}`, `{"corpus":"demo","query":"x","top_k":1.5}`, `["demo"]`, ``, `{"corpus":`,
		`{"corpus":"nope","query":"x"}`, `{"corpus":"Bad Corpus!","query":"x"}`, "{\"corpus\":\"demo\",\"query\":\"\xff\"}",
	} {
		f.Add(uint8(0), []byte(s))
		f.Add(uint8(1), []byte(s))
	}
	ft := newFuzzTarget(f)
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		path := []string{"/v1/query", "/v1/retrieve"}[route%2]
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		ft.serve(t, req)
	})
}

// FuzzPathParams sends arbitrary corpus names, entity names and depths to the GET
// routes.
func FuzzPathParams(f *testing.F) {
	f.Add("demo", "Ada Lovelace", "1")
	f.Add("demo", "charles BABBAGE", "")
	f.Add("demo", "Grace Hopper", "2")
	f.Add("nope", "x", "4")
	f.Add("NOPE!", "", "two")
	f.Add("demo", "../../etc/passwd", "-1")
	f.Add("demo", "a/b%2Fc", "99999999999999999999")
	ft := newFuzzTarget(f)
	f.Fuzz(func(t *testing.T, corpus, name, depth string) {
		for _, target := range []string{
			"/v1/corpora/" + url.PathEscape(corpus) + "/entities/" + url.PathEscape(name) + "?depth=" + url.QueryEscape(depth),
			"/v1/corpora/" + url.PathEscape(corpus) + "/stats",
		} {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api"+target, nil)
			if err != nil {
				return // not a URL a client could send
			}
			ft.serve(t, req)
		}
	})
}
