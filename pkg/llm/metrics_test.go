package llm_test

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
)

func TestMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(t.Context()) })

	srv := newFake(t)
	srv.Inject(llmtest.ServerError())
	c := newClient(t, srv, nil, llm.WithMeterProvider(mp), llm.WithCache(llm.NewMemoryCache(10)),
		llm.WithSleeper((&sleepRecorder{}).sleep))
	ctx := t.Context()
	for range 2 { // one call with one retry, then a cache hit
		if _, err := c.Chat(ctx, chatReq("hello")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Embed(llm.ContextWithStage(ctx, "summarizer"), []string{"x", "y"}); err != nil {
		t.Fatal(err)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	u := c.Usage()
	tests := []struct {
		metric, kind, stage string
		want                int64
	}{
		{llm.MetricCalls, "chat", "extractor", 1},
		{llm.MetricRetries, "chat", "extractor", 1},
		{llm.MetricCacheHits, "chat", "extractor", 1},
		{llm.MetricCalls, "embed", "summarizer", 1},
		{llm.MetricPromptTokens, "chat", "extractor", -1}, // -1: positive
		{llm.MetricCompletionTokens, "chat", "extractor", -1},
		{llm.MetricPromptTokens, "embed", "summarizer", -1},
	}
	for _, tt := range tests {
		t.Run(tt.metric+"/"+tt.kind, func(t *testing.T) {
			got := sumFor(rm, tt.metric, tt.kind, tt.stage)
			if (tt.want < 0 && got <= 0) || (tt.want >= 0 && got != tt.want) {
				t.Errorf("%s{kind=%s,stage=%s} = %d, want %d", tt.metric, tt.kind, tt.stage, got, tt.want)
			}
		})
	}
	if got := histCount(rm, llm.MetricLatency); got != 2 {
		t.Errorf("latency samples = %d, want 2", got)
	}
	if u.Calls != 2 || u.CacheHits != 1 || u.Retries != 1 || u.PromptTokens == 0 || u.CompletionTokens == 0 {
		t.Errorf("usage = %+v", u)
	}
	if got := sumFor(rm, llm.MetricPromptTokens, "chat", "extractor") + sumFor(rm, llm.MetricPromptTokens, "embed", "summarizer"); got != u.PromptTokens {
		t.Errorf("prompt tokens: metric %d, usage %d", got, u.PromptTokens)
	}
}

func sumFor(rm metricdata.ResourceMetrics, name, kind, stage string) int64 {
	var total int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				continue
			}
			for _, dp := range sum.DataPoints {
				k, _ := dp.Attributes.Value(attribute.Key("kind"))
				s, _ := dp.Attributes.Value(attribute.Key("stage"))
				if k.AsString() == kind && s.AsString() == stage {
					total += dp.Value
				}
			}
		}
	}
	return total
}

func histCount(rm metricdata.ResourceMetrics, name string) uint64 {
	var n uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok && m.Name == name {
				for _, dp := range h.DataPoints {
					n += dp.Count
				}
			}
		}
	}
	return n
}
