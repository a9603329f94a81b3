package summarizer

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// Reports are counted by kind, and an extractive report written while a model is
// configured is a fallback; both counters start at zero (issue 12, item 10).
func TestReportMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	otel.SetMeterProvider(mp) // the package's instruments are created on the global provider
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	ctx := t.Context()
	instruments().metrics.Zero(ctx) // as New does
	want := counts(t, reader)
	if _, ok := want[MetricFallbacks+" reason=invalid_output"]; !ok {
		t.Fatalf("no zero fallback series: %v", want)
	}
	recordReport(ctx, true, "llm/qwen")
	recordReport(ctx, true, "extractive/v1 (model output invalid)")
	recordReport(ctx, false, "extractive/v1")
	want[MetricReports+" kind=llm"]++
	want[MetricReports+" kind=extractive"] += 2
	want[MetricFallbacks+" reason=invalid_output"]++
	got := counts(t, reader)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d (all %v)", k, got[k], v, got)
		}
	}
}

func counts(t *testing.T, reader *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				continue
			}
			for _, dp := range sum.DataPoints {
				for _, kv := range dp.Attributes.ToSlice() {
					out[m.Name+" "+string(kv.Key)+"="+kv.Value.String()] += dp.Value
				}
			}
		}
	}
	return out
}
