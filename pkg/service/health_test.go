package service

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type probeResponse struct {
	code int
	body readyBody
}

func probe(t *testing.T, url string) probeResponse {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatalf("building request: %v", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	var body readyBody
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("body %q is not JSON: %v", raw, err)
	}
	return probeResponse{code: resp.StatusCode, body: body}
}

func TestReadinessTransitions(t *testing.T) {
	health := NewHealth()
	var natsErr atomic.Pointer[error]
	down := errors.New("nats: no servers available")
	natsErr.Store(&down)
	health.AddReadiness("store", func(context.Context) error { return nil })
	health.AddReadiness("nats", func(context.Context) error { return *natsErr.Load() })

	srv := httptest.NewServer(NewMux(health, nil))
	defer srv.Close()

	got := probe(t, srv.URL+"/readyz")
	if got.code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz = %d with a failing check, want 503", got.code)
	}
	if got.body.Status != "unavailable" || len(got.body.Failing) != 1 || got.body.Failing[0] != "nats" {
		t.Errorf("503 body = %+v, want nats failing", got.body)
	}
	if got.body.Checks["nats"] != down.Error() || got.body.Checks["store"] != "ok" {
		t.Errorf("checks = %v", got.body.Checks)
	}

	var ok error
	natsErr.Store(&ok)
	got = probe(t, srv.URL+"/readyz")
	if got.code != http.StatusOK || got.body.Status != "ok" || len(got.body.Failing) != 0 {
		t.Errorf("/readyz after recovery = %d %+v, want 200 ok", got.code, got.body)
	}

	natsErr.Store(&down)
	if got = probe(t, srv.URL+"/readyz"); got.code != http.StatusServiceUnavailable {
		t.Errorf("/readyz after relapse = %d, want 503", got.code)
	}
	// Liveness ignores readiness.
	if got = probe(t, srv.URL+"/healthz"); got.code != http.StatusOK || got.body.Status != "ok" {
		t.Errorf("/healthz = %d %+v, want 200 ok", got.code, got.body)
	}
}

func TestReadinessResults(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	tests := []struct {
		name      string
		check     Check
		wantErr   error
		wantInErr string
	}{
		{"passes", func(context.Context) error { return nil }, nil, ""},
		{"fails", func(context.Context) error { return io.ErrUnexpectedEOF }, io.ErrUnexpectedEOF, ""},
		{"respects ctx but too slow", func(ctx context.Context) error {
			<-ctx.Done()
			return ctx.Err()
		}, ErrCheckTimeout, ""},
		{"ignores ctx", func(context.Context) error {
			<-release
			return nil
		}, ErrCheckTimeout, ""},
		{"panics", func(context.Context) error { panic("boom") }, nil, "panicked: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Generous for checks that must pass or fail on their own, so a
			// loaded machine cannot turn them into timeouts.
			timeout := 10 * time.Second
			if errors.Is(tt.wantErr, ErrCheckTimeout) {
				timeout = 20 * time.Millisecond
			}
			h := NewHealth(WithCheckTimeout(timeout))
			h.AddReadiness(tt.name, tt.check)
			res := h.Ready(t.Context())
			if len(res) != 1 || res[0].Name != tt.name {
				t.Fatalf("results = %+v", res)
			}
			err := res[0].Err
			switch {
			case tt.wantInErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantInErr) {
					t.Errorf("err = %v, want it to contain %q", err, tt.wantInErr)
				}
			case !errors.Is(err, tt.wantErr):
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestReadinessTimeoutAnswers503(t *testing.T) {
	h := NewHealth(WithCheckTimeout(10 * time.Millisecond))
	h.AddReadiness("slow", func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	})
	rec := httptest.NewRecorder()
	h.ReadinessHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("status = %d, want 503", rec.Code)
	}
	var body readyBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("body: %v", err)
	}
	if !strings.Contains(body.Checks["slow"], ErrCheckTimeout.Error()) {
		t.Errorf("slow check reported as %q, want a timeout", body.Checks["slow"])
	}
}

// TestReadinessChecksRunConcurrently has every check wait for all the others
// to start: run one after another, the first would time out.
func TestReadinessChecksRunConcurrently(t *testing.T) {
	const n = 4
	h := NewHealth(WithCheckTimeout(30 * time.Second))
	var wg sync.WaitGroup
	wg.Add(n)
	allStarted := make(chan struct{})
	go func() { wg.Wait(); close(allStarted) }()
	for i := range n {
		h.AddReadiness(string(rune('a'+i)), func(ctx context.Context) error {
			wg.Done()
			select {
			case <-allStarted:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}
	for _, r := range h.Ready(t.Context()) {
		if r.Err != nil {
			t.Errorf("check %s: %v", r.Name, r.Err)
		}
	}
}

func TestAddReadinessReplaces(t *testing.T) {
	h := NewHealth()
	h.AddReadiness("x", func(context.Context) error { return errors.New("old") })
	h.AddReadiness("x", func(context.Context) error { return nil })
	res := h.Ready(t.Context())
	if len(res) != 1 || res[0].Err != nil {
		t.Errorf("results = %+v, want one passing check", res)
	}
}

func TestNoChecksIsReady(t *testing.T) {
	rec := httptest.NewRecorder()
	NewHealth().ReadinessHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("status = %d, want 200", rec.Code)
	}
}

type fakeMetrics struct{}

func (fakeMetrics) MetricsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "fake_metric 1\n")
	})
}

func TestNewMuxRoutes(t *testing.T) {
	tests := []struct {
		name     string
		health   *Health
		metrics  MetricsSource
		method   string
		path     string
		wantCode int
		wantBody string
	}{
		{"healthz", NewHealth(), nil, http.MethodGet, "/healthz", 200, `"ok"`},
		{"readyz", NewHealth(), nil, http.MethodGet, "/readyz", 200, `"ok"`},
		{"metrics", nil, fakeMetrics{}, http.MethodGet, "/metrics", 200, "fake_metric 1"},
		{"no metrics source", NewHealth(), nil, http.MethodGet, "/metrics", 404, ""},
		{"no health", nil, fakeMetrics{}, http.MethodGet, "/healthz", 404, ""},
		{"post not allowed", NewHealth(), nil, http.MethodPost, "/healthz", 405, ""},
		{"head allowed", NewHealth(), nil, http.MethodHead, "/healthz", 200, ""},
		{"unknown path is a JSON 404", NewHealth(), nil, http.MethodGet, "/nowhere", 404, `{"error":"no route for GET /nowhere"}`},
		{"root is a JSON 404", NewHealth(), nil, http.MethodGet, "/", 404, `{"error":`},
		{"wrong method is a JSON 405", NewHealth(), nil, http.MethodDelete, "/readyz", 405, `{"error":"method DELETE is not allowed on /readyz (allowed: GET, HEAD)"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mux := NewMux(tt.health, tt.metrics)
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
			if rec.Code != tt.wantCode {
				t.Errorf("status = %d, want %d", rec.Code, tt.wantCode)
			}
			if !strings.Contains(rec.Body.String(), tt.wantBody) {
				t.Errorf("body %q lacks %q", rec.Body.String(), tt.wantBody)
			}
			if rec.Code >= 400 && !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
				t.Errorf("error with Content-Type %q, want JSON (the API's error shape)", rec.Header().Get("Content-Type"))
			}
		})
	}
}
