package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"golang.org/x/time/rate"

	"github.com/graphrag/graphrag/pkg/costestimate"
	"github.com/graphrag/graphrag/pkg/service"
	"github.com/graphrag/graphrag/services/query/access"
	"github.com/graphrag/graphrag/services/query/ask"
	"github.com/graphrag/graphrag/services/query/clienterror"
	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/query/explore"
)

// Explorer serves the exploration routes (explore.go): the console's read-model,
// an *explore.Reader.
type Explorer interface {
	SearchEntities(ctx context.Context, corpus, prefix string, limit int) ([]explore.EntityMatch, error)
	Neighborhood(ctx context.Context, corpus, name string, depth, limit int) (explore.Neighborhood, error)
	Passages(ctx context.Context, corpus, name string, limit int) (explore.EntityPassages, error)
	Passage(ctx context.Context, corpus, id string) (explore.Passage, error)
	CommunityTree(ctx context.Context, corpus string, level int) (explore.CommunityLevels, error)
	Community(ctx context.Context, corpus, id string) (explore.CommunityReport, error)
}

var _ Explorer = (*explore.Reader)(nil)

// API serves the HTTP JSON API. It is an http.Handler; Mount adds its routes to a mux.
type API struct {
	e      *ask.Asker
	x      Explorer
	cfg    Config
	log    *slog.Logger
	mux    *http.ServeMux
	limits *clientLimits

	// The backends of the resource routes (resources.go); a nil one answers 503.
	catalog   Catalog
	publisher Publisher
	deleter   Deleter
	exporter  Exporter
	curator   Curator
	// estimate: the indexing settings of an upload's cost estimate (estimate.go).
	estimate *costestimate.Options
	// settings: the extraction settings routes (xsettings.go).
	settings ExtractionSettings
}

// New builds the HTTP handler: POST /v1/query, POST /v1/retrieve,
// GET /v1/corpora/{corpus}/entities/{name}, GET /v1/corpora/{corpus}/stats, the corpus
// and document resources (resources.go: their backends come as options), export,
// the chat-compatible routes (chat.go) and their Ollama-compatible twins under /api/
// (ollama.go), GET /openapi.json. A route added here is
// documented in openapi.json (the tests check both ways). Handlers served beside the
// API (the MCP endpoint) get the same guard from Guard. The exploration routes read x.
// Zero fields of cfg take their defaults (see Config); the rest must pass Validate,
// else New returns its error: a bad value is never replaced.
func New(e *ask.Asker, x Explorer, cfg Config, log *slog.Logger, opts ...Option) (*API, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("httpapi: %w", err)
	}
	if log == nil {
		log = slog.Default()
	}
	a := &API{e: e, x: x, cfg: cfg, log: log, mux: http.NewServeMux()}
	for _, o := range opts {
		o.apply(a)
	}
	if cfg.RatePerSecond > 0 {
		a.limits = newClientLimits(rate.Limit(cfg.RatePerSecond), cfg.Burst)
	}
	a.mux.HandleFunc("POST /v1/query", a.guard(a.query))
	a.mux.HandleFunc("POST /v1/retrieve", a.guard(a.retrieve))
	a.mux.HandleFunc("GET /v1/corpora/{corpus}/entities/{name}", a.guard(a.known(a.entity)))
	a.mux.HandleFunc("GET /v1/corpora/{corpus}/stats", a.guard(a.known(a.stats)))
	a.addResourceRoutes()
	a.addSettingsRoutes()
	a.addExportRoute()
	a.addCurationRoutes()
	a.addChatRoutes()
	a.addOllamaRoutes()
	// Exploration (explore.go, served by x), read by the console.
	a.mux.HandleFunc("GET /v1/corpora/{corpus}/entities", a.guard(a.known(a.searchEntities)))
	a.mux.HandleFunc("GET /v1/corpora/{corpus}/entities/{name}/passages", a.guard(a.known(a.entityPassages)))
	a.mux.HandleFunc("GET /v1/corpora/{corpus}/chunks/{id}", a.guard(a.known(a.chunk)))
	a.mux.HandleFunc("GET /v1/corpora/{corpus}/communities", a.guard(a.known(a.communities)))
	a.mux.HandleFunc("GET /v1/corpora/{corpus}/communities/{id}", a.guard(a.known(a.community)))
	a.mux.HandleFunc("GET /openapi.json", a.public(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(openAPI)
	}))
	return a, nil
}

// public serves a route that needs no token under the per-address rate limit, so that
// no route of the API is free to hammer.
func (a *API) public(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if a.limits != nil && !a.limits.allow(clientAddr(r)) {
			w.Header().Set("Retry-After", "1")
			writeJSON(w, http.StatusTooManyRequests, apiError{Error: "rate limit exceeded"})
			return
		}
		h(w, r)
	}
}

// Guard wraps another handler (the MCP endpoint) in the same authentication, rate limit
// and deadline as the API.
func (a *API) Guard(h http.Handler) http.Handler { return a.guard(h.ServeHTTP) }

// ServeHTTP serves the API's routes; any other path or method gets a JSON 404 or 405.
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
	// Code names an error a client may act on: corpus_not_found.
	Code string `json:"code,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := failure(r.Context(), err)
	if status >= http.StatusInternalServerError {
		a.log.ErrorContext(r.Context(), "request failed", "path", r.URL.Path, "status", status, "err", err)
	}
	e := apiError{Error: msg, Code: clienterror.Of(r.Context(), err).Code}
	setRetryAfter(w, status)
	writeJSON(w, status, e)
}

func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if isReadError(err) {
			return err
		}
		return bodyError(err)
	}
	if dec.More() {
		return engine.BadRequestf("body: trailing data after the JSON object")
	}
	return nil
}

// isReadError tells a body that could not be read (too large, too slow) from one that
// does not decode.
func isReadError(err error) bool {
	_, tooLarge := errors.AsType[*http.MaxBytesError](err)
	return tooLarge || errors.Is(err, service.ErrBodyTimeout)
}

// readRequest decodes and validates the body of a question route, and checks that the
// token may read its corpus.
func readRequest(r *http.Request) (ask.Request, error) {
	var req ask.Request
	if err := decodeBody(r, &req); err != nil {
		return req, err
	}
	if err := req.Validate(); err != nil {
		return req, err
	}
	return req, access.Check(r.Context(), req.Corpus, access.Read, "read")
}

func (a *API) query(w http.ResponseWriter, r *http.Request) {
	req, err := readRequest(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if req.Stream {
		a.stream(w, r, req)
		return
	}
	resp, err := a.e.Query(r.Context(), req, nil)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// retrieveResponse is the body of POST /v1/retrieve.
type retrieveResponse struct {
	Context engine.Retrieved   `json:"context"`
	Timings map[string]float64 `json:"timings_ms"`
}

func (a *API) retrieve(w http.ResponseWriter, r *http.Request) {
	req, err := readRequest(r)
	if err != nil {
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

func (a *API) stats(w http.ResponseWriter, r *http.Request) {
	st, err := a.e.Engine().Stats(r.Context(), r.PathValue("corpus"))
	if errors.Is(err, engine.ErrUnknownCorpus) && a.catalog != nil {
		// known let it through: the corpus exists and holds no passage yet.
		st, err = engine.Stats{Corpus: r.PathValue("corpus")}, nil
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// Mount adds the API routes to mux.
func (a *API) Mount(mux *http.ServeMux) {
	mux.Handle("/v1/", a)
	mux.Handle("/api/", a)
	mux.Handle("GET /openapi.json", a)
}
