package httpapi

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/graphrag/graphrag/pkg/chunking"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/services/query/access"
	"github.com/graphrag/graphrag/services/query/ask"
	"github.com/graphrag/graphrag/services/query/engine"
)

// The chat-compatible routes speak OpenAI's chat completions wire format, so that chat
// front-ends and SDKs use a corpus as a model: the model name is the corpus (with
// ":local" or ":global" to choose the mode), the last user message is the question
// (after the user messages before it: withHistory), and the answer ends with the list
// of the sources it cites.

func (a *API) addChatRoutes() {
	a.mux.HandleFunc("POST /v1/chat/completions", a.guard(a.chatCompletions))
	a.mux.HandleFunc("GET /v1/models", a.guard(a.models))
	a.mux.HandleFunc("GET /v1/models/{model}", a.guard(a.model))
}

type chatRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	Stream   bool          `json:"stream"`
	N        *int          `json:"n"`
	// StreamOptions.IncludeUsage asks for a last chunk with the usage, as OpenAI sends.
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	// Other OpenAI parameters (temperature, max_tokens, ...) are accepted and ignored:
	// the corpus's configuration decides how answers are generated.
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// text is a message's text: a string, or the text parts of an array of parts.
func (m chatMessage) text() (string, error) {
	var s string
	if err := json.Unmarshal(m.Content, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &parts); err != nil {
		return "", fmt.Errorf("content is neither a string nor an array of parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

type chatCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []chatChoice `json:"choices"`
	// Citations are the sources the answer cites (not in OpenAI's format; clients
	// ignore it), the same as the answer's sources list.
	Citations []ask.Citation `json:"citations,omitempty"`
	Usage     *chatUsage     `json:"usage,omitempty"`
}

// chatUsage counts tokens as OpenAI's usage does. The engine does not report the
// tokens of the model calls behind an answer (an extractive answer makes none), so
// these are cl100k_base counts (the chunker's tokenizer) of what crossed the wire:
// the text of the request's messages (prompt) and the answer with its sources list
// (completion).
type chatUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// usageOf counts the tokens of a chat request's messages and of its answer.
func usageOf(msgs []chatMessage, answer string) (*chatUsage, error) {
	var prompt strings.Builder
	for _, m := range msgs {
		if t, err := m.text(); err == nil {
			prompt.WriteString(t)
			prompt.WriteByte('\n')
		}
	}
	p, err := chunking.CountTokens(prompt.String())
	if err != nil {
		return nil, fmt.Errorf("counting the prompt's tokens: %w", err)
	}
	c, err := chunking.CountTokens(answer)
	if err != nil {
		return nil, fmt.Errorf("counting the answer's tokens: %w", err)
	}
	return &chatUsage{PromptTokens: p, CompletionTokens: c, TotalTokens: p + c}, nil
}

type chatChoice struct {
	Index        int       `json:"index"`
	Message      *chatOut  `json:"message,omitempty"`
	Delta        *chatOut  `json:"delta,omitempty"`
	FinishReason *string   `json:"finish_reason"`
	Logprobs     *struct{} `json:"logprobs"`
}

type chatOut struct {
	Role    string `json:"role,omitempty"`
	Content string `json:"content"`
}

// openAIError is the error shape OpenAI's clients read.
type openAIError struct {
	Error openAIErrorBody `json:"error"`
}

type openAIErrorBody struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// modelNotFound is a model name that names no corpus the service holds: a name that is
// not a corpus name (gpt-4o), an unknown mode, or a corpus without passages. It is
// engine.ErrUnknownCorpus (404), answered as OpenAI answers an unknown model.
type modelNotFound struct{ model string }

func (m *modelNotFound) Error() string {
	return fmt.Sprintf("the model %q does not exist: a model is a corpus name, optionally with :local or :global (GET /v1/models lists them)", m.model)
}

func (m *modelNotFound) Is(target error) bool { return target == engine.ErrUnknownCorpus }

// chatFail answers an error in OpenAI's shape with the status and message fail would
// use: a failure of the service is named by kind, never with the backend's text.
func (a *API) chatFail(w http.ResponseWriter, r *http.Request, err error) {
	status, body := a.chatError(r, err)
	setRetryAfter(w, status)
	writeJSON(w, status, openAIError{Error: body})
}

// chatError is the status and OpenAI error body of err, logged when it is the
// service's failure.
func (a *API) chatError(r *http.Request, err error) (int, openAIErrorBody) {
	status, msg := failure(r.Context(), err)
	if status >= http.StatusInternalServerError {
		a.log.ErrorContext(r.Context(), "request failed", "path", r.URL.Path, "status", status, "err", err)
	}
	body := openAIErrorBody{Message: msg, Type: "server_error"}
	switch {
	case errors.As(err, new(*modelNotFound)):
		body.Type, body.Param, body.Code = "invalid_request_error", new("model"), new("model_not_found")
	case status == http.StatusForbidden:
		body.Type = "permission_error"
	case status == http.StatusNotFound:
		body.Type = "not_found_error"
	case status < 500:
		body.Type = "invalid_request_error"
	}
	return status, body
}

// parseModel reads a model name: a corpus, with ":local" or ":global" to choose the mode.
// Any other name names no model.
func parseModel(model string) (corpus, mode string, err error) {
	corpus, mode, _ = strings.Cut(model, ":")
	switch mode {
	case "":
		mode = ask.ModeAuto
	case ask.ModeLocal, ask.ModeGlobal:
	default:
		return "", "", &modelNotFound{model}
	}
	if events.ValidateCorpus(corpus) != nil {
		return "", "", &modelNotFound{model}
	}
	return corpus, mode, nil
}

// chatQuery turns a chat request into a question to the engine.
func chatQuery(c chatRequest) (ask.Request, error) {
	corpus, mode, err := parseModel(c.Model)
	if err != nil {
		return ask.Request{}, err
	}
	if c.N != nil && *c.N != 1 {
		return ask.Request{}, engine.BadRequestf("n: only 1 choice is generated")
	}
	turns, err := userTurns(c.Messages)
	if err != nil {
		return ask.Request{}, err
	}
	req := ask.Request{Corpus: corpus, Query: withHistory(turns), Mode: mode, Stream: c.Stream}
	if len(turns) == 0 || strings.TrimSpace(turns[len(turns)-1]) == "" {
		return req, engine.BadRequestf("messages: no user message with text (the last user message is the question)")
	}
	if err := req.Validate(); err != nil {
		return req, engine.BadRequestf("model %q: %v", c.Model, err)
	}
	return req, nil
}

// historyTurns is how many user messages before the last one go into the question.
const historyTurns = 2

// userTurns are the texts of the last user messages, oldest first: the question and
// at most historyTurns before it.
func userTurns(msgs []chatMessage) ([]string, error) {
	var turns []string
	for i, m := range slices.Backward(msgs) {
		if m.Role != "user" {
			continue
		}
		t, err := m.text()
		if err != nil {
			return nil, engine.BadRequestf("messages[%d]: %v", i, err)
		}
		if len(turns) > 0 && strings.TrimSpace(t) == "" {
			continue
		}
		turns = append(turns, t)
		if len(turns) > historyTurns {
			break
		}
	}
	slices.Reverse(turns)
	return turns, nil
}

// withHistory is the question the engine answers: the last user message, after the
// user messages before it, so that a follow-up ("Where does she work?") is retrieved
// and answered with what it refers to. Without a chat model to rewrite it, this is
// the simplest condensation: the earlier questions name the entities the follow-up's
// pronouns stand for. The oldest turns are left out to stay within MaxQueryBytes;
// the last is never cut (Validate refuses one too long).
func withHistory(turns []string) string {
	if len(turns) == 0 {
		return ""
	}
	q := strings.TrimSpace(turns[len(turns)-1])
	for _, t := range slices.Backward(turns[:len(turns)-1]) {
		t = strings.TrimSpace(t)
		if len(t)+1+len(q) > engine.MaxQueryBytes {
			break
		}
		q = t + "\n" + q
	}
	return q
}

func (a *API) chatCompletions(w http.ResponseWriter, r *http.Request) {
	var c chatRequest
	if err := json.NewDecoder(r.Body).Decode(&c); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			a.chatFail(w, r, err)
			return
		}
		a.chatFail(w, r, engine.BadRequestf("body: %v", err))
		return
	}
	req, err := chatQuery(c)
	if err != nil {
		a.chatFail(w, r, err)
		return
	}
	if err := a.modelReady(r, req.Corpus, c.Model); err != nil {
		a.chatFail(w, r, err)
		return
	}
	base := chatCompletion{ID: "chatcmpl-" + randomID(), Created: time.Now().Unix(), Model: c.Model}
	if c.Stream {
		a.chatStream(w, r, c, req, base)
		return
	}
	resp, err := a.e.Query(r.Context(), req, nil)
	if err != nil {
		a.chatFail(w, r, err)
		return
	}
	answer := resp.Answer + sources(resp)
	if base.Usage, err = usageOf(c.Messages, answer); err != nil {
		a.chatFail(w, r, err)
		return
	}
	base.Object = "chat.completion"
	base.Citations = resp.Citations
	base.Choices = []chatChoice{{Message: &chatOut{Role: "assistant", Content: answer}, FinishReason: new("stop")}}
	writeJSON(w, http.StatusOK, base)
}

// modelReady checks that the token may read the corpus of a model and that the corpus
// holds passages to answer from (else the model does not exist). The chat-compatible
// routes (OpenAI's and Ollama's) check it before a stream starts: once one has, the
// status is 200 whatever happens.
func (a *API) modelReady(r *http.Request, corpus, model string) error {
	if err := access.Check(r.Context(), corpus, access.Read, "read"); err != nil {
		return err
	}
	if _, err := a.e.Engine().Stats(r.Context(), corpus); err != nil {
		if errors.Is(err, engine.ErrUnknownCorpus) {
			return &modelNotFound{model}
		}
		return err
	}
	return nil
}

// chatStream answers with server-sent events in OpenAI's chunk format: a first chunk
// with the role, the answer's text as it is generated, its sources list, a last chunk
// with the finish reason, with stream_options.include_usage a chunk with the usage and
// no choice, then "data: [DONE]". A failure after the first chunk is an error event, as
// OpenAI sends.
func (a *API) chatStream(w http.ResponseWriter, r *http.Request, c chatRequest, req ask.Request, base chatCompletion) {
	fl, ok := w.(http.Flusher)
	if !ok {
		a.chatFail(w, r, errors.New("streaming is not supported by this connection"))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	base.Object = "chat.completion.chunk"
	var mu sync.Mutex
	send := func(v any) error {
		b, _ := json.Marshal(v)
		mu.Lock()
		defer mu.Unlock()
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return err
		}
		fl.Flush()
		return nil
	}
	chunk := func(delta chatOut, finish *string) chatCompletion {
		c := base
		c.Choices = []chatChoice{{Delta: &delta, FinishReason: finish}}
		return c
	}
	if err := send(chunk(chatOut{Role: "assistant"}, nil)); err != nil {
		return
	}
	resp, err := a.e.Query(r.Context(), req, func(d string) error { return send(chunk(chatOut{Content: d}, nil)) })
	if err != nil {
		_, body := a.chatError(r, err)
		_ = send(openAIError{Error: body})
		return
	}
	src := sources(resp)
	if src != "" {
		_ = send(chunk(chatOut{Content: src}, nil))
	}
	last := chunk(chatOut{}, new("stop"))
	last.Citations = resp.Citations
	_ = send(last)
	if c.StreamOptions != nil && c.StreamOptions.IncludeUsage {
		u, err := usageOf(c.Messages, resp.Answer+src)
		if err != nil {
			_, body := a.chatError(r, err)
			_ = send(openAIError{Error: body})
			return
		}
		usage := base
		usage.Choices, usage.Usage = []chatChoice{}, u
		_ = send(usage)
	}
	mu.Lock()
	defer mu.Unlock()
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
	fl.Flush()
}

// sources lists the answer's citations in marker order: "[n] title (document id)" for
// a passage, "[n] title (community report id)" for a report.
func sources(resp *ask.Response) string {
	if len(resp.Citations) == 0 {
		return ""
	}
	titles := map[string]string{}
	for _, c := range resp.Context.Chunks {
		titles[c.ID] = c.Title
	}
	for _, c := range resp.Context.Communities {
		titles[c.ID] = c.Title
	}
	cites := slices.Clone(resp.Citations)
	slices.SortStableFunc(cites, func(a, b ask.Citation) int {
		x, errA := strconv.Atoi(a.Marker)
		y, errB := strconv.Atoi(b.Marker)
		if errA != nil || errB != nil {
			return strings.Compare(a.Marker, b.Marker)
		}
		return x - y
	})
	var b strings.Builder
	b.WriteString("\n\nSources:")
	for _, c := range cites {
		switch {
		case c.ChunkID != "":
			fmt.Fprintf(&b, "\n[%s] %s (document %s)", c.Marker, orID(titles[c.ChunkID], c.DocumentID), c.DocumentID)
		case c.Community != "":
			fmt.Fprintf(&b, "\n[%s] %s (community report %s)", c.Marker, orID(titles[c.Community], c.Community), c.Community)
		}
	}
	return b.String()
}

func orID(title, id string) string {
	if title == "" {
		return id
	}
	return title
}

func randomID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// modelList is the body of GET /v1/models: the corpora the token may read.
type modelList struct {
	Object string  `json:"object"`
	Data   []model `json:"data"`
}

type model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"` // when the corpus began (catalog.Created), Unix seconds; 0 when unknown
	OwnedBy string `json:"owned_by"`
}

func (a *API) models(w http.ResponseWriter, r *http.Request) {
	if a.catalog == nil {
		a.chatFail(w, r, &unavailable{"listing corpora"})
		return
	}
	names, err := a.catalog.Names(r.Context())
	if err != nil {
		a.chatFail(w, r, err)
		return
	}
	out := modelList{Object: "list", Data: []model{}}
	for _, n := range names {
		if !access.Visible(r.Context(), n) {
			continue
		}
		m, err := a.modelOf(r, n, n)
		if err != nil {
			a.chatFail(w, r, err)
			return
		}
		out.Data = append(out.Data, m)
	}
	writeJSON(w, http.StatusOK, out)
}

// model serves one model: a corpus the token may read, with the mode suffix if given.
func (a *API) model(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("model")
	corpus, _, err := parseModel(name)
	if err != nil {
		a.chatFail(w, r, err)
		return
	}
	if a.catalog == nil {
		a.chatFail(w, r, &unavailable{"reading corpora"})
		return
	}
	exists, err := a.catalog.Exists(r.Context(), corpus)
	if err != nil {
		a.chatFail(w, r, err)
		return
	}
	// A corpus the token may not read does not exist for it, as OpenAI answers.
	if !exists || !access.Visible(r.Context(), corpus) {
		a.chatFail(w, r, &modelNotFound{name})
		return
	}
	m, err := a.modelOf(r, name, corpus)
	if err != nil {
		a.chatFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, m)
}

// modelOf is the model name of a corpus, created when the corpus began.
func (a *API) modelOf(r *http.Request, name, corpus string) (model, error) {
	created, err := a.catalog.Created(r.Context(), corpus)
	if err != nil {
		return model{}, err
	}
	m := model{ID: name, Object: "model", OwnedBy: "graphrag"}
	if !created.IsZero() {
		m.Created = created.Unix()
	}
	return m, nil
}
