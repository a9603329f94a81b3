package llm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// MetricConcurrencyLimit is the gauge of an endpoint's adaptive concurrency limit, with
// the attribute kind (chat|embed).
const MetricConcurrencyLimit = "llm.concurrency.limit"

// The adaptive concurrency limit of an endpoint is AIMD, additive increase and
// multiplicative decrease, as TCP Reno's congestion avoidance and the AIMD limit of
// Netflix's concurrency-limits library do it:
//
//   - a request that succeeds, while the limit is in use (at least half of it in flight
//     when it started) and its latency holds (at most latencyTolerance × the average of
//     recent successes), raises the limit by 1/limit: about one more slot per round of
//     limit requests;
//   - a request the endpoint refused for load (429, 503) or that timed out multiplies
//     the limit by decreaseFactor, once per congestion event: only a request sent after
//     the last decrease can cause the next one, so the burst of refusals one overload
//     causes halves the limit once, not once per request;
//   - the limit stays between 1 and Config.MaxConcurrency; it starts at the maximum, so
//     an endpoint that never pushes back is used as before.
//
// A 429 with Retry-After pauses the whole endpoint until then: every caller waits, not
// only the one refused, since the others would be refused too.
const (
	decreaseFactor   = 0.5
	latencyTolerance = 2.0
	latencyWeight    = 0.1 // of a new sample in the average latency
)

// gate bounds the requests in flight to one endpoint (the chat or the embeddings server)
// from the whole process: every Client of the same server, URL and API key, shares it.
type gate struct {
	key string

	mu           sync.Mutex
	max          int       // the largest Config.MaxConcurrency of the clients sharing it
	limit        float64   // the adaptive limit, in [1, max]
	inFlight     int       // requests holding a slot
	pausedUntil  time.Time // no request starts before (a Retry-After)
	lastDecrease time.Time
	avgLatency   time.Duration // of successes; 0 until the first
	changed      chan struct{} // closed and replaced when a slot frees or the limit rises
	refs         int           // clients holding the gate
	drops        int64         // congestion events (decreases) so far
}

// gates is the process-wide registry of gates, by endpoint.
var gates = struct {
	sync.Mutex
	m map[string]*gate
}{m: map[string]*gate{}}

// gateKey names an endpoint: the kind of calls (a server may serve both, with separate
// capacity), its base URL and a digest of the API key (two tenants of a hosted API have
// separate limits).
func gateKey(kind, url, apiKey string) string {
	h := sha256.Sum256([]byte(apiKey))
	return kind + " " + url + " " + hex.EncodeToString(h[:8])
}

// acquireGate returns the shared gate of an endpoint, creating it at maxConc; a client
// configured with a larger maximum raises the gate's.
func acquireGate(kind, url, apiKey string, maxConc int) *gate {
	key := gateKey(kind, url, apiKey)
	gates.Lock()
	defer gates.Unlock()
	g := gates.m[key]
	if g == nil {
		g = &gate{key: key, max: maxConc, limit: float64(maxConc), changed: make(chan struct{})}
		gates.m[key] = g
	}
	g.mu.Lock()
	g.refs++
	if maxConc > g.max {
		g.limit += float64(maxConc - g.max)
		g.max = maxConc
		g.signal()
	}
	g.mu.Unlock()
	return g
}

// release drops a client's hold; the last one removes the gate from the registry.
func (g *gate) release() {
	gates.Lock()
	defer gates.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.refs--; g.refs <= 0 && gates.m[g.key] == g {
		delete(gates.m, g.key)
	}
}

// signal wakes the waiters; the caller holds g.mu.
func (g *gate) signal() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// slot is one request's place in the gate.
type slot struct {
	g       *gate
	started time.Time
	busy    bool // the limit was in use when the request started
}

// acquire waits for a slot: the endpoint not paused (a pause ending at or before
// waited was already waited out by the caller) and fewer requests in flight than the
// limit. Pauses are waited with sleep, so that tests can replace it.
func (g *gate) acquire(ctx context.Context, now func() time.Time, sleep Sleeper, waited time.Time) (*slot, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		g.mu.Lock()
		if pause := g.pausedUntil; pause.After(waited) {
			g.mu.Unlock()
			if d := pause.Sub(now()); d > 0 {
				if err := sleep(ctx, d); err != nil {
					return nil, err
				}
			}
			waited = pause
			continue
		}
		if g.inFlight < int(g.limit) {
			g.inFlight++
			s := &slot{g: g, started: time.Now(), busy: 2*g.inFlight >= int(g.limit)}
			g.mu.Unlock()
			return s, nil
		}
		ch := g.changed
		g.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// sent marks the request sent: its latency counts from now.
func (s *slot) sent() { s.started = time.Now() }

// outcome is what became of a request, for the limit.
type outcome int

const (
	outcomeIgnored outcome = iota // neither load nor success (a 400, a cancelled call)
	outcomeSuccess
	outcomeDrop // refused for load or timed out
)

// done gives the slot back and adapts the limit to the outcome.
func (s *slot) done(o outcome) {
	g := s.g
	took := time.Since(s.started)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inFlight--
	switch o {
	case outcomeSuccess:
		holds := g.avgLatency == 0 || float64(took) <= latencyTolerance*float64(g.avgLatency)
		if g.avgLatency == 0 {
			g.avgLatency = took
		} else {
			g.avgLatency = time.Duration((1-latencyWeight)*float64(g.avgLatency) + latencyWeight*float64(took))
		}
		if s.busy && holds && g.limit < float64(g.max) {
			g.limit = min(float64(g.max), g.limit+1/g.limit)
		}
	case outcomeDrop:
		if !s.started.Before(g.lastDecrease) {
			g.limit = max(1, g.limit*decreaseFactor)
			g.lastDecrease = time.Now()
			g.drops++
		}
	}
	g.signal()
}

// pause stops every request to the endpoint from starting before until (a Retry-After),
// and returns the pause in force.
func (g *gate) pause(until time.Time) time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	if until.After(g.pausedUntil) {
		g.pausedUntil = until
	}
	return g.pausedUntil
}

// Concurrency is the state of an endpoint's adaptive concurrency limit.
type Concurrency struct {
	Limit       int       // requests the endpoint may have in flight now
	Max         int       // the configured maximum (Config.MaxConcurrency)
	InFlight    int       // requests in flight now, from the whole process
	Decreases   int64     // times the limit was cut (429, 503, timeouts)
	PausedUntil time.Time // a Retry-After in force, or zero
}

func (g *gate) state() Concurrency {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := Concurrency{Limit: int(g.limit), Max: g.max, InFlight: g.inFlight, Decreases: g.drops}
	if g.pausedUntil.After(time.Now()) {
		c.PausedUntil = g.pausedUntil
	}
	return c
}

// Concurrency reports the adaptive concurrency limit of the client's endpoint for kind
// ("chat" or "embed"), shared by every client of that endpoint in the process.
func (c *Client) Concurrency(kind string) Concurrency {
	return c.gateOf(kind).state()
}

func (c *Client) gateOf(kind string) *gate {
	if kind == "embed" {
		return c.embedGate
	}
	return c.chatGate
}

// observeConcurrency reports the limits of the client's endpoints as a gauge until the
// returned registration is unregistered (Close).
func (c *Client) observeConcurrency(mp metric.MeterProvider) (metric.Registration, error) {
	m := mp.Meter(meterName)
	g, err := m.Int64ObservableGauge(MetricConcurrencyLimit, metric.WithUnit("{request}"),
		metric.WithDescription("adaptive limit of the LLM requests in flight to the endpoint from the process"))
	if err != nil {
		return nil, fmt.Errorf("creating the concurrency gauge: %w", err)
	}
	return m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		if c.cfg.ChatModel != "" {
			o.ObserveInt64(g, int64(c.chatGate.state().Limit), metric.WithAttributes(attribute.String("kind", "chat")))
		}
		if c.cfg.EmbedModel != "" {
			o.ObserveInt64(g, int64(c.embedGate.state().Limit), metric.WithAttributes(attribute.String("kind", "embed")))
		}
		return nil
	}, g)
}
