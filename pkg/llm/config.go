package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/metric"
)

// Config holds what differs between deployments. Zero values take the
// defaults documented per field.
type Config struct {
	BaseURL string // e.g. https://api.openai.com/v1 or http://localhost:8000/v1; required
	// EmbedBaseURL, when set, is where embeddings requests go instead of
	// BaseURL: many deployments serve chat and embeddings from two servers
	// (e.g. llama.cpp or vLLM for chat, a separate embeddings server). The
	// same APIKey is sent to both.
	EmbedBaseURL string
	APIKey       string // may be empty for local servers; masked by String
	ChatModel    string // required for Chat
	EmbedModel   string // required for Embed

	// Timeout bounds one attempt (for ChatStream: the whole stream). Default 60s. It is
	// the least a chat attempt gets: the budget grows with the completion speed
	// observed and doubles after an attempt that timed out, up to 16 × Timeout (see
	// budget.go).
	Timeout time.Duration
	// MaxConcurrency bounds the requests in flight to each endpoint (chat, embeddings)
	// from the whole process: every client of one endpoint shares an adaptive limit
	// (adaptive.go) that starts here, is cut on 429, 503 and timeouts and grows back
	// while the endpoint answers, never above this. Default 8.
	MaxConcurrency int
	// RequestsPerMinute and TokensPerMinute throttle requests; 0 means unlimited.
	RequestsPerMinute int
	TokensPerMinute   int
	// MaxRetries is the number of retries after the first attempt for 429, 5xx,
	// timeouts, connection errors and malformed answers. Default 3; negative
	// means no retry.
	MaxRetries int
	// JSONRetries is how many extra calls ChatJSON makes on invalid JSON. Default 2;
	// negative means none.
	JSONRetries int
	// EmbedBatchSize is the number of texts per embeddings request. Default 64.
	EmbedBatchSize int
}

const (
	defaultTimeout        = 60 * time.Second
	defaultMaxConcurrency = 8
	defaultMaxRetries     = 3
	defaultJSONRetries    = 2
	defaultEmbedBatch     = 64
	defaultBaseDelay      = 500 * time.Millisecond
	defaultMaxDelay       = 30 * time.Second
	// Longer Retry-After values are not waited for: the call fails with
	// ErrRateLimited so the caller (e.g. a JetStream redelivery) can decide.
	defaultMaxRetryAfter = 2 * time.Minute
	// A call waits out 429s with Retry-After (which do not count against MaxRetries)
	// for at most this long in all.
	defaultMaxRateLimitWait = 10 * time.Minute
)

// withDefaults gives the zero fields their documented default, and the negative
// retry counts their meaning (none).
func (c Config) withDefaults() Config {
	if c.Timeout == 0 {
		c.Timeout = defaultTimeout
	}
	if c.MaxConcurrency == 0 {
		c.MaxConcurrency = defaultMaxConcurrency
	}
	switch {
	case c.MaxRetries == 0:
		c.MaxRetries = defaultMaxRetries
	case c.MaxRetries < 0:
		c.MaxRetries = 0
	}
	switch {
	case c.JSONRetries == 0:
		c.JSONRetries = defaultJSONRetries
	case c.JSONRetries < 0:
		c.JSONRetries = 0
	}
	if c.EmbedBatchSize == 0 {
		c.EmbedBatchSize = defaultEmbedBatch
	}
	return c
}

// Validate reports every invalid field (wrapping ErrInvalidConfig): a missing BaseURL or
// model, or a negative limit, timeout or batch size, which New would not run with.
func (c Config) Validate() error {
	var errs []error
	if c.BaseURL == "" {
		errs = append(errs, fmt.Errorf("%w: BaseURL is required", ErrInvalidConfig))
	}
	if c.ChatModel == "" && c.EmbedModel == "" {
		errs = append(errs, fmt.Errorf("%w: at least one of ChatModel and EmbedModel is required", ErrInvalidConfig))
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"RequestsPerMinute", int64(c.RequestsPerMinute)}, {"TokensPerMinute", int64(c.TokensPerMinute)},
		{"MaxConcurrency", int64(c.MaxConcurrency)}, {"EmbedBatchSize", int64(c.EmbedBatchSize)},
	} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("%w: %s must not be negative, got %d", ErrInvalidConfig, f.name, f.v))
		}
	}
	if c.Timeout < 0 {
		errs = append(errs, fmt.Errorf("%w: Timeout must not be negative, got %s", ErrInvalidConfig, c.Timeout))
	}
	return errors.Join(errs...)
}

// String prints the effective config with the API key masked, so it can be
// logged once at start.
func (c Config) String() string {
	return fmt.Sprintf("llm.Config{BaseURL:%s EmbedBaseURL:%s APIKey:%s ChatModel:%s EmbedModel:%s Timeout:%s MaxConcurrency:%d RequestsPerMinute:%d TokensPerMinute:%d MaxRetries:%d JSONRetries:%d EmbedBatchSize:%d}",
		c.BaseURL, c.EmbedBaseURL, maskKey(c.APIKey), c.ChatModel, c.EmbedModel, c.Timeout, c.MaxConcurrency,
		c.RequestsPerMinute, c.TokensPerMinute, c.MaxRetries, c.JSONRetries, c.EmbedBatchSize)
}

// maskKey keeps only the last four characters of long keys: enough to tell
// two keys apart in logs, not enough to use one.
func maskKey(k string) string {
	switch {
	case k == "":
		return `""`
	case len(k) <= 12:
		return "****"
	default:
		return "****" + k[len(k)-4:]
	}
}

// Sleeper waits for d or until ctx is done. It is injectable so tests can
// record backoff delays instead of sleeping.
type Sleeper func(ctx context.Context, d time.Duration) error

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

type options struct {
	cache         Cache
	meterProvider metric.MeterProvider
	logger        *slog.Logger
	httpClient    *http.Client
	sleep         Sleeper
	now           func() time.Time
	baseDelay     time.Duration
	maxDelay      time.Duration
	maxRetryAfter time.Duration
	// maxRateLimitWait bounds the Retry-After waits of one call.
	maxRateLimitWait time.Duration
	probeMin         time.Duration
	probeMax         time.Duration
	probeTimeout     time.Duration
}

// Option configures a Client.
type Option interface{ apply(*options) }

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// WithCache enables the content-addressed response cache (chat and embeddings).
func WithCache(c Cache) Option { return optionFunc(func(o *options) { o.cache = c }) }

// WithMeterProvider sets where metrics go; default is the global provider.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(o *options) { o.meterProvider = mp })
}

// WithLogger sets the logger for retries and cache failures; default discards.
func WithLogger(l *slog.Logger) Option { return optionFunc(func(o *options) { o.logger = l }) }

// WithHTTPClient sets the HTTP client. Its transport is wrapped (not replaced)
// to read Retry-After headers. Its Timeout, if any, still applies.
func WithHTTPClient(hc *http.Client) Option {
	return optionFunc(func(o *options) { o.httpClient = hc })
}

// WithSleeper replaces the function used to wait between retries.
func WithSleeper(s Sleeper) Option { return optionFunc(func(o *options) { o.sleep = s }) }

// WithClock replaces time.Now, used to interpret Retry-After HTTP dates.
func WithClock(now func() time.Time) Option { return optionFunc(func(o *options) { o.now = now }) }

// WithBackoff sets the exponential backoff: the first retry waits about base,
// each next one twice as long, never more than maxDelay (before Retry-After).
func WithBackoff(base, maxDelay time.Duration) Option {
	return optionFunc(func(o *options) {
		if base > 0 {
			o.baseDelay = base
		}
		if maxDelay > 0 {
			o.maxDelay = maxDelay
		}
	})
}

// WithMaxRetryAfter sets the longest Retry-After the client waits for; a
// longer one ends the call with ErrRateLimited. Default 2 minutes.
func WithMaxRetryAfter(d time.Duration) Option {
	return optionFunc(func(o *options) { o.maxRetryAfter = d })
}

// WithMaxRateLimitWait sets how long one call waits out 429 answers with Retry-After in
// all: they are the endpoint pacing its callers, so they do not count against
// Config.MaxRetries, only against this. Default 10 minutes.
func WithMaxRateLimitWait(d time.Duration) Option {
	return optionFunc(func(o *options) {
		if d > 0 {
			o.maxRateLimitWait = d
		}
	})
}
