package httpapi

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/graphrag/graphrag/pkg/catalog"
	"github.com/graphrag/graphrag/services/query/access"
	"github.com/graphrag/graphrag/services/query/ask"
	"github.com/graphrag/graphrag/services/query/engine"
)

// The Ollama-compatible routes speak Ollama's REST API (/api/...), so that the clients
// made for a local Ollama server (Open WebUI, desktop chat apps, the ollama Python and
// JavaScript packages) use a corpus as a model, as the OpenAI-compatible routes do
// (chat.go): the same model names (a corpus, with ":local" or ":global"; ":latest",
// Ollama's default tag, is the automatic mode), the same question from the user
// messages, the same answer with its sources list, the same guard and scopes. Only the
// wire format differs: newline-delimited JSON objects, streamed unless "stream": false,
// and errors as {"error": "..."}.

// ollamaVersion is the Ollama release whose API these routes follow (GET /api/version):
// clients read it to know which routes and fields to expect.
const ollamaVersion = "0.12.0"

// ollamaFamily names a corpus's model family and format in /api/tags and /api/show.
const ollamaFamily = "graphrag"

func (a *API) addOllamaRoutes() {
	a.mux.HandleFunc("GET /api/version", a.public(a.ollamaVersion))
	a.mux.HandleFunc("GET /api/tags", a.guard(a.ollamaTags))
	a.mux.HandleFunc("POST /api/show", a.guard(a.ollamaShow))
	a.mux.HandleFunc("POST /api/chat", a.guard(a.ollamaChat))
	a.mux.HandleFunc("POST /api/generate", a.guard(a.ollamaGenerate))
}

// ollamaModelName is the model name the OpenAI-compatible routes read: Ollama's default
// tag ":latest" is the automatic mode, as a name without a tag is.
func ollamaModelName(name string) string { return strings.TrimSuffix(name, ":latest") }

// ollamaNamed makes an unknown model error name the model as the request named it.
func ollamaNamed(err error, model string) error {
	if _, ok := errors.AsType[*modelNotFound](err); ok {
		return &modelNotFound{model}
	}
	return err
}

// ollamaFail answers an error in Ollama's shape, {"error": "..."}, with the status and
// message fail would use; an unknown model is 404 naming the route that lists models.
func (a *API) ollamaFail(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := failure(r.Context(), err)
	if status >= http.StatusInternalServerError {
		a.log.ErrorContext(r.Context(), "request failed", "path", r.URL.Path, "status", status, "err", err)
	}
	if m, ok := errors.AsType[*modelNotFound](err); ok {
		msg = fmt.Sprintf("model %q not found: a model is a corpus name, optionally with :local or :global (GET /api/tags lists them)", m.model)
	}
	writeJSON(w, status, apiError{Error: msg})
}

// ollamaDecode reads a request body. Ollama's other fields (options, format, keep_alive,
// tools, ...) are accepted and ignored: the corpus's configuration decides how answers
// are generated.
func ollamaDecode(r *http.Request, v any) error {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		if isReadError(err) {
			return err
		}
		return engine.BadRequestf("body: %v", err)
	}
	return nil
}

func (a *API) ollamaVersion(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"version": ollamaVersion})
}

// ollamaModel is a model of GET /api/tags.
type ollamaModel struct {
	Name       string       `json:"name"`
	Model      string       `json:"model"`
	ModifiedAt time.Time    `json:"modified_at"`
	Size       int64        `json:"size"`
	Digest     string       `json:"digest"`
	Details    ollamaDetail `json:"details"`
}

type ollamaDetail struct {
	ParentModel       string   `json:"parent_model"`
	Format            string   `json:"format"`
	Family            string   `json:"family"`
	Families          []string `json:"families"`
	ParameterSize     string   `json:"parameter_size"`
	QuantizationLevel string   `json:"quantization_level"`
}

var ollamaDetails = ollamaDetail{Format: ollamaFamily, Family: ollamaFamily, Families: []string{ollamaFamily}}

// ollamaModelOf describes a corpus as Ollama describes a model: named with the
// ":latest" tag; modified when the corpus began (the catalog keeps no later time);
// size 0 (a corpus has no weights file); a digest of what the catalog counts in it, so
// that it changes when the corpus does, as a model's digest changes with its content.
func ollamaModelOf(c catalog.Corpus, created time.Time) ollamaModel {
	b, _ := json.Marshal(struct {
		C       catalog.Corpus
		Created time.Time
	}{c, created.UTC()})
	sum := sha256.Sum256(b)
	name := c.Name + ":latest"
	return ollamaModel{Name: name, Model: name, ModifiedAt: created.UTC(), Digest: hex.EncodeToString(sum[:]), Details: ollamaDetails}
}

// ollamaTags lists the corpora the token may read, as GET /v1/models does.
func (a *API) ollamaTags(w http.ResponseWriter, r *http.Request) {
	if a.catalog == nil {
		a.ollamaFail(w, r, &unavailable{"listing corpora"})
		return
	}
	ctx := r.Context()
	cs, err := a.catalog.Corpora(ctx, func(n string) bool { return access.Visible(ctx, n) })
	if err != nil {
		a.ollamaFail(w, r, err)
		return
	}
	out := struct {
		Models []ollamaModel `json:"models"`
	}{Models: []ollamaModel{}}
	for _, c := range cs {
		created, err := a.catalog.Created(r.Context(), c.Name)
		if err != nil {
			a.ollamaFail(w, r, err)
			return
		}
		out.Models = append(out.Models, ollamaModelOf(c, created))
	}
	writeJSON(w, http.StatusOK, out)
}

// ollamaShow describes one model: a corpus the token may read. "name" is the field
// older clients send.
func (a *API) ollamaShow(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Model string `json:"model"`
		Name  string `json:"name"`
	}
	if err := ollamaDecode(r, &in); err != nil {
		a.ollamaFail(w, r, err)
		return
	}
	name := cmp.Or(in.Model, in.Name)
	if name == "" {
		a.ollamaFail(w, r, engine.BadRequestf("model: missing (a corpus name; GET /api/tags lists them)"))
		return
	}
	corpus, _, err := parseModel(ollamaModelName(name))
	if err != nil {
		a.ollamaFail(w, r, ollamaNamed(err, name))
		return
	}
	if a.catalog == nil {
		a.ollamaFail(w, r, &unavailable{"reading corpora"})
		return
	}
	ctx := r.Context()
	cs, err := a.catalog.Corpora(ctx, func(n string) bool { return n == corpus && access.Visible(ctx, n) })
	if err != nil {
		a.ollamaFail(w, r, err)
		return
	}
	// A corpus the token may not read does not exist for it, as on GET /v1/models/{model}.
	if len(cs) != 1 {
		a.ollamaFail(w, r, &modelNotFound{name})
		return
	}
	created, err := a.catalog.Created(r.Context(), corpus)
	if err != nil {
		a.ollamaFail(w, r, err)
		return
	}
	m := ollamaModelOf(cs[0], created)
	c := cs[0]
	writeJSON(w, http.StatusOK, map[string]any{
		"modified_at":  m.ModifiedAt,
		"details":      m.Details,
		"capabilities": []string{"completion"},
		"modelfile":    "",
		"parameters":   "",
		"template":     "",
		"model_info": map[string]any{
			"general.architecture":   ollamaFamily,
			"graphrag.corpus":        c.Name,
			"graphrag.documents":     c.Documents,
			"graphrag.chunks":        c.Chunks,
			"graphrag.entities":      c.Entities,
			"graphrag.relationships": c.Relationships,
			"graphrag.communities":   c.Communities,
			"graphrag.state":         c.State,
		},
	})
}

// ollamaMessage is a message of POST /api/chat; images and tool calls are ignored.
type ollamaMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// ollamaReply is one object of an answer: a part of it, or the last one (done) with
// why it ended and what it took. Message is set on /api/chat, Response on /api/generate.
type ollamaReply struct {
	Model     string         `json:"model"`
	CreatedAt time.Time      `json:"created_at"`
	Message   *ollamaMessage `json:"message,omitempty"`
	Response  *string        `json:"response,omitempty"`
	Done      bool           `json:"done"`
	// DoneReason is "stop" after an answer, "load" when no question was asked (Ollama
	// loads the model then; a corpus is always ready).
	DoneReason string `json:"done_reason,omitempty"`
	// The durations are nanoseconds: the whole request; the load (none); the prompt's
	// evaluation (retrieval, until the answer's first part); the answer's generation.
	// The counts are cl100k_base tokens, as chatUsage counts them.
	TotalDuration      int64 `json:"total_duration,omitempty"`
	LoadDuration       int64 `json:"load_duration,omitempty"`
	PromptEvalCount    int   `json:"prompt_eval_count,omitempty"`
	PromptEvalDuration int64 `json:"prompt_eval_duration,omitempty"`
	EvalCount          int   `json:"eval_count,omitempty"`
	EvalDuration       int64 `json:"eval_duration,omitempty"`
	// Citations are the sources the answer cites (not in Ollama's format; clients
	// ignore it), on the last object, as on the OpenAI-compatible route.
	Citations []ask.Citation `json:"citations,omitempty"`
}

func (a *API) ollamaChat(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Model    string          `json:"model"`
		Messages []ollamaMessage `json:"messages"`
		Stream   *bool           `json:"stream"`
	}
	if err := ollamaDecode(r, &in); err != nil {
		a.ollamaFail(w, r, err)
		return
	}
	msgs := make([]chatMessage, len(in.Messages))
	for i, m := range in.Messages {
		b, _ := json.Marshal(m.Content)
		msgs[i] = chatMessage{Role: m.Role, Content: b}
	}
	a.ollamaAnswer(w, r, in.Model, msgs, in.Stream == nil || *in.Stream, func(rp *ollamaReply, text string) {
		rp.Message = &ollamaMessage{Role: "assistant", Content: text}
	})
}

// ollamaGenerate answers a prompt; a system prompt, like a system message, is ignored.
func (a *API) ollamaGenerate(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Model  string `json:"model"`
		Prompt string `json:"prompt"`
		Stream *bool  `json:"stream"`
	}
	if err := ollamaDecode(r, &in); err != nil {
		a.ollamaFail(w, r, err)
		return
	}
	var msgs []chatMessage
	if in.Prompt != "" {
		b, _ := json.Marshal(in.Prompt)
		msgs = []chatMessage{{Role: "user", Content: b}}
	}
	a.ollamaAnswer(w, r, in.Model, msgs, in.Stream == nil || *in.Stream, func(rp *ollamaReply, text string) {
		rp.Response = &text
	})
}

// ollamaAnswer answers the user messages as POST /v1/chat/completions does (chatQuery,
// modelReady, the engine's Query, sources), in Ollama's format; set puts a text into a
// reply (a message or a response). Without messages the model is only checked, and the
// one object says so (done_reason "load"), as Ollama answers a request that loads a model.
func (a *API) ollamaAnswer(w http.ResponseWriter, r *http.Request, model string, msgs []chatMessage, stream bool, set func(*ollamaReply, string)) {
	start := time.Now()
	if model == "" {
		a.ollamaFail(w, r, engine.BadRequestf("model: missing (a corpus name; GET /api/tags lists them)"))
		return
	}
	name := ollamaModelName(model)
	reply := func(text string) ollamaReply {
		rp := ollamaReply{Model: model, CreatedAt: time.Now().UTC()}
		set(&rp, text)
		return rp
	}
	if len(msgs) == 0 {
		corpus, _, err := parseModel(name)
		if err == nil {
			err = a.modelReady(r, corpus, model)
		}
		if err != nil {
			a.ollamaFail(w, r, ollamaNamed(err, model))
			return
		}
		rp := reply("")
		rp.Done, rp.DoneReason = true, "load"
		writeJSON(w, http.StatusOK, rp)
		return
	}
	c := chatRequest{Model: name, Messages: msgs, Stream: stream}
	req, err := chatQuery(c)
	if err == nil {
		err = a.modelReady(r, req.Corpus, model)
	}
	if err != nil {
		a.ollamaFail(w, r, ollamaNamed(err, model))
		return
	}
	// last is the final object: the stop, the durations and counts, the citations.
	var first time.Time
	last := func(text string, resp *ask.Response) (ollamaReply, error) {
		u, err := usageOf(msgs, resp.Answer+sources(resp))
		if err != nil {
			return ollamaReply{}, err
		}
		end := time.Now()
		if first.IsZero() {
			first = end
		}
		rp := reply(text)
		rp.Done, rp.DoneReason, rp.Citations = true, "stop", resp.Citations
		rp.TotalDuration, rp.PromptEvalDuration, rp.EvalDuration = end.Sub(start).Nanoseconds(), first.Sub(start).Nanoseconds(), end.Sub(first).Nanoseconds()
		rp.PromptEvalCount, rp.EvalCount = u.PromptTokens, u.CompletionTokens
		return rp, nil
	}
	if !stream {
		resp, err := a.e.Query(r.Context(), req, func(string) error {
			if first.IsZero() {
				first = time.Now()
			}
			return nil
		})
		if err != nil {
			a.ollamaFail(w, r, err)
			return
		}
		rp, err := last(resp.Answer+sources(resp), resp)
		if err != nil {
			a.ollamaFail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, rp)
		return
	}
	a.ollamaStream(w, r, req, reply, last, &first)
}

// ollamaStream answers with newline-delimited JSON objects, as Ollama streams: one per
// part of the answer as it is generated, one with its sources list, and the last (done).
// A failure after the first object is an object {"error": "..."}, as Ollama sends.
func (a *API) ollamaStream(w http.ResponseWriter, r *http.Request, req ask.Request, reply func(string) ollamaReply,
	last func(string, *ask.Response) (ollamaReply, error), first *time.Time) {
	fl, ok := w.(http.Flusher)
	if !ok {
		a.ollamaFail(w, r, errors.New("streaming is not supported by this connection"))
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	var mu sync.Mutex
	send := func(v any) error {
		b, _ := json.Marshal(v)
		mu.Lock()
		defer mu.Unlock()
		if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
			return err
		}
		fl.Flush()
		return nil
	}
	ctx := r.Context()
	fail := func(err error) {
		status, msg := failure(ctx, err)
		if status >= http.StatusInternalServerError {
			a.log.ErrorContext(ctx, "request failed", "path", r.URL.Path, "status", status, "err", err)
		}
		_ = send(apiError{Error: msg})
	}
	resp, err := a.e.Query(r.Context(), req, func(d string) error {
		if first.IsZero() {
			*first = time.Now()
		}
		return send(reply(d))
	})
	if err != nil {
		fail(err)
		return
	}
	if src := sources(resp); src != "" {
		if err := send(reply(src)); err != nil {
			return
		}
	}
	rp, err := last("", resp)
	if err != nil {
		fail(err)
		return
	}
	_ = send(rp)
}
