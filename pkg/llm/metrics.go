package llm

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Instrument names; every data point carries the attributes stage and kind
// (chat|embed). llm.errors and llm.retries also carry reason (the class
// sentinel's text without the "llm: " prefix).
const (
	MetricCalls            = "llm.calls"             // calls that reached the endpoint (cache misses), retries not counted
	MetricErrors           = "llm.errors"            // calls that failed after all attempts
	MetricRetries          = "llm.retries"           // retries sent
	MetricCacheHits        = "llm.cache.hits"        // answers served from the cache (per text for embeddings)
	MetricPromptTokens     = "llm.tokens.prompt"     // prompt tokens reported by the endpoint
	MetricCompletionTokens = "llm.tokens.completion" // completion tokens reported by the endpoint
	MetricLatency          = "llm.latency"           // seconds per call, retries and waits included
)

const meterName = "github.com/graphrag/graphrag/pkg/llm"

type instruments struct {
	calls, errors, retries, cacheHits, promptTokens, completionTokens metric.Int64Counter
	latency                                                           metric.Float64Histogram
}

func newInstruments(mp metric.MeterProvider) (instruments, error) {
	m := mp.Meter(meterName)
	var ins instruments
	var err error
	counter := func(name, unit, desc string) metric.Int64Counter {
		if err != nil {
			return nil
		}
		var c metric.Int64Counter
		c, err = m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		return c
	}
	ins.calls = counter(MetricCalls, "{call}", "LLM calls that reached the endpoint")
	ins.errors = counter(MetricErrors, "{call}", "LLM calls that failed after all attempts")
	ins.retries = counter(MetricRetries, "{request}", "LLM requests retried")
	ins.cacheHits = counter(MetricCacheHits, "{hit}", "LLM answers served from the cache")
	ins.promptTokens = counter(MetricPromptTokens, "{token}", "prompt tokens")
	ins.completionTokens = counter(MetricCompletionTokens, "{token}", "completion tokens")
	if err != nil {
		return ins, err
	}
	ins.latency, err = m.Float64Histogram(MetricLatency, metric.WithUnit("s"),
		metric.WithDescription("LLM call latency including retries"))
	return ins, err
}

func attrs(kind, stage string) metric.MeasurementOption {
	return metric.WithAttributes(attribute.String("kind", kind), attribute.String("stage", stage))
}

func reason(class error) string {
	s := class.Error()
	if len(s) > 5 && s[:5] == "llm: " {
		return s[5:]
	}
	return s
}

func (ins instruments) retry(ctx context.Context, kind, stage string, class error) {
	traceOf(ctx).retried()
	ins.retries.Add(ctx, 1, metric.WithAttributes(attribute.String("kind", kind),
		attribute.String("stage", stage), attribute.String("reason", reason(class))))
}

// Usage is the cumulative in-process account of a Client since New.
type Usage struct {
	Calls            int64 // calls that reached the endpoint (not counting retries)
	Retries          int64
	Errors           int64
	CacheHits        int64
	PromptTokens     int64
	CompletionTokens int64
}

type usageCounters struct {
	calls, retries, errors, cacheHits, promptTokens, completionTokens atomic.Int64
}

// Usage returns the counters accumulated since New.
func (c *Client) Usage() Usage {
	u := &c.usage
	return Usage{
		Calls: u.calls.Load(), Retries: u.retries.Load(), Errors: u.errors.Load(),
		CacheHits: u.cacheHits.Load(), PromptTokens: u.promptTokens.Load(),
		CompletionTokens: u.completionTokens.Load(),
	}
}

func (c *Client) recordHits(ctx context.Context, kind, stage string, n int) {
	if n == 0 {
		return
	}
	c.usage.cacheHits.Add(int64(n))
	c.ins.cacheHits.Add(ctx, int64(n), attrs(kind, stage))
}

// recordCall accounts one call that reached the endpoint.
func (c *Client) recordCall(ctx context.Context, kind, stage string, start time.Time, prompt, completion int, err error) {
	// Metrics must be recorded even when the caller's ctx is cancelled.
	mctx := context.WithoutCancel(ctx)
	a := attrs(kind, stage)
	traceOf(ctx).sent(prompt, completion)
	c.usage.calls.Add(1)
	c.ins.calls.Add(mctx, 1, a)
	c.ins.latency.Record(mctx, time.Since(start).Seconds(), a)
	if err != nil {
		c.usage.errors.Add(1)
		r := "other"
		if ce, ok := errors.AsType[*CallError](err); ok {
			r = reason(ce.Class)
		}
		c.ins.errors.Add(mctx, 1, metric.WithAttributes(attribute.String("kind", kind),
			attribute.String("stage", stage), attribute.String("reason", r)))
	}
	if prompt > 0 {
		c.usage.promptTokens.Add(int64(prompt))
		c.ins.promptTokens.Add(mctx, int64(prompt), a)
	}
	if completion > 0 {
		c.usage.completionTokens.Add(int64(completion))
		c.ins.completionTokens.Add(mctx, int64(completion), a)
	}
}
