package llm_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
)

// budgetWindow is the fake's rate-limit window in these tests: a "minute" a second
// long, so that a run of several windows takes seconds. Nothing is asserted of wall
// time: the achieved rate is the fake's own count of tokens served per window against
// its budget.
const budgetWindow = time.Second

// load sends n chats from workers goroutines and returns the errors.
func load(t *testing.T, c *llm.Client, workers, n int, prefix string) []error {
	t.Helper()
	var next atomic.Int64
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				if _, err := c.Chat(t.Context(), chatReq(fmt.Sprintf("%s request %04d of the run", prefix, i))); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return errs
}

// With the endpoint limited to N tokens per window, a client with more work than that
// runs at the limit: at least 0.9 N per window over the windows it worked through, and
// no call fails however often the endpoint answers 429. The limit was cut by the 429s,
// and grows back to the maximum once the endpoint's budget is lifted.
func TestRunsAtTheEndpointRateLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("sends about 8 budget windows of requests")
	}
	// A chat here costs about 30 tokens: some 40 requests per window.
	const budget = 1200
	srv := newFake(t, llmtest.WithTokenBudget(budget, budgetWindow))
	c := newClient(t, srv, func(c *llm.Config) { c.MaxConcurrency = 8; c.MaxRetries = 1 })

	if errs := load(t, c, 16, 320, "budgeted"); len(errs) > 0 {
		t.Fatalf("%d calls failed under the rate limit, first: %v", len(errs), errs[0])
	}
	windows := srv.BudgetUsage()
	if len(windows) < 4 {
		t.Fatalf("the run spanned %d budget windows, want at least 4: %+v", len(windows), windows)
	}
	// The first and last windows are partial (the run started and ended in them).
	first, last := windows[0].Index, windows[len(windows)-1].Index
	served, refused := 0, 0
	for _, w := range windows {
		refused += w.Refused
		if w.Index != first && w.Index != last {
			served += w.Tokens
		}
	}
	interior := int(last - first - 1)
	ratio := float64(served) / float64(interior*budget)
	t.Logf("served %d tokens in %d full windows of %d: %.3f of the budget; %d requests refused", served, interior, budget, ratio, refused)
	if ratio < 0.9 {
		t.Errorf("achieved %.3f of the endpoint's budget, want >= 0.9; windows %+v", ratio, windows)
	}
	if refused == 0 {
		t.Fatalf("the endpoint never refused a request: the test did not reach its limit")
	}
	st := c.Concurrency("chat")
	if st.Decreases == 0 {
		t.Errorf("concurrency %+v: the limit was never cut by the 429s", st)
	}

	// The endpoint recovers: its budget is lifted, and the limit grows back.
	srv.SetBudget(0, 0)
	cut := st.Limit
	if errs := load(t, c, 16, 400, "recovered"); len(errs) > 0 {
		t.Fatalf("%d calls failed after the endpoint recovered, first: %v", len(errs), errs[0])
	}
	if st := c.Concurrency("chat"); st.Limit != st.Max {
		t.Errorf("concurrency %+v after the endpoint recovered (limit %d before), want the limit back at the maximum", st, cut)
	}
}

// A 429 with Retry-After pauses the endpoint for every caller, and such 429s do not
// use up the call's retries: a call refused more often than MaxRetries still succeeds.
func TestRateLimitRetriesDoNotCountAsFailures(t *testing.T) {
	srv := newFake(t)
	for range 5 {
		srv.Inject(llmtest.RateLimited("2"))
	}
	rec := &sleepRecorder{}
	c := newClient(t, srv, func(c *llm.Config) { c.MaxRetries = 1 }, llm.WithSleeper(rec.sleep))
	if _, err := c.Chat(t.Context(), chatReq("x")); err != nil {
		t.Fatalf("Chat after 5 paced 429s with MaxRetries 1: %v", err)
	}
	if got := srv.ChatCalls(); got != 6 {
		t.Errorf("fake saw %d calls, want 6", got)
	}
	for _, d := range rec.recorded() {
		if d != 2*time.Second {
			t.Errorf("waits %v, want each the Retry-After of 2s", rec.recorded())
			break
		}
	}

	// Their total wait is bounded: past it the call fails with ErrRateLimited, an
	// error of a kind the pipeline keeps the message for.
	srv2 := newFake(t)
	for range 10 {
		srv2.Inject(llmtest.RateLimited("60"))
	}
	c2 := newClient(t, srv2, nil, llm.WithSleeper((&sleepRecorder{}).sleep), llm.WithMaxRateLimitWait(3*time.Minute))
	_, err := c2.Chat(t.Context(), chatReq("x"))
	if !errors.Is(err, llm.ErrRateLimited) {
		t.Fatalf("err = %v, want ErrRateLimited", err)
	}
	// 3 waits of 60s fit in 3 minutes; the 429s after count as failures: 1 + MaxRetries.
	if got := srv2.ChatCalls(); got != 7 {
		t.Errorf("fake saw %d calls, want 7", got)
	}
}

// The limit of each endpoint is a gauge, by kind, that follows its cuts.
func TestConcurrencyGauge(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(t.Context()) })
	srv := newFake(t)
	srv.Inject(llmtest.Status(503, `{"error":{"message":"overloaded"}}`))
	c := newClient(t, srv, func(c *llm.Config) { c.MaxConcurrency = 6 }, llm.WithMeterProvider(mp),
		llm.WithSleeper((&sleepRecorder{}).sleep))
	if _, err := c.Chat(t.Context(), chatReq("x")); err != nil {
		t.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if g, ok := m.Data.(metricdata.Gauge[int64]); ok && m.Name == llm.MetricConcurrencyLimit {
				for _, dp := range g.DataPoints {
					kind, _ := dp.Attributes.Value("kind")
					got[kind.AsString()] = dp.Value
				}
			}
		}
	}
	// The 503 halved the chat limit; embeddings, another endpoint, kept theirs.
	if got["chat"] != 3 || got["embed"] != 6 {
		t.Errorf("%s = %v, want chat 3 and embed 6", llm.MetricConcurrencyLimit, got)
	}
}
