package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"
)

// DefaultCheckTimeout bounds each readiness check: probes must answer fast,
// and a dependency that takes longer is not ready.
const DefaultCheckTimeout = 2 * time.Second

// ErrCheckTimeout is reported for a readiness check that did not finish in time.
var ErrCheckTimeout = errors.New("readiness check timed out")

// Check reports whether one dependency is usable; nil means ready. It must
// respect ctx, which carries the check timeout.
type Check func(ctx context.Context) error

// Health holds the process's readiness checks and serves the probes.
// It is safe for concurrent use.
type Health struct {
	timeout time.Duration

	mu     sync.RWMutex
	checks []namedCheck
}

type namedCheck struct {
	name  string
	check Check
}

// HealthOption configures NewHealth.
type HealthOption interface{ apply(*healthConfig) }

type healthConfig struct{ timeout time.Duration }

type healthOptionFunc func(*healthConfig)

func (f healthOptionFunc) apply(c *healthConfig) { f(c) }

// WithCheckTimeout sets how long each readiness check may take (default
// DefaultCheckTimeout); values <= 0 keep the default.
func WithCheckTimeout(d time.Duration) HealthOption {
	return healthOptionFunc(func(c *healthConfig) {
		if d > 0 {
			c.timeout = d
		}
	})
}

// NewHealth returns a Health with no checks: ready until one is added.
func NewHealth(opts ...HealthOption) *Health {
	cfg := healthConfig{timeout: DefaultCheckTimeout}
	for _, o := range opts {
		o.apply(&cfg)
	}
	return &Health{timeout: cfg.timeout}
}

// AddReadiness registers a check under name; /readyz fails while it fails.
// Adding a name again replaces the earlier check.
func (h *Health) AddReadiness(name string, c Check) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range h.checks {
		if h.checks[i].name == name {
			h.checks[i].check = c
			return
		}
	}
	h.checks = append(h.checks, namedCheck{name: name, check: c})
}

// CheckResult is the outcome of one readiness check.
type CheckResult struct {
	Name string
	Err  error
}

// Ready runs every readiness check concurrently, each bounded by the check
// timeout, and returns their results in registration order. A check that
// ignores its context is abandoned at the timeout with ErrCheckTimeout.
func (h *Health) Ready(ctx context.Context) []CheckResult {
	h.mu.RLock()
	checks := slices.Clone(h.checks)
	h.mu.RUnlock()

	results := make([]CheckResult, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Go(func() {
			results[i] = CheckResult{Name: c.name, Err: h.run(ctx, c.check)}
		})
	}
	wg.Wait()
	return results
}

func (h *Health) run(ctx context.Context, check Check) error {
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	// Buffered, so a check that returns after we gave up does not block.
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("readiness check panicked: %v", r)
			}
		}()
		done <- check(ctx)
	}()
	select {
	case err := <-done:
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("%w after %s: %w", ErrCheckTimeout, h.timeout, err)
		}
		return err
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("%w after %s", ErrCheckTimeout, h.timeout)
		}
		return fmt.Errorf("readiness check abandoned: %w", ctx.Err())
	}
}

// readyBody is the JSON /readyz answers with.
type readyBody struct {
	Status  string            `json:"status"`
	Checks  map[string]string `json:"checks"`
	Failing []string          `json:"failing,omitempty"`
}

// LivenessHandler answers 200 while the process can serve HTTP at all;
// it checks no dependency, so a slow database never gets the pod killed.
func (h *Health) LivenessHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	})
}

// ReadinessHandler answers 200 when every readiness check passes and 503
// otherwise, with a JSON body naming each check's outcome and the failing ones.
func (h *Health) ReadinessHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := readyBody{Status: "ok", Checks: map[string]string{}}
		for _, res := range h.Ready(r.Context()) {
			if res.Err != nil {
				body.Checks[res.Name] = res.Err.Error()
				body.Failing = append(body.Failing, res.Name)
				continue
			}
			body.Checks[res.Name] = "ok"
		}
		code := http.StatusOK
		if len(body.Failing) > 0 {
			body.Status = "unavailable"
			code = http.StatusServiceUnavailable
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(body)
	})
}
