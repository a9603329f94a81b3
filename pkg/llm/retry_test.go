package llm_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
)

func TestRetryAfterHonoured(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name       string
		retryAfter string
		minDelay   time.Duration
		maxDelay   time.Duration
	}{
		{name: "seconds", retryAfter: "7", minDelay: 7 * time.Second, maxDelay: 7 * time.Second},
		{name: "http date", retryAfter: now.Add(12 * time.Second).Format(http.TimeFormat), minDelay: 12 * time.Second, maxDelay: 12 * time.Second},
		{name: "date in the past uses backoff", retryAfter: now.Add(-time.Hour).Format(http.TimeFormat), minDelay: 50 * time.Millisecond, maxDelay: 100 * time.Millisecond},
		{name: "no header uses backoff", retryAfter: "", minDelay: 50 * time.Millisecond, maxDelay: 100 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t)
			srv.Inject(llmtest.RateLimited(tt.retryAfter))
			rec := &sleepRecorder{}
			c := newClient(t, srv, nil, llm.WithSleeper(rec.sleep), llm.WithClock(func() time.Time { return now }),
				llm.WithBackoff(100*time.Millisecond, time.Second))
			resp, err := c.Chat(t.Context(), chatReq("hello"))
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			if resp.Content != "echo: hello" {
				t.Errorf("content = %q", resp.Content)
			}
			if got := srv.ChatCalls(); got != 2 {
				t.Errorf("fake saw %d calls, want 2", got)
			}
			d := rec.recorded()
			if len(d) != 1 {
				t.Fatalf("recorded delays %v, want one", d)
			}
			if d[0] < tt.minDelay || d[0] > tt.maxDelay {
				t.Errorf("delay = %v, want in [%v, %v]", d[0], tt.minDelay, tt.maxDelay)
			}
			if u := c.Usage(); u.Retries != 1 || u.Calls != 1 || u.Errors != 0 {
				t.Errorf("usage = %+v", u)
			}
		})
	}
}

// The real sleeper waits at least Retry-After: the gap the fake observes
// between the two attempts is a lower bound, which cannot flake.
func TestRetryAfterObservedGap(t *testing.T) {
	srv := newFake(t, llmtest.WithRequestLog())
	srv.Inject(llmtest.RateLimited("1"))
	c := newClient(t, srv, nil)
	if _, err := c.Chat(t.Context(), chatReq("gap")); err != nil {
		t.Fatalf("Chat: %v", err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("fake saw %d requests, want 2", len(reqs))
	}
	if gap := reqs[1].Time.Sub(reqs[0].Time); gap < time.Second {
		t.Errorf("gap between attempts = %v, want >= 1s (Retry-After)", gap)
	}
}

func TestRetryThenSuccess(t *testing.T) {
	tests := []struct {
		name   string
		faults []llmtest.Fault
	}{
		{name: "500 twice", faults: []llmtest.Fault{llmtest.ServerError(), llmtest.ServerError()}},
		{name: "503", faults: []llmtest.Fault{llmtest.Status(503, "busy")}},
		{name: "garbage body", faults: []llmtest.Fault{llmtest.Garbage()}},
		{name: "truncated body", faults: []llmtest.Fault{llmtest.CutStream()}},
		{name: "408", faults: []llmtest.Fault{llmtest.Status(408, `{"error":{"message":"timeout"}}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t)
			srv.Inject(tt.faults...)
			rec := &sleepRecorder{}
			c := newClient(t, srv, nil, llm.WithSleeper(rec.sleep))
			if _, err := c.Chat(t.Context(), chatReq("x")); err != nil {
				t.Fatalf("Chat: %v", err)
			}
			want := int64(len(tt.faults) + 1)
			if got := srv.ChatCalls(); got != want {
				t.Errorf("fake saw %d calls, want %d", got, want)
			}
			if got := len(rec.recorded()); got != len(tt.faults) {
				t.Errorf("%d backoff waits, want %d", got, len(tt.faults))
			}
		})
	}
}

func TestNoRetryOnClientErrors(t *testing.T) {
	tests := []struct {
		status int
		want   error
	}{
		{400, llm.ErrBadRequest},
		{401, llm.ErrUnauthorized},
		{403, llm.ErrUnauthorized},
		{404, llm.ErrNotFound},
		{422, llm.ErrBadRequest},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			srv := newFake(t)
			srv.Inject(llmtest.Status(tt.status, `{"error":{"message":"nope","type":"invalid_request_error"}}`))
			rec := &sleepRecorder{}
			c := newClient(t, srv, nil, llm.WithSleeper(rec.sleep))
			_, err := c.Chat(t.Context(), chatReq("x"))
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			var apiErr *openai.APIError
			if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != tt.status {
				t.Errorf("want the go-openai APIError with status %d in the chain, got %v", tt.status, err)
			}
			var ce *llm.CallError
			if !errors.As(err, &ce) || ce.Attempts != 1 || ce.StatusCode != tt.status || ce.Stage != "extractor" {
				t.Errorf("CallError = %+v", ce)
			}
			if got := srv.ChatCalls(); got != 1 {
				t.Errorf("fake saw %d calls, want 1", got)
			}
			if len(rec.recorded()) != 0 {
				t.Errorf("slept %v before a non-retryable error", rec.recorded())
			}
			if u := c.Usage(); u.Errors != 1 || u.Retries != 0 {
				t.Errorf("usage = %+v", u)
			}
		})
	}
}

func TestRetriesExhausted(t *testing.T) {
	tests := []struct {
		name  string
		fault llmtest.Fault
		want  error
	}{
		{name: "429", fault: llmtest.RateLimited(""), want: llm.ErrRateLimited},
		{name: "500", fault: llmtest.ServerError(), want: llm.ErrServer},
		{name: "garbage", fault: llmtest.Garbage(), want: llm.ErrBadResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t)
			for range 10 {
				srv.Inject(tt.fault)
			}
			rec := &sleepRecorder{}
			c := newClient(t, srv, func(c *llm.Config) { c.MaxRetries = 2 }, llm.WithSleeper(rec.sleep))
			_, err := c.Chat(t.Context(), chatReq("x"))
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			var ce *llm.CallError
			if !errors.As(err, &ce) || ce.Attempts != 3 {
				t.Errorf("CallError = %+v, want 3 attempts", ce)
			}
			if got := srv.ChatCalls(); got != 3 {
				t.Errorf("fake saw %d calls, want 3", got)
			}
		})
	}
}

func TestRetryAfterTooLongFailsAtOnce(t *testing.T) {
	srv := newFake(t)
	srv.Inject(llmtest.RateLimited("3600"))
	rec := &sleepRecorder{}
	c := newClient(t, srv, nil, llm.WithSleeper(rec.sleep), llm.WithMaxRetryAfter(time.Minute))
	_, err := c.Chat(t.Context(), chatReq("x"))
	if !errors.Is(err, llm.ErrRateLimited) {
		t.Fatalf("err = %v, want ErrRateLimited", err)
	}
	if srv.ChatCalls() != 1 || len(rec.recorded()) != 0 {
		t.Errorf("calls %d, sleeps %v: want 1 call and no wait", srv.ChatCalls(), rec.recorded())
	}
}

func TestRetryWouldOutliveDeadline(t *testing.T) {
	srv := newFake(t)
	srv.Inject(llmtest.RateLimited("30"))
	rec := &sleepRecorder{}
	c := newClient(t, srv, nil, llm.WithSleeper(rec.sleep))
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := c.Chat(ctx, chatReq("x"))
	if !errors.Is(err, llm.ErrRateLimited) {
		t.Fatalf("err = %v, want ErrRateLimited (not a context error)", err)
	}
	if len(rec.recorded()) != 0 {
		t.Errorf("waited %v although the deadline is nearer", rec.recorded())
	}
}

func TestTimeout(t *testing.T) {
	tests := []struct {
		name       string
		maxRetries int
		wantErr    error
		wantCalls  int64
	}{
		{name: "no retry", maxRetries: -1, wantErr: llm.ErrTimeout, wantCalls: 1},
		{name: "retried then ok", maxRetries: 1, wantErr: nil, wantCalls: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t)
			srv.Inject(llmtest.Hang())
			rec := &sleepRecorder{}
			c := newClient(t, srv, func(c *llm.Config) {
				c.Timeout = 500 * time.Millisecond // roomy: the retried attempt must finish within it under -race
				c.MaxRetries = tt.maxRetries
			}, llm.WithSleeper(rec.sleep))
			_, err := c.Chat(t.Context(), chatReq("x"))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("want context.DeadlineExceeded in the chain: %v", err)
			}
			if got := srv.ChatCalls(); got != tt.wantCalls {
				t.Errorf("fake saw %d calls, want %d", got, tt.wantCalls)
			}
		})
	}
}

func TestCallerCancelStopsRetries(t *testing.T) {
	srv := newFake(t)
	srv.Inject(llmtest.Hang(), llmtest.Hang())
	rec := &sleepRecorder{}
	c := newClient(t, srv, nil, llm.WithSleeper(rec.sleep))
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		for srv.ChatCalls() == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	_, err := c.Chat(ctx, chatReq("x"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if srv.ChatCalls() != 1 || len(rec.recorded()) != 0 {
		t.Errorf("calls %d, sleeps %v after cancel", srv.ChatCalls(), rec.recorded())
	}
}

func TestUnreachableEndpoint(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // nothing listens there now: connection refused
	rec := &sleepRecorder{}
	c, err := llm.New(llm.Config{BaseURL: "http://" + addr + "/v1", ChatModel: "m", MaxRetries: 1},
		llm.WithSleeper(rec.sleep))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Chat(t.Context(), chatReq("x"))
	if !errors.Is(err, llm.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	if len(rec.recorded()) != 1 {
		t.Errorf("want one retry of a connection error, slept %v", rec.recorded())
	}
}

// A caller's own HTTP client keeps working, and Retry-After is still seen.
func TestWithHTTPClientKeepsRetryAfter(t *testing.T) {
	srv := newFake(t)
	srv.Inject(llmtest.RateLimited("4"))
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	rec := &sleepRecorder{}
	c := newClient(t, srv, nil, llm.WithHTTPClient(&http.Client{Transport: tr}), llm.WithSleeper(rec.sleep))
	if _, err := c.Chat(t.Context(), chatReq("x")); err != nil {
		t.Fatal(err)
	}
	if d := rec.recorded(); len(d) != 1 || d[0] != 4*time.Second {
		t.Errorf("delays = %v, want [4s]", d)
	}
}
