package llmtest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Request is what the server received, as given to a Script and kept in
// Requests.
type Request struct {
	Path  string
	Time  time.Time // arrival
	N     int64     // 1-based arrival number across all endpoints
	Body  []byte
	Chat  *openai.ChatCompletionRequest // set for /v1/chat/completions
	Embed *openai.EmbeddingRequest      // set for /v1/embeddings
}

// Reply is a raw HTTP answer.
type Reply struct {
	Status int // 0 means "not scripted": fall through to the default answer
	Header http.Header
	Body   string
}

// Script decides the answer to a request. Returning a zero Reply lets the
// server answer as usual. It may be called concurrently.
type Script func(r Request) Reply

// Fault is an injected failure for the next request(s); see Server.Inject.
type Fault struct {
	kind       faultKind
	status     int
	retryAfter string
	body       string
}

type faultKind int

const (
	faultStatus faultKind = iota
	faultGarbage
	faultHang
	faultCutStream
)

// RateLimited answers 429 with the given Retry-After header ("" for none):
// a number of seconds or an HTTP date.
func RateLimited(retryAfter string) Fault {
	return Fault{kind: faultStatus, status: http.StatusTooManyRequests, retryAfter: retryAfter,
		body: `{"error":{"message":"rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`}
}

// ServerError answers 500 with an OpenAI-style error body.
func ServerError() Fault {
	return Fault{kind: faultStatus, status: http.StatusInternalServerError,
		body: `{"error":{"message":"internal server error","type":"server_error"}}`}
}

// Status answers with any status and body.
func Status(code int, body string) Fault { return Fault{kind: faultStatus, status: code, body: body} }

// Garbage answers 200 with a body that is not JSON.
func Garbage() Fault { return Fault{kind: faultGarbage} }

// Hang never answers: the request blocks until the client gives up or the
// server is closed.
func Hang() Fault { return Fault{kind: faultHang} }

// CutStream starts a streaming answer and drops the connection before it
// ends (plain requests get a truncated body).
func CutStream() Fault { return Fault{kind: faultCutStream} }

// Server is the fake endpoint. Use URL() as the client's BaseURL.
type Server struct {
	srv *httptest.Server
	cfg config

	sem  chan struct{} // nil: no limit
	done chan struct{} // closed by Close: releases hung requests
	once sync.Once

	mu       sync.Mutex
	faults   []Fault
	requests []Request

	calls, chatCalls, embedCalls atomic.Int64
	inFlight, maxInFlight        atomic.Int64
	down                         atomic.Bool

	budget *budget // nil: no token or request budget
}

type config struct {
	latency        time.Duration
	maxConcurrency int
	script         Script
	chatReply      func(openai.ChatCompletionRequest) string
	embedder       func(string) []float32
	dim            int
	keep           bool
	tokenBudget    int // per budgetWindow; 0: none
	requestBudget  int // per budgetWindow; 0: none
	budgetWindow   time.Duration
}

// Option configures a Server.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithLatency delays every answer by d (after the request got a slot).
func WithLatency(d time.Duration) Option { return optionFunc(func(c *config) { c.latency = d }) }

// WithMaxConcurrency serves at most n requests at once; more wait in line,
// as on a real endpoint with limited capacity.
func WithMaxConcurrency(n int) Option { return optionFunc(func(c *config) { c.maxConcurrency = n }) }

// WithScript installs a Script consulted before the default answers.
func WithScript(s Script) Option { return optionFunc(func(c *config) { c.script = s }) }

// WithChatReply sets the content of successful chat answers. Default: "echo: "
// followed by the last message.
func WithChatReply(f func(openai.ChatCompletionRequest) string) Option {
	return optionFunc(func(c *config) { c.chatReply = f })
}

// WithDimension sets the dimension of the default embeddings (default 8).
func WithDimension(d int) Option { return optionFunc(func(c *config) { c.dim = d }) }

// WithEmbedder replaces the default embedding function.
func WithEmbedder(f func(string) []float32) Option {
	return optionFunc(func(c *config) { c.embedder = f })
}

// WithTokenBudget limits the tokens the endpoint serves to n per window (a minute for
// "tokens per minute"; tests use a shorter one), as hosted APIs do: a request whose
// tokens (prompt, and completion for chat) do not fit in what is left of the current
// window is answered 429 with Retry-After and Retry-After-Ms saying when the next window
// starts, and costs nothing. Windows are fixed: the budget is whole again at each start.
// BudgetUsage reports what was served in each window.
func WithTokenBudget(n int, window time.Duration) Option {
	return optionFunc(func(c *config) { c.tokenBudget, c.budgetWindow = n, window })
}

// WithRequestBudget limits the requests the endpoint serves to n per window, as
// WithTokenBudget does tokens; with both, a request must fit in each. Both share the
// window of the last of the two options given.
func WithRequestBudget(n int, window time.Duration) Option {
	return optionFunc(func(c *config) { c.requestBudget, c.budgetWindow = n, window })
}

// WithRequestLog keeps every Request for Requests(); off by default so
// benchmarks do not grow memory.
func WithRequestLog() Option { return optionFunc(func(c *config) { c.keep = true }) }

// NewServer starts a fake endpoint on loopback. Close it when done.
func NewServer(opts ...Option) *Server {
	cfg := config{dim: 8}
	for _, o := range opts {
		o.apply(&cfg)
	}
	if cfg.chatReply == nil {
		cfg.chatReply = EchoReply
	}
	if cfg.embedder == nil {
		dim := cfg.dim
		cfg.embedder = func(s string) []float32 { return HashEmbedding(s, dim) }
	}
	s := &Server{cfg: cfg, done: make(chan struct{})}
	if cfg.tokenBudget < 0 || cfg.requestBudget < 0 || ((cfg.tokenBudget > 0 || cfg.requestBudget > 0) && cfg.budgetWindow <= 0) {
		panic(fmt.Sprintf("llmtest: budgets of %d tokens and %d requests per %s: budgets must not be negative and need a positive window",
			cfg.tokenBudget, cfg.requestBudget, cfg.budgetWindow))
	}
	if cfg.tokenBudget > 0 || cfg.requestBudget > 0 {
		s.budget = &budget{tokens: cfg.tokenBudget, requests: cfg.requestBudget, window: cfg.budgetWindow, start: time.Now()}
	}
	if cfg.maxConcurrency > 0 {
		s.sem = make(chan struct{}, cfg.maxConcurrency)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.handle)
	mux.HandleFunc("POST /v1/embeddings", s.handle)
	mux.HandleFunc("GET /v1/models", s.serveModels)
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.down.Load() {
			drop(w)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	return s
}

// Down makes the endpoint unreachable, as a crashed or restarting model server is:
// open connections are closed, and every request until Up, to any path, has its
// connection dropped without an answer.
func (s *Server) Down() {
	s.down.Store(true)
	s.srv.CloseClientConnections()
}

// Up ends Down: the endpoint answers again.
func (s *Server) Up() { s.down.Store(false) }

// drop closes the request's connection without writing anything.
func drop(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("llmtest: the response writer cannot be hijacked")
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

// serveModels lists one model, as GET /v1/models does on OpenAI-compatible servers
// (clients probe it to learn whether the server is up).
func (s *Server) serveModels(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"llmtest","object":"model","owned_by":"llmtest"}]}`))
}

// URL is the base URL to configure clients with (ends in /v1).
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Close releases hung requests, drops connections and stops the server.
// Safe to call more than once.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.done)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// Inject queues faults: the next len(faults) requests, in arrival order, get
// them instead of a normal answer.
func (s *Server) Inject(faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, faults...)
}

// Calls counts all requests received; ChatCalls and EmbedCalls per endpoint.
func (s *Server) Calls() int64      { return s.calls.Load() }
func (s *Server) ChatCalls() int64  { return s.chatCalls.Load() }
func (s *Server) EmbedCalls() int64 { return s.embedCalls.Load() }

// MaxConcurrent is the largest number of requests that were inside the
// server at the same time, queued ones included: what the client sent
// concurrently.
func (s *Server) MaxConcurrent() int64 { return s.maxInFlight.Load() }

// Requests returns the requests received so far (needs WithRequestLog).
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) nextFault() (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.faults) == 0 {
		return Fault{}, false
	}
	f := s.faults[0]
	s.faults = s.faults[1:]
	return f, true
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for {
		m := s.maxInFlight.Load()
		if n <= m || s.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	req := Request{Path: r.URL.Path, Time: time.Now(), N: s.calls.Add(1)}
	var err error
	if req.Body, err = io.ReadAll(io.LimitReader(r.Body, 64<<20)); err != nil {
		http.Error(w, "reading body", http.StatusBadRequest)
		return
	}
	switch r.URL.Path {
	case "/v1/chat/completions":
		s.chatCalls.Add(1)
		req.Chat = new(openai.ChatCompletionRequest)
		err = json.Unmarshal(req.Body, req.Chat)
	default:
		s.embedCalls.Add(1)
		req.Embed = new(openai.EmbeddingRequest)
		err = json.Unmarshal(req.Body, req.Embed)
	}
	if s.cfg.keep {
		s.mu.Lock()
		s.requests = append(s.requests, req)
		s.mu.Unlock()
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid request body: "+err.Error())
		return
	}

	// Queue for a slot, as a saturated endpoint would.
	if s.sem != nil {
		select {
		case s.sem <- struct{}{}:
			defer func() { <-s.sem }()
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
	if s.cfg.latency > 0 {
		t := time.NewTimer(s.cfg.latency)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}

	if f, ok := s.nextFault(); ok {
		s.serveFault(w, r, f, req)
		return
	}
	if s.cfg.script != nil {
		if rep := s.cfg.script(req); rep.Status != 0 {
			maps.Copy(w.Header(), rep.Header)
			if w.Header().Get("Content-Type") == "" {
				w.Header().Set("Content-Type", "application/json")
			}
			w.WriteHeader(rep.Status)
			_, _ = w.Write([]byte(rep.Body))
			return
		}
	}
	if s.budget != nil {
		if wait, ok := s.budget.take(time.Now(), s.cost(req)); !ok {
			s.refuseOverBudget(w, wait)
			return
		}
	}
	if req.Chat != nil {
		s.serveChat(w, *req.Chat, false)
		return
	}
	s.serveEmbed(w, *req.Embed)
}

func (s *Server) serveFault(w http.ResponseWriter, r *http.Request, f Fault, req Request) {
	switch f.kind {
	case faultHang:
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
	case faultGarbage:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("<html>502 Bad Gateway</html> {not json"))
	case faultCutStream:
		if req.Chat != nil {
			s.serveChat(w, *req.Chat, true)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"object":"list","data":[{"obj`))
	default:
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.status)
		_, _ = w.Write([]byte(f.body))
	}
}

func (s *Server) serveChat(w http.ResponseWriter, req openai.ChatCompletionRequest, cut bool) {
	content := s.cfg.chatReply(req)
	prompt := 0
	for _, m := range req.Messages {
		prompt += tokens(m.Content)
	}
	usage := openai.Usage{PromptTokens: prompt, CompletionTokens: tokens(content)}
	usage.TotalTokens = usage.PromptTokens + usage.CompletionTokens
	id := fmt.Sprintf("chatcmpl-%x", sha256.Sum256([]byte(content)))[:24]

	if !req.Stream {
		resp := openai.ChatCompletionResponse{
			ID: id, Object: "chat.completion", Created: time.Now().Unix(), Model: req.Model,
			Choices: []openai.ChatCompletionChoice{{Index: 0, FinishReason: openai.FinishReasonStop,
				Message: openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: content}}},
			Usage: usage,
		}
		b, _ := json.Marshal(resp)
		if cut {
			b = b[:len(b)/2]
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
		return
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		_, _ = fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	pieces := splitKeep(content)
	if cut {
		pieces = pieces[:len(pieces)/2]
	}
	for i, p := range pieces {
		delta := openai.ChatCompletionStreamChoiceDelta{Content: p}
		if i == 0 {
			delta.Role = openai.ChatMessageRoleAssistant
		}
		send(openai.ChatCompletionStreamResponse{ID: id, Object: "chat.completion.chunk", Model: req.Model,
			Choices: []openai.ChatCompletionStreamChoice{{Index: 0, Delta: delta}}})
	}
	if cut {
		return // no finish reason, no [DONE]: the connection just ends
	}
	send(openai.ChatCompletionStreamResponse{ID: id, Object: "chat.completion.chunk", Model: req.Model,
		Choices: []openai.ChatCompletionStreamChoice{{Index: 0, FinishReason: openai.FinishReasonStop}}})
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		send(openai.ChatCompletionStreamResponse{ID: id, Object: "chat.completion.chunk", Model: req.Model,
			Choices: []openai.ChatCompletionStreamChoice{}, Usage: &usage})
	}
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

func (s *Server) serveEmbed(w http.ResponseWriter, req openai.EmbeddingRequest) {
	var inputs []string
	switch in := req.Input.(type) {
	case string:
		inputs = []string{in}
	case []any:
		for _, v := range in {
			str, ok := v.(string)
			if !ok {
				writeError(w, http.StatusBadRequest, "input must be strings")
				return
			}
			inputs = append(inputs, str)
		}
	default:
		writeError(w, http.StatusBadRequest, "input must be a string or a list of strings")
		return
	}
	resp := openai.EmbeddingResponse{Object: "list", Model: req.Model}
	for i, in := range inputs {
		resp.Data = append(resp.Data, openai.Embedding{Object: "embedding", Index: i, Embedding: s.cfg.embedder(in)})
		resp.Usage.PromptTokens += tokens(in)
	}
	resp.Usage.TotalTokens = resp.Usage.PromptTokens
	// Answer in reverse order: the API does not promise input order, and
	// clients must place vectors by index.
	for i, j := 0, len(resp.Data)-1; i < j; i, j = i+1, j-1 {
		resp.Data[i], resp.Data[j] = resp.Data[j], resp.Data[i]
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// EchoReply is the default chat content: "echo: " and the last message.
func EchoReply(req openai.ChatCompletionRequest) string {
	if len(req.Messages) == 0 {
		return "echo:"
	}
	return "echo: " + req.Messages[len(req.Messages)-1].Content
}

// HashEmbedding is a deterministic unit vector seeded by the text's
// SHA-256: equal texts get equal vectors, different texts differ.
func HashEmbedding(text string, dim int) []float32 {
	h := sha256.Sum256([]byte(text))
	// PCG's output for a given seed is fixed by math/rand/v2's compatibility promise.
	r := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(h[:8]), binary.LittleEndian.Uint64(h[8:16])))
	v := make([]float32, dim)
	var norm float64
	for i := range v {
		f := r.Float64()*2 - 1
		v[i] = float32(f)
		norm += f * f
	}
	if norm > 0 {
		inv := 1 / math.Sqrt(norm)
		for i := range v {
			v[i] = float32(float64(v[i]) * inv)
		}
	}
	return v
}

// tokens is the fake's token count: one per 4 bytes, at least one.
func tokens(s string) int { return len(s)/4 + 1 }

// splitKeep splits s into words, keeping the spaces, so that joining the
// pieces gives s back.
func splitKeep(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s[1:], ' ')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}
