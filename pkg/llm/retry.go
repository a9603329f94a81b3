package llm

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// respInfo receives, through the request context, what the recording
// transport saw of the last response: go-openai turns error responses into
// *openai.APIError without their headers, and Retry-After lives there.
type respInfo struct {
	mu         sync.Mutex
	received   bool
	status     int
	retryAfter string
	retryMS    string
}

func (r *respInfo) set(h http.Header, status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.received = true
	r.status = status
	r.retryAfter = h.Get("Retry-After")
	r.retryMS = h.Get("Retry-After-Ms") // sent by OpenAI next to Retry-After
}

func (r *respInfo) snapshot() (received bool, status int, retryAfter, retryMS string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.received, r.status, r.retryAfter, r.retryMS
}

type respInfoKey struct{}

// recordingTransport copies status and Retry-After of every response into
// the respInfo carried by the request context, if any.
type recordingTransport struct{ base http.RoundTripper }

func (t recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err == nil {
		if ri, ok := req.Context().Value(respInfoKey{}).(*respInfo); ok {
			ri.set(resp.Header, resp.StatusCode)
		}
	}
	return resp, err
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the base.
func (t recordingTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// parseRetryAfter reads Retry-After-Ms (milliseconds) or Retry-After (delay
// seconds or an HTTP date, RFC 9110 §10.2.3). ok is false when neither is usable.
func parseRetryAfter(retryAfter, retryMS string, now time.Time) (time.Duration, bool) {
	if ms := strings.TrimSpace(retryMS); ms != "" {
		if f, err := strconv.ParseFloat(ms, 64); err == nil && f >= 0 && f < 1e12 {
			return time.Duration(f * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(retryAfter)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 || secs > 1e9 {
			return 0, false
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d := max(t.Sub(now), 0)
	return d, true
}

// backoff returns the wait before retry number n (1-based): exponential with
// equal jitter, so concurrent clients spread out but never retry at once.
func backoff(n int, base, maxDelay time.Duration) time.Duration {
	d := base
	for i := 1; i < n && d < maxDelay; i++ {
		d *= 2
	}
	if d > maxDelay {
		d = maxDelay
	}
	half := d / 2
	if half <= 0 {
		return d
	}
	return half + rand.N(half+1)
}

// badResponse marks a 2xx answer that cannot be used.
type badResponse struct{ msg string }

func (e badResponse) Error() string { return e.msg }

// limitWaitError: the rate limiters would make the caller wait past its
// deadline, so the request was not sent.
type limitWaitError struct{ err error }

func (e limitWaitError) Error() string { return e.err.Error() }

// stopError ends the retry loop at once with err (e.g. the stream callback failed).
type stopError struct{ err error }

func (e stopError) Error() string { return e.err.Error() }

// classify maps the error of one attempt to a class sentinel and says whether
// another attempt may succeed.
func classify(err error, received bool, status int) (class error, retry bool) {
	if _, ok := errors.AsType[badResponse](err); ok {
		return ErrBadResponse, true
	}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.As(err, &apiErr):
		status = apiErr.HTTPStatusCode
	case errors.As(err, &reqErr):
		status = reqErr.HTTPStatusCode
	}
	if status >= 400 {
		switch {
		case status == http.StatusTooManyRequests:
			return ErrRateLimited, true
		case status == http.StatusRequestTimeout:
			return ErrTimeout, true
		case status >= 500:
			return ErrServer, true
		case status == http.StatusUnauthorized || status == http.StatusForbidden:
			return ErrUnauthorized, false
		case status == http.StatusNotFound:
			return ErrNotFound, false
		default:
			return ErrBadRequest, false
		}
	}
	// The caller's ctx was checked before: a deadline here is the attempt's.
	if errors.Is(err, context.DeadlineExceeded) {
		return ErrTimeout, true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ErrTimeout, true
	}
	var ue *url.Error
	if errors.As(err, &ue) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, net.ErrClosed) {
		return ErrUnavailable, true
	}
	if !received {
		// Nothing was sent: go-openai refused the request itself.
		return ErrBadRequest, false
	}
	if errors.Is(err, io.EOF) {
		return ErrUnavailable, true
	}
	// A 2xx whose body did not decode (HTML from a proxy, truncated JSON).
	return ErrBadResponse, true
}

// callResult is what one logical call (all its attempts) amounted to.
type callResult struct {
	attempts int
	status   int
	took     time.Duration // of the last attempt
}

// callSpec describes one logical call for do.
type callSpec struct {
	kind, stage string
	estTokens   int // for the rate limits
	maxTokens   int // completion tokens the answer may take (chat), for the time budget
	// canRetry, if set, can veto a retry (ChatStream after deltas were delivered).
	canRetry func() bool
}

// do runs fn under the client's limits, retrying per classify. A failure an outage may
// cause is checked against the endpoint (confirmOutage); under WaitOutOutages the call
// then waits for the endpoint and starts again, else it fails matching ErrOutage.
func (c *Client) do(ctx context.Context, cs callSpec, fn func(ctx context.Context) error) (callResult, error) {
	e := c.endpointOf(cs.kind)
	wait, stop := outageWait(ctx)
	for {
		if wait {
			if err := c.awaitEndpoint(ctx, e, stop, cs.kind, cs.stage); err != nil {
				return callResult{}, err
			}
		}
		res, err := c.attempts(ctx, cs, fn)
		if err == nil || ctx.Err() != nil || !c.confirmOutage(ctx, e, err) {
			return res, err
		}
		if ce, ok := errors.AsType[*CallError](err); ok {
			ce.Outage = true
		}
		if !wait || (cs.canRetry != nil && !cs.canRetry()) {
			return res, err
		}
	}
}

// attempts sends the call until it succeeds, fails for good, or runs out of retries.
func (c *Client) attempts(ctx context.Context, cs callSpec, fn func(ctx context.Context) error) (callResult, error) {
	var res callResult
	timedOut := 0
	g := c.gateOf(cs.kind)
	// Retries after a 429 with Retry-After are the endpoint pacing its callers, not
	// failures: they do not count against MaxRetries, only against maxRateLimitWait.
	rateRetries := 0
	var rateWaited time.Duration
	var waited time.Time // the endpoint pause this call already waited out
	for {
		res.attempts++
		info := &respInfo{}
		limit := c.budget.attempt(cs.maxTokens, timedOut)
		start := time.Now()
		err := c.attempt(ctx, g, waited, cs.estTokens, limit, info, fn)
		res.took = time.Since(start)
		if err == nil {
			return res, nil
		}
		if se, ok := errors.AsType[stopError](err); ok {
			return res, se.err
		}
		received, status, ra, raMS := info.snapshot()
		if received {
			res.status = status
		}
		fail := func(class, cause error) (callResult, error) {
			return res, &CallError{Kind: cs.kind, Stage: cs.stage, Attempts: res.attempts, StatusCode: res.status, Class: class, Err: cause}
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return fail(ctxErr, err)
		}
		if lw, ok := errors.AsType[limitWaitError](err); ok {
			res.attempts-- // nothing was sent
			return fail(context.DeadlineExceeded, lw.err)
		}
		class, retry := classify(err, received, status)
		if errors.Is(class, ErrTimeout) {
			// The next attempt gets twice the time, and so do calls starting now.
			timedOut++
			c.budget.timedOut(cs.maxTokens, limit)
		}
		now := c.o.now()
		after, hasAfter := parseRetryAfter(ra, raMS, now)
		if hasAfter && after > c.o.maxRetryAfter {
			return fail(class, err)
		}
		paced := retry && errors.Is(class, ErrRateLimited) && hasAfter && after > 0 && rateWaited+after <= c.o.maxRateLimitWait
		if paced {
			// Every caller of the endpoint waits, not only this one: the others would be
			// refused too.
			rateRetries++
			rateWaited += after
			waited = g.pause(now.Add(after))
		}
		failures := res.attempts - rateRetries
		if !retry || failures > c.cfg.MaxRetries || (cs.canRetry != nil && !cs.canRetry()) {
			return fail(class, err)
		}
		var delay time.Duration
		switch {
		case paced:
			delay = after
		default:
			delay = max(backoff(max(failures, 1), c.o.baseDelay, c.o.maxDelay), after)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < delay {
			// Waiting would outlive the caller: report the real failure now.
			return fail(class, err)
		}
		c.ins.retry(ctx, cs.kind, cs.stage, class)
		c.usage.retries.Add(1)
		c.o.logger.LogAttrs(ctx, slog.LevelWarn, "llm call failed, retrying",
			slog.String("kind", cs.kind), slog.String("stage", cs.stage), slog.Int("attempt", res.attempts),
			slog.Duration("delay", delay), slog.Any("error", err))
		if serr := c.o.sleep(ctx, delay); serr != nil {
			return fail(serr, err)
		}
	}
}

// attempt sends one request: concurrency slot of the endpoint's gate (waiting out a
// pause later than waited), rate limits, the attempt's time budget. The gate's limit
// learns from the outcome.
func (c *Client) attempt(ctx context.Context, g *gate, waited time.Time, estTokens int, limit time.Duration, info *respInfo, fn func(ctx context.Context) error) error {
	s, err := g.acquire(ctx, c.o.now, c.o.sleep, waited)
	if err != nil {
		return err
	}
	o := outcomeIgnored
	defer func() { s.done(o) }()
	if err := c.waitRate(ctx, estTokens); err != nil {
		return limitWaitError{err}
	}
	s.sent() // the latency the limit learns from is the endpoint's, not the throttles'
	actx, cancel := context.WithTimeout(context.WithValue(ctx, respInfoKey{}, info), limit)
	defer cancel()
	err = fn(actx)
	timedOut := err != nil && errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	if timedOut {
		// Make the per-attempt timeout visible in the chain whatever go-openai wrapped.
		if !errors.Is(err, context.DeadlineExceeded) {
			err = errors.Join(err, context.DeadlineExceeded)
		}
	}
	o = outcomeOf(err, timedOut, info)
	return err
}

// outcomeOf says what an attempt tells of the endpoint's load: refused for load (429,
// 503) or timed out is a drop, an answer is a success, anything else (a 400, a caller
// that gave up, a connection refused) says nothing of its load.
func outcomeOf(err error, timedOut bool, info *respInfo) outcome {
	if err == nil {
		return outcomeSuccess
	}
	if timedOut {
		return outcomeDrop
	}
	if received, status, _, _ := info.snapshot(); received &&
		(status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable) {
		return outcomeDrop
	}
	return outcomeIgnored
}
