package llm

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"golang.org/x/time/rate"
)

// Client calls one OpenAI-compatible endpoint for chat and embeddings, under
// concurrency and rate limits, with retries, a response cache and metrics.
// It is safe for concurrent use.
type Client struct {
	cfg      Config
	o        options
	api      *openai.Client
	embedAPI *openai.Client // api unless Config.EmbedBaseURL names another server
	hc       *http.Client

	chatGate, embedGate *gate               // adaptive concurrency, shared per endpoint (adaptive.go)
	concGauge           metric.Registration // reports their limits
	rpm, tpm            *rate.Limiter       // nil when unlimited

	ins   instruments
	usage usageCounters

	budget          *budget
	chatEP, embedEP *endpoint
	closed          chan struct{} // closed by Close: ends probes and outage waits
	closedCtx       context.Context
	closeCtx        context.CancelFunc
	closeOnce       sync.Once
	probes          sync.WaitGroup

	dimMu sync.Mutex
	dim   int

	lanesMu sync.Mutex
	lanes   map[string]*embedLane // by stage
}

// New checks cfg, applies defaults and builds a Client.
func New(cfg Config, opts ...Option) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	o := options{
		sleep:            sleepCtx,
		now:              time.Now,
		baseDelay:        defaultBaseDelay,
		maxDelay:         defaultMaxDelay,
		maxRetryAfter:    defaultMaxRetryAfter,
		maxRateLimitWait: defaultMaxRateLimitWait,
		probeMin:         defaultProbeMin,
		probeMax:         defaultProbeMax,
		probeTimeout:     defaultProbeTimeout,
	}
	for _, opt := range opts {
		opt.apply(&o)
	}
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	if o.meterProvider == nil {
		o.meterProvider = otel.GetMeterProvider()
	}

	var hc http.Client
	if o.httpClient != nil {
		hc = *o.httpClient // shallow copy: the caller's client is left untouched
	}
	base := hc.Transport
	if base == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// Keep one idle connection per concurrent request instead of 2.
		t.MaxIdleConnsPerHost = cfg.MaxConcurrency
		base = t
	}
	hc.Transport = recordingTransport{base: base}

	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = cfg.BaseURL
	oc.HTTPClient = &hc

	ins, err := newInstruments(o.meterProvider)
	if err != nil {
		return nil, fmt.Errorf("creating llm metrics: %w", err)
	}
	c := &Client{
		cfg: cfg,
		o:   o,
		api: openai.NewClientWithConfig(oc),
		hc:  &hc,
		ins: ins,
	}
	c.budget = &budget{base: cfg.Timeout}
	c.closed = make(chan struct{})
	// Probes run between calls, for the client's lifetime: no caller's context bounds them.
	c.closedCtx, c.closeCtx = context.WithCancel(context.Background())
	// One server for both is named for both, so an outage of its embeddings does not
	// read as the chat model's.
	c.chatEP = newEndpoint("chat and embeddings", cfg.BaseURL)
	c.embedEP = c.chatEP
	c.embedAPI = c.api
	if cfg.EmbedBaseURL != "" && cfg.EmbedBaseURL != cfg.BaseURL {
		c.chatEP.name = "chat"
		c.embedEP = newEndpoint("embed", cfg.EmbedBaseURL)
		// Same HTTP client, so limits, Retry-After handling and idle
		// connection cleanup cover both servers.
		eoc := oc
		eoc.BaseURL = cfg.EmbedBaseURL
		c.embedAPI = openai.NewClientWithConfig(eoc)
	}
	c.chatGate = acquireGate("chat", cfg.BaseURL, cfg.APIKey, cfg.MaxConcurrency)
	c.embedGate = acquireGate("embed", cmp.Or(cfg.EmbedBaseURL, cfg.BaseURL), cfg.APIKey, cfg.MaxConcurrency)
	if c.concGauge, err = c.observeConcurrency(o.meterProvider); err != nil {
		c.chatGate.release()
		c.embedGate.release()
		return nil, err
	}
	if cfg.RequestsPerMinute > 0 {
		// Burst of one second's worth: smooth pacing rather than a minute's
		// worth of requests at once, which providers punish with 429s.
		c.rpm = rate.NewLimiter(rate.Limit(float64(cfg.RequestsPerMinute)/60), max(1, cfg.RequestsPerMinute/60))
	}
	if cfg.TokensPerMinute > 0 {
		c.tpm = rate.NewLimiter(rate.Limit(float64(cfg.TokensPerMinute)/60), cfg.TokensPerMinute)
	}
	o.logger.Info("llm client configured", "config", cfg.String())
	return c, nil
}

// Config returns the effective configuration (defaults applied).
func (c *Client) Config() Config { return c.cfg }

// String describes the client with its API key masked.
func (c *Client) String() string { return "llm.Client{" + c.cfg.String() + "}" }

// Close releases idle connections, stops probing endpoints that are down and ends
// the waits of calls under WaitOutOutages. In-flight requests are not interrupted
// (cancel their contexts for that). Safe to call more than once.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.closeCtx()
		c.chatGate.release()
		c.embedGate.release()
		_ = c.concGauge.Unregister()
	})
	c.probes.Wait()
	c.hc.CloseIdleConnections()
	return nil
}

// waitRate waits for the request and the estimated tokens of one attempt.
func (c *Client) waitRate(ctx context.Context, estTokens int) error {
	if c.rpm != nil {
		if err := c.rpm.Wait(ctx); err != nil {
			return fmt.Errorf("waiting for request rate limit: %w", err)
		}
	}
	if c.tpm != nil && estTokens > 0 {
		// WaitN fails for n > burst; a single request bigger than a minute's
		// budget can only be sent with the whole budget.
		n := min(estTokens, c.tpm.Burst())
		if err := c.tpm.WaitN(ctx, n); err != nil {
			return fmt.Errorf("waiting for token rate limit: %w", err)
		}
	}
	return nil
}

// reconcileTokens charges the token limiter with what the endpoint reported
// beyond the estimate taken before the call. Over-estimates are not refunded:
// x/time/rate cannot give tokens back, and erring slow is the safe side.
func (c *Client) reconcileTokens(estTokens, actual int) {
	if c.tpm == nil {
		return
	}
	extra := actual - min(estTokens, c.tpm.Burst())
	now := time.Now()
	for extra > 0 {
		n := min(extra, c.tpm.Burst())
		// The reservation is never waited on: it puts the limiter into debt,
		// which delays the next callers instead of this finished one.
		c.tpm.ReserveN(now, n)
		extra -= n
	}
}

// estimateTokens is the usual rough "4 characters per token" estimate.
func estimateTokens(chars int) int { return chars/4 + 1 }

type stageKey struct{}

// ContextWithStage labels calls made with ctx with a pipeline stage
// (extractor, grapher, summarizer, query) for metrics, when the request has
// no Stage of its own (Embed has no request struct).
func ContextWithStage(ctx context.Context, stage string) context.Context {
	return context.WithValue(ctx, stageKey{}, stage)
}

func stageOf(ctx context.Context, explicit string) string {
	if explicit != "" {
		return explicit
	}
	if s, ok := ctx.Value(stageKey{}).(string); ok && s != "" {
		return s
	}
	return "unknown"
}
