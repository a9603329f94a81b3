package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
	"github.com/graphrag/graphrag/pkg/service"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/services/query/ask"
	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/query/explore"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// goTerms matches what an error body must never show a client: Go type and field names
// (query.Request, Request.top_k, "Go struct field", "of type int"), encoding/json's
// prefix, and the stores' internal collection names (demo_chunks, demo_communities).
var goTerms = regexp.MustCompile(`\bGo\b|struct|\bjson:|engine\.|Request\.|of type|\w+_(chunks|entities|communities)\b|vectorstore|graphstore`)

func checkAPITerms(t *testing.T, body []byte) {
	t.Helper()
	if m := goTerms.Find(body); m != nil {
		t.Errorf("error body %s shows %q, an internal name", body, m)
	}
}

// serveEngine serves an engine built over deps behind cfg (deps.Graph is a full store,
// which the exploration routes read too).
func serveEngine(t *testing.T, cfg Config, deps engine.Deps, client *llm.Client) *httptest.Server {
	t.Helper()
	deps.Logger = querytest.Logger()
	e, err := ask.New(engine.Config{}, ask.Config{}, deps, client)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(recordStatuses(mustNew(t, e, explore.New(deps.Graph.(explore.GraphReader), deps.Vectors), cfg)))
	t.Cleanup(srv.Close)
	return srv
}

// Errors say what the client sent wrong in the API's own terms: JSON field names and
// kinds, not Go types (issue 17, item 5).
func TestHTTPErrorsInAPITerms(t *testing.T) {
	srv := newTestAPI(t, DefaultConfig())
	tests := []struct{ name, body, want string }{
		{"string expected", `{"corpus":"demo","query":42}`, "body: query must be a string, not a number"},
		{"integer expected", `{"corpus":"demo","query":"x","top_k":1.5}`, "body: top_k must be an integer, not the number 1.5"},
		{"nested field", `{"corpus":"demo","query":"x","weights":{"dense":"a"}}`, "body: weights.dense must be a number, not a string"},
		{"boolean expected", `{"corpus":"demo","query":"x","stream":"yes"}`, "body: stream must be true or false, not a string"},
		{"object expected", `["demo"]`, "body: must be a JSON object, not an array"},
		{"object expected, got string", `"demo"`, "body: must be a JSON object, not a string"},
		{"unknown field", `{"corpus":"demo","query":"x","qurey":"y"}`, `body: unknown field "qurey"`},
		{"empty", ` `, "body: is empty; send a JSON object"},
		{"cut short", `{"corpus":"demo",`, "body: ends before the JSON object does"},
		{"not JSON", `{corpus: demo}`, "body: is not valid JSON (at byte 2)"},
	}
	for _, tc := range tests {
		for _, path := range []string{"/v1/query", "/v1/retrieve"} {
			t.Run(tc.name+" "+path, func(t *testing.T) {
				resp, body := call(t, srv, http.MethodPost, path, "", tc.body)
				if resp.StatusCode != http.StatusBadRequest {
					t.Fatalf("status %d, body %s: want 400", resp.StatusCode, body)
				}
				if msg := apiErrorOf(t, resp, body); msg != tc.want {
					t.Errorf("error %q, want %q", msg, tc.want)
				}
				checkAPITerms(t, body)
			})
		}
	}
}

// failingVectors is a vector store whose searches fail with the kind of error a backend
// gives: internal names and details no client should see.
type failingVectors struct{ engine.VectorReader }

func (failingVectors) Search(context.Context, string, []float32, int, vectorstore.Filter) ([]vectorstore.Hit, error) {
	return nil, fmt.Errorf("searching %q: %w", "demo_communities", errors.New("segment 7 unreadable"))
}

func (failingVectors) SearchText(context.Context, string, string, int, vectorstore.Filter) ([]vectorstore.Hit, error) {
	return nil, fmt.Errorf("searching %q: %w", "demo_chunks", errors.New("segment 7 unreadable"))
}

// A failure of the service is a 500 that names no internal detail; the details are in
// the log (issue 17, item 5).
func TestHTTPBackendFailureIsOpaque(t *testing.T) {
	st := querytest.Demo(t)
	srv := serveEngine(t, DefaultConfig(), engine.Deps{Graph: st.Graph, Vectors: failingVectors{st.Vectors}, Embedder: st.Embedder}, nil)
	for _, path := range []string{"/v1/query", "/v1/retrieve"} {
		resp, body := call(t, srv, http.MethodPost, path, "", `{"corpus":"demo","query":"Who designed the Analytical Engine?"}`)
		if resp.StatusCode != http.StatusInternalServerError {
			t.Fatalf("%s: status %d, body %s: want 500", path, resp.StatusCode, body)
		}
		if msg := apiErrorOf(t, resp, body); !strings.HasPrefix(msg, "internal error") || strings.Contains(msg, "segment 7") {
			t.Errorf("%s: error %q, want an internal error without the backend's text", path, msg)
		}
		checkAPITerms(t, body)
	}
	// A stream has already answered 200: the failure is an error event, as opaque.
	resp, body := call(t, srv, http.MethodPost, "/v1/query", "", `{"corpus":"demo","query":"Who designed it?","stream":true}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "event: error") {
		t.Fatalf("stream: status %d, body %s: want an error event", resp.StatusCode, body)
	}
	checkAPITerms(t, body)
	// So do the chat routes, streamed or not, in OpenAI's error shape.
	for _, stream := range []bool{false, true} {
		resp, body := call(t, srv, http.MethodPost, "/v1/chat/completions", "",
			fmt.Sprintf(`{"model":"demo","stream":%v,"messages":[{"role":"user","content":"Who designed the Analytical Engine?"}]}`, stream))
		if want := map[bool]int{false: 500, true: 200}[stream]; resp.StatusCode != want || !strings.Contains(string(body), `"message":"internal error`) ||
			strings.Contains(string(body), "segment 7") || strings.Contains(string(body), "demo_chunks") {
			t.Errorf("chat, stream %v: status %d, body %s: want %d and an internal error without the backend's text", stream, resp.StatusCode, body, want)
		}
	}
}

// A failing model endpoint is the upstream's failure: 502, or 503 when it is unavailable
// or limiting, without the upstream's text (issue 17).
func TestHTTPModelFailure(t *testing.T) {
	st := querytest.Demo(t)
	for _, tc := range []struct {
		name   string
		fault  llmtest.Fault
		status int
	}{
		{"server error", llmtest.Status(http.StatusInternalServerError, `{"error":{"message":"GPU 3 melted at /srv/model"}}`), http.StatusBadGateway},
		{"rate limited", llmtest.RateLimited("600"), http.StatusServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := llmtest.NewServer()
			t.Cleanup(model.Close)
			for range 4 {
				model.Inject(tc.fault)
			}
			client, err := llm.New(llm.Config{BaseURL: model.URL(), ChatModel: "m", MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = client.Close() })
			srv := serveEngine(t, DefaultConfig(), engine.Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder}, client)
			resp, body := call(t, srv, http.MethodPost, "/v1/query", "", `{"corpus":"demo","query":"Who designed the Analytical Engine?","mode":"local"}`)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, body %s: want %d", resp.StatusCode, body, tc.status)
			}
			if msg := apiErrorOf(t, resp, body); strings.Contains(msg, "GPU") || !strings.Contains(msg, "language model") {
				t.Errorf("error %q: want the model endpoint named, without its text", msg)
			}
			checkAPITerms(t, body)
		})
	}
}

// A question of stop words only is answered, not failed with 500 (issue 12, item 1).
func TestHTTPStopWordQuestion(t *testing.T) {
	st := querytest.DemoWithReports(t)
	srv := serveEngine(t, DefaultConfig(), engine.Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder}, nil)
	for _, mode := range []string{"auto", "local", "global"} {
		resp, body := call(t, srv, http.MethodPost, "/v1/query", "", `{"corpus":"demo","query":"What is this about?","mode":"`+mode+`"}`)
		var r ask.Response
		decodeOK(t, resp, body, &r)
		if r.Answer == "" {
			t.Errorf("%s: empty answer", mode)
		}
	}
	resp, body := call(t, srv, http.MethodPost, "/v1/retrieve", "", `{"corpus":"demo","query":"What is this about?"}`)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("retrieve: status %d, body %s", resp.StatusCode, body)
	}
}

// Behind the platform's HTTP server, a body that does not arrive in time is a 408 in the
// API's error shape, and the connection is closed (issue 17, item 4).
func TestHTTPSlowBodyIs408(t *testing.T) {
	st := querytest.Demo(t)
	e, err := ask.New(engine.Config{}, ask.Config{}, engine.Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, Logger: querytest.Logger()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := service.HTTPServerWithLimits("127.0.0.1:0", recordStatuses(mustNew(t, e, explore.New(st.Graph, st.Vectors), DefaultConfig())),
		service.HTTPLimits{BodyTimeout: 200 * time.Millisecond})
	if err := hs.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hs.Stop(context.Background()) })
	c, err := net.Dial("tcp", hs.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second)) // a safety net; the server cuts first
	if _, err := io.WriteString(c, "POST /v1/query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{\"corpus\":"); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("the connection was not closed: %v (read %q)", err, got)
	}
	if !strings.HasPrefix(string(got), "HTTP/1.1 408") || !strings.Contains(string(got), `{"error":"the request body did not arrive in time"}`) {
		t.Errorf("answer %q, want a JSON 408", got)
	}
}

// Every guarded route answers 401 without a token and 429 past the client's rate, in the
// JSON error shape (and openapi.json documents both: see TestMain).
func TestHTTPGuardOnEveryRoute(t *testing.T) {
	routes := []struct{ method, path, body string }{
		{http.MethodPost, "/v1/query", `{"corpus":"demo","query":"Who designed the Analytical Engine?"}`},
		{http.MethodPost, "/v1/retrieve", `{"corpus":"demo","query":"Analytical Engine"}`},
		{http.MethodGet, entityPath("demo", "Ada Lovelace"), ""},
		{http.MethodGet, "/v1/corpora/demo/stats", ""},
	}
	cfg := DefaultConfig()
	for i := range routes {
		cfg.Tokens = append(cfg.Tokens, fmt.Sprintf("token-%d", i))
	}
	open := cfg
	open.RatePerSecond = 0 // failed attempts spend the address's bucket: no limit here
	unlimited := newTestAPI(t, open)
	cfg.RatePerSecond, cfg.Burst = 0.001, 1
	limited := newTestAPI(t, cfg)
	for i, r := range routes {
		if resp, body := call(t, unlimited, r.method, r.path, "", r.body); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s %s without a token: status %d, want 401", r.method, r.path, resp.StatusCode)
		} else {
			apiErrorOf(t, resp, body)
		}
		token := cfg.Tokens[i] // a bucket of its own per route
		if resp, body := call(t, limited, r.method, r.path, token, r.body); resp.StatusCode != http.StatusOK {
			t.Errorf("%s %s: status %d, body %s: want 200", r.method, r.path, resp.StatusCode, body)
		}
		resp, body := call(t, limited, r.method, r.path, token, r.body)
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s %s past the rate: status %d, Retry-After %q: want 429 with Retry-After", r.method, r.path, resp.StatusCode, resp.Header.Get("Retry-After"))
		} else {
			apiErrorOf(t, resp, body)
		}
	}
	// The document needs no token but is rate limited by address like the rest.
	public := DefaultConfig()
	public.RatePerSecond, public.Burst = 0.001, 1
	srv := newTestAPI(t, public)
	if resp, _ := call(t, srv, http.MethodGet, "/openapi.json", "", ""); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /openapi.json: status %d, want 200", resp.StatusCode)
	}
	if resp, body := call(t, srv, http.MethodGet, "/openapi.json", "", ""); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("GET /openapi.json past the rate: status %d, want 429", resp.StatusCode)
	} else {
		apiErrorOf(t, resp, body)
	}
}
