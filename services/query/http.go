package query

import (
	"context"
	"crypto/subtle"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/graphrag/graphrag/pkg/service"
)

//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the OpenAPI 3.1 document of the HTTP API.
func OpenAPI() []byte { return openAPI }

// HTTPConfig guards the API.
type HTTPConfig struct {
	// Tokens are the accepted bearer tokens; empty disables authentication.
	Tokens []string
	// MaxBodyBytes bounds a request body.
	MaxBodyBytes int64
	// Timeout bounds one request (a streamed answer included).
	Timeout time.Duration
	// RatePerSecond and Burst limit each client (by token, else by remote address);
	// 0 disables the limit.
	RatePerSecond float64
	Burst         int
}

// DefaultHTTPConfig: no auth, 64 KiB bodies, 120 s per request, 20 requests/s per client.
func DefaultHTTPConfig() HTTPConfig {
	return HTTPConfig{MaxBodyBytes: 64 << 10, Timeout: 120 * time.Second, RatePerSecond: 20, Burst: 40}
}

// API serves the HTTP JSON API.
type API struct {
	e      *Engine
	cfg    HTTPConfig
	log    *slog.Logger
	mux    *http.ServeMux
	limits *clientLimits
}

// NewAPI builds the HTTP handler: POST /v1/query, POST /v1/retrieve,
// GET /v1/corpora/{corpus}/entities/{name}, GET /v1/corpora/{corpus}/stats,
// GET /openapi.json. Extra routes (e.g. /mcp) can be added with Handle.
func NewAPI(e *Engine, cfg HTTPConfig, log *slog.Logger) *API {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultHTTPConfig().MaxBodyBytes
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultHTTPConfig().Timeout
	}
	if log == nil {
		log = slog.Default()
	}
	a := &API{e: e, cfg: cfg, log: log, mux: http.NewServeMux()}
	if cfg.RatePerSecond > 0 {
		a.limits = newClientLimits(rate.Limit(cfg.RatePerSecond), max(1, cfg.Burst))
	}
	a.mux.HandleFunc("POST /v1/query", a.guard(a.query))
	a.mux.HandleFunc("POST /v1/retrieve", a.guard(a.retrieve))
	a.mux.HandleFunc("GET /v1/corpora/{corpus}/entities/{name}", a.guard(a.entity))
	a.mux.HandleFunc("GET /v1/corpora/{corpus}/stats", a.guard(a.stats))
	a.mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(openAPI)
	})
	return a
}

// Guard wraps another handler (the MCP endpoint) in the same authentication, rate limit
// and deadline as the API.
func (a *API) Guard(h http.Handler) http.Handler { return a.guard(h.ServeHTTP) }

func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, pattern := a.mux.Handler(r); pattern == "" {
		// No route matches: the mux would answer 404 or 405 in plain text. Let it decide
		// (and set Allow), and answer in the API's JSON error shape.
		w = &routeErrorWriter{ResponseWriter: w, r: r}
	}
	a.mux.ServeHTTP(w, r)
}

// routeErrorWriter turns the mux's plain-text 404 and 405 into JSON errors.
type routeErrorWriter struct {
	http.ResponseWriter
	r       *http.Request
	written bool
}

func (w *routeErrorWriter) WriteHeader(status int) {
	if w.written {
		return
	}
	w.written = true
	msg := fmt.Sprintf("no route for %s %s (the API is described at /openapi.json)", w.r.Method, w.r.URL.Path)
	if status == http.StatusMethodNotAllowed {
		msg = fmt.Sprintf("method %s is not allowed on %s (allowed: %s)", w.r.Method, w.r.URL.Path, w.Header().Get("Allow"))
	}
	w.Header().Del("X-Content-Type-Options")
	writeJSON(w.ResponseWriter, status, apiError{Error: msg})
}

// Write drops the mux's plain-text body: WriteHeader wrote the JSON one.
func (w *routeErrorWriter) Write(b []byte) (int, error) {
	if !w.written {
		w.WriteHeader(http.StatusOK)
	}
	return len(b), nil
}

type apiError struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	var mbe *http.MaxBytesError
	switch {
	case errors.Is(err, ErrBadRequest):
		status = http.StatusBadRequest
	case errors.Is(err, ErrUnknownCorpus), errors.Is(err, ErrNotFound):
		status = http.StatusNotFound
	case errors.As(err, &mbe):
		status = http.StatusRequestEntityTooLarge
	case errors.Is(err, context.DeadlineExceeded):
		status = http.StatusGatewayTimeout
	}
	if status == http.StatusInternalServerError {
		a.log.ErrorContext(r.Context(), "request failed", "path", r.URL.Path, "err", err)
	}
	writeJSON(w, status, apiError{Error: err.Error()})
}

// guard applies authentication, the per-client rate limit and the request deadline.
func (a *API) guard(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		client := clientAddr(r)
		if len(a.cfg.Tokens) > 0 {
			tok, ok := bearer(r)
			if !ok || !a.validToken(tok) {
				// Failed attempts spend the caller's address bucket, so guessing tokens is
				// rate limited too.
				if a.limits != nil && !a.limits.allow(client) {
					w.Header().Set("Retry-After", "1")
					writeJSON(w, http.StatusTooManyRequests, apiError{Error: "rate limit exceeded"})
					return
				}
				w.Header().Set("WWW-Authenticate", `Bearer realm="graphrag"`)
				writeJSON(w, http.StatusUnauthorized, apiError{Error: "missing or invalid bearer token"})
				return
			}
			client = "token:" + tok
		}
		if a.limits != nil && !a.limits.allow(client) {
			w.Header().Set("Retry-After", "1")
			writeJSON(w, http.StatusTooManyRequests, apiError{Error: "rate limit exceeded"})
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), a.cfg.Timeout)
		defer cancel()
		r.Body = http.MaxBytesReader(w, r.Body, a.cfg.MaxBodyBytes)
		h(w, r.WithContext(ctx))
	}
}

func (a *API) validToken(tok string) bool {
	ok := 0
	for _, t := range a.cfg.Tokens {
		ok |= subtle.ConstantTimeCompare([]byte(t), []byte(tok))
	}
	return ok == 1
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	const p = "Bearer "
	if len(h) <= len(p) || !strings.EqualFold(h[:len(p)], p) {
		return "", false
	}
	return strings.TrimSpace(h[len(p):]), true
}

func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return badf("body: %v", err)
	}
	if dec.More() {
		return badf("body: trailing data after the JSON object")
	}
	return nil
}

func (a *API) query(w http.ResponseWriter, r *http.Request) {
	var req Request
	if err := decodeBody(r, &req); err != nil {
		a.fail(w, r, err)
		return
	}
	if err := req.Validate(); err != nil {
		a.fail(w, r, err)
		return
	}
	if !req.Stream {
		resp, err := a.e.Query(r.Context(), req, nil)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, resp)
		return
	}
	// Server-sent events: "delta" events carry answer text as it is generated, then one
	// "done" event carries the whole response (or "error").
	fl, ok := w.(http.Flusher)
	if !ok {
		a.fail(w, r, errors.New("streaming is not supported by this connection"))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	var mu sync.Mutex
	send := func(event string, v any) error {
		b, _ := json.Marshal(v)
		mu.Lock()
		defer mu.Unlock()
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return err
		}
		fl.Flush()
		return nil
	}
	resp, err := a.e.Query(r.Context(), req, func(d string) error { return send("delta", map[string]string{"text": d}) })
	if err != nil {
		_ = send("error", apiError{Error: err.Error()})
		return
	}
	_ = send("done", resp)
}

type retrieveResponse struct {
	Context Context            `json:"context"`
	Timings map[string]float64 `json:"timings_ms"`
}

func (a *API) retrieve(w http.ResponseWriter, r *http.Request) {
	var req Request
	if err := decodeBody(r, &req); err != nil {
		a.fail(w, r, err)
		return
	}
	c, tm, err := a.e.Retrieve(r.Context(), req)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, retrieveResponse{Context: c, Timings: tm})
}

func (a *API) entity(w http.ResponseWriter, r *http.Request) {
	depth := 2
	if d := r.URL.Query().Get("depth"); d != "" {
		n, err := strconv.Atoi(d)
		if err != nil {
			a.fail(w, r, badf("depth: %q is not a number", d))
			return
		}
		depth = n
	}
	nb, err := a.e.Explore(r.Context(), r.PathValue("corpus"), r.PathValue("name"), depth)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, nb)
}

func (a *API) stats(w http.ResponseWriter, r *http.Request) {
	st, err := a.e.Stats(r.Context(), r.PathValue("corpus"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// clientLimits is a token bucket per client, forgetting idle clients.
type clientLimits struct {
	mu    sync.Mutex
	r     rate.Limit
	burst int
	m     map[string]*clientLimit
	sweep time.Time
}

type clientLimit struct {
	l    *rate.Limiter
	seen time.Time
}

func newClientLimits(r rate.Limit, burst int) *clientLimits {
	return &clientLimits{r: r, burst: burst, m: map[string]*clientLimit{}, sweep: time.Now()}
}

func (c *clientLimits) allow(client string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if now.Sub(c.sweep) > time.Minute {
		for k, v := range c.m {
			if now.Sub(v.seen) > 10*time.Minute {
				delete(c.m, k)
			}
		}
		c.sweep = now
	}
	cl, ok := c.m[client]
	if !ok {
		cl = &clientLimit{l: rate.NewLimiter(c.r, c.burst)}
		c.m[client] = cl
	}
	cl.seen = now
	return cl.l.AllowN(now, 1)
}

// HTTPFlags are the API's guard flags.
type HTTPFlags struct {
	HTTPConfig
	TokensFile string
	Tokens     service.Secret
}

// RegisterFlags adds the API flags with the current values as defaults.
func (f *HTTPFlags) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&f.TokensFile, "api-tokens-file", "", "file with accepted bearer tokens, one per line; with -api-tokens, both are accepted; none = no authentication")
	fs.Var(&f.Tokens, "api-tokens", "accepted bearer tokens, comma-separated")
	fs.Int64Var(&f.MaxBodyBytes, "api-max-body", f.MaxBodyBytes, "largest request body in bytes")
	fs.DurationVar(&f.Timeout, "api-timeout", f.Timeout, "time limit of one request")
	fs.Float64Var(&f.RatePerSecond, "api-rate", f.RatePerSecond, "requests per second per client (0 = unlimited)")
	fs.IntVar(&f.Burst, "api-burst", f.Burst, "burst of requests per client")
}

// Load reads the token file and returns the effective HTTPConfig.
func (f *HTTPFlags) Load() (HTTPConfig, error) {
	cfg := f.HTTPConfig
	cfg.Tokens = nil
	for _, t := range strings.Split(f.Tokens.Value(), ",") {
		if t = strings.TrimSpace(t); t != "" {
			cfg.Tokens = append(cfg.Tokens, t)
		}
	}
	if f.TokensFile != "" {
		b, err := os.ReadFile(f.TokensFile)
		if err != nil {
			return cfg, fmt.Errorf("reading -api-tokens-file: %w", err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
				cfg.Tokens = append(cfg.Tokens, t)
			}
		}
		if len(cfg.Tokens) == 0 {
			return cfg, fmt.Errorf("-api-tokens-file %s holds no token", f.TokensFile)
		}
	}
	return cfg, nil
}

// Mount adds the API routes to mux.
func (a *API) Mount(mux *http.ServeMux) {
	mux.Handle("/v1/", a)
	mux.Handle("GET /openapi.json", a)
}
