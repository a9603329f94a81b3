package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// Probe timings: how often a down endpoint is asked whether it answers again (doubling
// from the first to the last), and how long one probe may take.
const (
	defaultProbeMin     = time.Second
	defaultProbeMax     = 15 * time.Second
	defaultProbeTimeout = 5 * time.Second
)

// endpoint is what the client knows of the health of one server (chat or embeddings).
// It goes down when a call failed after its retries with a class an outage causes and a
// probe of the server got no answer; a probe loop then asks it again until it answers.
type endpoint struct {
	name string // chat, embed, or "chat and embeddings" for one server serving both
	url  string // base URL, ending in /v1 or similar

	mu    sync.Mutex
	down  bool
	since time.Time
	cause string
	back  chan struct{} // closed when the endpoint answers again
}

func newEndpoint(name, url string) *endpoint {
	return &endpoint{name: name, url: url}
}

// state reports whether the endpoint is down, and the channel closed when it is back.
func (e *endpoint) state() (bool, <-chan struct{}) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.down, e.back
}

// markDown records the outage; it reports false when the endpoint was already down.
func (e *endpoint) markDown(cause error) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.down {
		return false
	}
	e.down, e.since, e.cause, e.back = true, time.Now(), cause.Error(), make(chan struct{})
	return true
}

func (e *endpoint) markUp() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.down {
		e.down = false
		close(e.back)
	}
}

// outageKey marks a context whose calls wait out outages; its value is the channel
// that ends the waiting early (nil: only the context does).
type outageKey struct{}

// WaitOutOutages returns a context whose calls wait while the endpoint is down instead
// of failing: a call that fails after its retries with a class an outage causes
// (unreachable, 5xx, timeout) probes the endpoint, and when the probe gets no answer
// either, the call waits until a probe does, then starts again with fresh retries. Other
// calls made meanwhile under such a context wait before sending anything. The wait ends
// with the context, when stop is closed (a service shutting down), or when the client is
// closed; the call then fails with an error matching ErrOutage.
//
// Pipeline stages use it so that an outage pauses their work instead of failing every
// message; a request path (a query) does not, and fails fast with ErrOutage.
func WaitOutOutages(ctx context.Context, stop <-chan struct{}) context.Context {
	return context.WithValue(ctx, outageKey{}, stop)
}

func outageWait(ctx context.Context) (wait bool, stop <-chan struct{}) {
	stop, wait = ctx.Value(outageKey{}).(<-chan struct{})
	return wait, stop
}

// Outage reports whether an endpoint of the client is down: since when, and why (the
// endpoint and the error of the call that found it down).
func (c *Client) Outage() (down bool, since time.Time, reason string) {
	for _, e := range c.endpoints() {
		e.mu.Lock()
		if e.down && (!down || e.since.Before(since)) {
			down, since, reason = true, e.since, fmt.Sprintf("%s endpoint %s: %s", e.name, e.url, e.cause)
		}
		e.mu.Unlock()
	}
	return down, since, reason
}

func (c *Client) endpoints() []*endpoint {
	if c.embedEP == c.chatEP {
		return []*endpoint{c.chatEP}
	}
	return []*endpoint{c.chatEP, c.embedEP}
}

func (c *Client) endpointOf(kind string) *endpoint {
	if kind == "embed" {
		return c.embedEP
	}
	return c.chatEP
}

// outageClass reports whether a call's failure could be the endpoint being down.
func outageClass(err error) bool {
	var ce *CallError
	if !errors.As(err, &ce) {
		return false
	}
	return errors.Is(ce.Class, ErrUnavailable) || errors.Is(ce.Class, ErrServer) || errors.Is(ce.Class, ErrTimeout)
}

// confirmOutage decides whether a failed call met an outage: the endpoint is known to
// be down, or a probe now gets no answer (then it is marked down and probed until it
// answers). A server that answers its probe is up, and the call's error is its own (a
// prompt that makes it fail, a model too slow for the budget).
func (c *Client) confirmOutage(ctx context.Context, e *endpoint, callErr error) bool {
	if down, _ := e.state(); down {
		return true
	}
	if !outageClass(callErr) {
		return false
	}
	if err := c.probe(ctx, e); err == nil {
		return false
	} else if ctx.Err() != nil {
		return false // the caller gave up; the probe proves nothing
	}
	if e.markDown(callErr) {
		c.o.logger.LogAttrs(ctx, slog.LevelWarn, "llm endpoint unavailable; calls wait until it answers",
			slog.String("endpoint", e.name), slog.String("url", e.url), slog.Any("error", callErr))
		c.probes.Add(1)
		go c.probeUntilUp(e)
	}
	return true
}

// probeUntilUp asks the endpoint again, at growing intervals, until it answers or the
// client is closed.
func (c *Client) probeUntilUp(e *endpoint) {
	defer c.probes.Done()
	delay := c.o.probeMin
	for {
		t := time.NewTimer(delay)
		select {
		case <-c.closed:
			t.Stop()
			return
		case <-t.C:
		}
		if err := c.probe(c.closedCtx, e); err == nil {
			e.markUp()
			c.o.logger.Info("llm endpoint answers again; calls resume", "endpoint", e.name, "url", e.url)
			return
		}
		delay = min(2*delay, c.o.probeMax)
	}
}

// probe asks the endpoint for its models: any answer below 500 means a server is there
// and serving (a 401 or 404 is a configuration matter, not an outage); no answer, or
// 5xx from a proxy in front of a server that is down, means it is not.
func (c *Client) probe(ctx context.Context, e *endpoint) error {
	ctx, cancel := context.WithTimeout(ctx, c.o.probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url+"/models", nil)
	if err != nil {
		return fmt.Errorf("probing %s: %w", e.url, err)
	}
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("probing %s: %w", e.url, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode >= 500 {
		return fmt.Errorf("probing %s: status %d", e.url, resp.StatusCode)
	}
	return nil
}

// awaitEndpoint waits while the endpoint is down, for a call under WaitOutOutages.
func (c *Client) awaitEndpoint(ctx context.Context, e *endpoint, stop <-chan struct{}, kind, stage string) error {
	down, back := e.state()
	if !down {
		return nil
	}
	stopped := func(cause error) error {
		return &CallError{Kind: kind, Stage: stage, Class: ErrUnavailable, Err: cause, Outage: true}
	}
	select {
	case <-back:
		return nil
	case <-ctx.Done():
		return &CallError{Kind: kind, Stage: stage, Class: ctx.Err(), Err: errors.New("waiting for the endpoint to answer"), Outage: true}
	case <-stop:
		return stopped(errors.New("stopped waiting for the endpoint to answer"))
	case <-c.closed:
		return stopped(errors.New("client closed while waiting for the endpoint to answer"))
	}
}

// WithProbeInterval sets how often a down endpoint is probed: first after min, then
// twice as long each time up to max. Default 1s to 15s.
func WithProbeInterval(minDelay, maxDelay time.Duration) Option {
	return optionFunc(func(o *options) {
		if minDelay > 0 {
			o.probeMin = minDelay
		}
		if maxDelay >= o.probeMin {
			o.probeMax = maxDelay
		}
	})
}
