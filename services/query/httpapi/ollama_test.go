package httpapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/graphrag/graphrag/services/query/access"
	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// ollamaRoutes are the Ollama-compatible routes with a request each answers with 200
// (TestHTTPOpenAPI checks them against openapi.json).
var ollamaRoutes = []struct{ method, pattern, path, body string }{
	{http.MethodGet, "/api/version", "/api/version", ""},
	{http.MethodGet, "/api/tags", "/api/tags", ""},
	{http.MethodPost, "/api/show", "/api/show", `{"model":"demo"}`},
	{http.MethodPost, "/api/chat", "/api/chat", `{"model":"demo","messages":[{"role":"user","content":"Who designed the Analytical Engine?"}],"stream":false}`},
	{http.MethodPost, "/api/generate", "/api/generate", `{"model":"demo","prompt":"Who designed the Analytical Engine?","stream":false}`},
}

// ollamaObject is one object of an Ollama answer, every field the routes send.
type ollamaObject struct {
	Model     string `json:"model"`
	CreatedAt string `json:"created_at"`
	Message   *struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"message"`
	Response           *string           `json:"response"`
	Done               bool              `json:"done"`
	DoneReason         string            `json:"done_reason"`
	TotalDuration      int64             `json:"total_duration"`
	PromptEvalCount    int               `json:"prompt_eval_count"`
	PromptEvalDuration int64             `json:"prompt_eval_duration"`
	EvalCount          int               `json:"eval_count"`
	EvalDuration       int64             `json:"eval_duration"`
	Citations          []json.RawMessage `json:"citations"`
	Error              string            `json:"error"`
}

// text is the part of the answer an object carries: its message's or its response.
func (o ollamaObject) text() string {
	if o.Message != nil {
		return o.Message.Content
	}
	if o.Response != nil {
		return *o.Response
	}
	return ""
}

// ollamaObjects reads a body of newline-delimited JSON objects, refusing a field the
// routes do not send.
func ollamaObjects(t *testing.T, body []byte) []ollamaObject {
	t.Helper()
	var out []ollamaObject
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		var o ollamaObject
		if err := dec.Decode(&o); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, o)
	}
	return out
}

// TestOllamaAnswers: /api/chat and /api/generate answer as POST /v1/chat/completions
// does (the same text with its sources list), in one object with "stream": false and
// streamed by default as newline-delimited objects whose parts make up the same text,
// the last one done with the reason, durations and token counts.
func TestOllamaAnswers(t *testing.T) {
	srv := newTestAPI(t, DefaultConfig(), newFakes().options()...)
	const q = "Who designed the Analytical Engine?"
	resp, body := call(t, srv, http.MethodPost, "/v1/chat/completions", "",
		fmt.Sprintf(`{"model":"demo","messages":[{"role":"user","content":%q}]}`, q))
	var cc chatCompletion
	decodeOK(t, resp, body, &cc)
	want := cc.Choices[0].Message.Content
	if !strings.Contains(want, "Babbage") || !strings.Contains(want, "\n\nSources:\n[1] ") {
		t.Fatalf("the OpenAI-compatible answer %q lacks Babbage or its sources", want)
	}
	for _, tc := range []struct{ route, body string }{
		{"/api/chat", fmt.Sprintf(`{"model":"demo","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":%q}],"options":{"temperature":0}`, q)},
		{"/api/chat", fmt.Sprintf(`{"model":"demo:latest","messages":[{"role":"user","content":%q}]`, q)},
		{"/api/generate", fmt.Sprintf(`{"model":"demo","prompt":%q,"system":"Be brief.","keep_alive":"5m"`, q)},
	} {
		t.Run(tc.route, func(t *testing.T) {
			resp, body := call(t, srv, http.MethodPost, tc.route, "", tc.body+`,"stream":false}`)
			if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("status %d (%s), body %s: want 200 JSON", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
			one := ollamaObjects(t, body)
			if len(one) != 1 {
				t.Fatalf("%d objects without streaming, want 1: %s", len(one), body)
			}
			o := one[0]
			checkLast(t, o, tc.route)
			if o.text() != want {
				t.Errorf("answer %q, want the OpenAI-compatible route's %q", o.text(), want)
			}

			resp, body = call(t, srv, http.MethodPost, tc.route, "", tc.body+`}`)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" {
				t.Fatalf("streamed: status %d (%s), body %s: want 200 NDJSON", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
			objs := ollamaObjects(t, body)
			if len(objs) < 3 {
				t.Fatalf("%d objects streamed, want the parts, the sources and the last: %s", len(objs), body)
			}
			var streamed strings.Builder
			for _, o := range objs[:len(objs)-1] {
				if o.Done || o.DoneReason != "" || o.Model == "" || (tc.route == "/api/chat") != (o.Message != nil) {
					t.Errorf("part %+v: want not done, in the route's field", o)
				}
				streamed.WriteString(o.text())
			}
			end := objs[len(objs)-1]
			checkLast(t, end, tc.route)
			if end.text() != "" || streamed.String() != want {
				t.Errorf("streamed %q then %q, want %q then nothing", streamed.String(), end.text(), want)
			}
			if end.PromptEvalCount != o.PromptEvalCount || end.EvalCount != o.EvalCount {
				t.Errorf("streamed counts %d, %d; want the same as without streaming: %d, %d", end.PromptEvalCount, end.EvalCount, o.PromptEvalCount, o.EvalCount)
			}
		})
	}
}

// checkLast checks the last object of an answer.
func checkLast(t *testing.T, o ollamaObject, route string) {
	t.Helper()
	if !o.Done || o.DoneReason != "stop" || !strings.HasPrefix(o.Model, "demo") || len(o.Citations) == 0 {
		t.Errorf("last object %+v: want done, stop, the model and the citations", o)
	}
	if _, err := time.Parse(time.RFC3339Nano, o.CreatedAt); err != nil {
		t.Errorf("created_at %q: %v", o.CreatedAt, err)
	}
	if (route == "/api/chat") != (o.Message != nil && o.Message.Role == "assistant") || (route == "/api/generate") != (o.Response != nil) {
		t.Errorf("last object %+v: want a message on /api/chat, a response on /api/generate", o)
	}
	if o.PromptEvalCount < 5 || o.EvalCount < 10 || o.TotalDuration <= 0 || o.PromptEvalDuration+o.EvalDuration > o.TotalDuration {
		t.Errorf("counts and durations %+v: want the tokens of the question and of the answer, durations within the total", o)
	}
}

// TestOllamaErrors: bad input is 400 and an unknown model 404, before any stream
// starts, as {"error": "..."}; a request without a question only checks the model.
func TestOllamaErrors(t *testing.T) {
	srv := newTestAPI(t, DefaultConfig(), newFakes().options()...)
	user := `[{"role":"user","content":"Who designed the Analytical Engine?"}]`
	for _, tc := range []struct {
		name, route, body string
		want              int
		msg               string
	}{
		{"unknown corpus", "/api/chat", `{"model":"nope","messages":` + user + `}`, 404, `model "nope" not found`},
		{"unknown corpus with a tag", "/api/chat", `{"model":"nope:latest","messages":` + user + `,"stream":false}`, 404, `model "nope:latest" not found`},
		{"a corpus without passages", "/api/generate", `{"model":"other","prompt":"Who?"}`, 404, `model "other" not found`},
		{"an Ollama model", "/api/generate", `{"model":"llama3.2","prompt":"Who?"}`, 404, `model "llama3.2" not found`},
		{"unknown mode", "/api/chat", `{"model":"demo:deep","messages":` + user + `}`, 404, `model "demo:deep" not found`},
		{"unknown model to load", "/api/chat", `{"model":"nope","messages":[]}`, 404, `model "nope" not found`},
		{"no model", "/api/chat", `{"messages":` + user + `}`, 400, "model: missing"},
		{"no model to generate", "/api/generate", `{"prompt":"Who?"}`, 400, "model: missing"},
		{"no user text", "/api/chat", `{"model":"demo","messages":[{"role":"system","content":"Be brief."}]}`, 400, "no user message"},
		{"not JSON", "/api/chat", `{"model":`, 400, "body:"},
		{"content not a string", "/api/chat", `{"model":"demo","messages":[{"role":"user","content":[1]}]}`, 400, "body:"},
		{"show without a model", "/api/show", `{}`, 400, "model: missing"},
		{"show an unknown model", "/api/show", `{"model":"nope"}`, 404, `model "nope" not found`},
		{"show an Ollama model", "/api/show", `{"name":"llama3.2:latest"}`, 404, `model "llama3.2:latest" not found`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := call(t, srv, http.MethodPost, tc.route, "", tc.body)
			var e struct {
				Error string `json:"error"`
			}
			if err := json.Unmarshal(body, &e); err != nil || resp.StatusCode != tc.want || !strings.Contains(e.Error, tc.msg) {
				t.Errorf("status %d, body %s: want %d with an error saying %q", resp.StatusCode, body, tc.want, tc.msg)
			}
			if tc.want == 404 && !strings.Contains(e.Error, "GET /api/tags lists them") {
				t.Errorf("error %q: want it to name the route listing the models", e.Error)
			}
		})
	}

	// Without a question the model is checked and "loaded", as Ollama does.
	for _, tc := range []struct{ route, body string }{
		{"/api/chat", `{"model":"demo","messages":[]}`},
		{"/api/generate", `{"model":"demo:latest"}`},
	} {
		resp, body := call(t, srv, http.MethodPost, tc.route, "", tc.body)
		objs := ollamaObjects(t, body)
		if resp.StatusCode != 200 || len(objs) != 1 || !objs[0].Done || objs[0].DoneReason != "load" || objs[0].text() != "" {
			t.Errorf("%s %s: status %d, body %s: want one object done with reason load", tc.route, tc.body, resp.StatusCode, body)
		}
	}
}

// TestOllamaModels: /api/tags lists the corpora the token may read, in Ollama's shape;
// /api/show describes one; /api/version needs no token.
func TestOllamaModels(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Scoped = []access.Token{
		{Secret: "reader", Grant: access.Grant{Scope: access.Read, Corpora: []string{"demo"}}},
		{Secret: "all", Grant: access.Grant{Scope: access.Read, Corpora: []string{"*"}}},
	}
	f := newFakes()
	srv := newTestAPI(t, cfg, f.options()...)

	type tags struct {
		Models []ollamaModel `json:"models"`
	}
	var all tags
	resp, body := call(t, srv, http.MethodGet, "/api/tags", "all", "")
	decodeOK(t, resp, body, &all)
	digest := regexp.MustCompile(`^[0-9a-f]{64}$`)
	if len(all.Models) != 2 || all.Models[0].Name != "demo:latest" || all.Models[1].Name != "other:latest" {
		t.Fatalf("models %+v: want demo and other with Ollama's default tag", all.Models)
	}
	for _, m := range all.Models {
		if m.Model != m.Name || !m.ModifiedAt.Equal(fakeCreated) || !digest.MatchString(m.Digest) || m.Details.Family != "graphrag" || len(m.Details.Families) != 1 {
			t.Errorf("model %+v: want Ollama's fields, modified when the corpus began", m)
		}
	}
	if all.Models[0].Digest == all.Models[1].Digest {
		t.Error("two corpora have the same digest")
	}
	var mine tags
	resp, body = call(t, srv, http.MethodGet, "/api/tags", "reader", "")
	decodeOK(t, resp, body, &mine)
	if len(mine.Models) != 1 || !reflect.DeepEqual(mine.Models[0], all.Models[0]) {
		t.Errorf("models for a token reading demo only: %+v", mine.Models)
	}
	// A corpus's digest changes with its content.
	f.mu.Lock()
	f.corpora[0].Chunks++
	f.mu.Unlock()
	var after tags
	resp, body = call(t, srv, http.MethodGet, "/api/tags", "all", "")
	decodeOK(t, resp, body, &after)
	if after.Models[0].Digest == all.Models[0].Digest || after.Models[1].Digest != all.Models[1].Digest {
		t.Errorf("digests %s, %s after demo changed, were %s, %s: want demo's only to change",
			after.Models[0].Digest, after.Models[1].Digest, all.Models[0].Digest, all.Models[1].Digest)
	}

	var show struct {
		ModifiedAt   time.Time      `json:"modified_at"`
		Details      ollamaDetail   `json:"details"`
		Capabilities []string       `json:"capabilities"`
		Modelfile    string         `json:"modelfile"`
		Parameters   string         `json:"parameters"`
		Template     string         `json:"template"`
		ModelInfo    map[string]any `json:"model_info"`
	}
	resp, body = call(t, srv, http.MethodPost, "/api/show", "reader", `{"model":"demo:latest"}`)
	decodeOK(t, resp, body, &show)
	if show.ModelInfo["graphrag.corpus"] != "demo" || show.ModelInfo["graphrag.documents"] != 2.0 || !reflect.DeepEqual(show.Details, all.Models[0].Details) || len(show.Capabilities) != 1 {
		t.Errorf("show %+v", show)
	}

	chat := `{"model":"%s","messages":[{"role":"user","content":"Who designed the Analytical Engine?"}],"stream":false}`
	for _, tc := range []struct {
		token, method, path, body string
		want                      int
	}{
		{"", http.MethodGet, "/api/version", "", 200},
		{"", http.MethodGet, "/api/tags", "", 401},
		{"", http.MethodPost, "/api/chat", fmt.Sprintf(chat, "demo"), 401},
		{"reader", http.MethodPost, "/api/chat", fmt.Sprintf(chat, "demo"), 200},
		{"reader", http.MethodPost, "/api/chat", fmt.Sprintf(chat, "other"), 403},
		{"reader", http.MethodPost, "/api/generate", `{"model":"other:latest","prompt":"Who?"}`, 403},
		{"reader", http.MethodPost, "/api/show", `{"model":"other"}`, 404},
	} {
		resp, body := call(t, srv, tc.method, tc.path, tc.token, tc.body)
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(body, &e)
		if resp.StatusCode != tc.want || (tc.want != 200) != (e.Error != "") {
			t.Errorf("%s %s with token %q: status %d, body %s: want %d", tc.method, tc.path, tc.token, resp.StatusCode, body, tc.want)
		}
	}
	resp, body = call(t, srv, http.MethodGet, "/api/version", "", "")
	var v map[string]string
	decodeOK(t, resp, body, &v)
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(v["version"]) {
		t.Errorf("version %v", v)
	}
}

// TestOllamaBackendFailure: a failure of the service is a 500 {"error": ...} without the
// backend's text; once a stream has begun, a last object {"error": ...}, which Ollama's
// clients raise.
func TestOllamaBackendFailure(t *testing.T) {
	st := querytest.Demo(t)
	srv := serveEngine(t, DefaultConfig(), engine.Deps{Graph: st.Graph, Vectors: failingVectors{st.Vectors}, Embedder: st.Embedder}, nil)
	for _, stream := range []bool{false, true} {
		resp, body := call(t, srv, http.MethodPost, "/api/chat", "",
			fmt.Sprintf(`{"model":"demo","stream":%v,"messages":[{"role":"user","content":"Who designed the Analytical Engine?"}]}`, stream))
		objs := ollamaObjects(t, body)
		if want := map[bool]int{false: 500, true: 200}[stream]; resp.StatusCode != want || len(objs) == 0 ||
			!strings.HasPrefix(objs[len(objs)-1].Error, "internal error") || objs[len(objs)-1].Done {
			t.Errorf("stream %v: status %d, body %s: want %d ending with an internal error", stream, resp.StatusCode, body, want)
		}
		checkAPITerms(t, body)
	}
}
