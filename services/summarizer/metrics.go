package summarizer

import (
	"context"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/graphrag/graphrag/pkg/telemetry"
)

// Metric names (Prometheus: graphrag_summarizer_reports_total, ..._fallbacks_total).
const (
	// MetricReports counts the reports written, by how: "llm" or "extractive".
	MetricReports = "graphrag.summarizer.reports"
	// MetricFallbacks counts the extractive reports written in place of a model's, by
	// reason ("invalid_output": the model gave no valid report after its retries).
	MetricFallbacks = "graphrag.summarizer.fallbacks"
)

type reportInstruments struct {
	metrics            *telemetry.Metrics
	reports, fallbacks metric.Int64Counter
}

// instruments are created once, from the global meter provider (telemetry.Metrics); New
// sets their series at zero (Zero), so that a rate or an alert sees the first report
// and the first fallback.
var instruments = sync.OnceValue(func() reportInstruments {
	m := telemetry.NewMetrics("github.com/graphrag/graphrag/services/summarizer")
	kinds := make([]attribute.Set, 0, 3)
	for _, kind := range []string{"llm", "extractive", "copy"} {
		kinds = append(kinds, attribute.NewSet(attribute.String("kind", kind)))
	}
	return reportInstruments{
		metrics: m,
		reports: m.Counter(MetricReports, "{report}", "Community reports written, by method kind (llm, extractive, or copy: a child's report reused).", kinds...),
		fallbacks: m.Counter(MetricFallbacks, "{report}", "Extractive reports written because the model gave none, by reason.",
			attribute.NewSet(attribute.String("reason", "invalid_output"))),
	}
})

// recordReport counts a written report from its method ("llm/<model>", "extractive/v1",
// "extractive/v1 (model output invalid)"): a report written without the model while a
// model is configured is a fallback.
func recordReport(ctx context.Context, withModel bool, method string) {
	in := instruments()
	kind, _, _ := strings.Cut(method, "/")
	in.reports.Add(ctx, 1, metric.WithAttributes(attribute.String("kind", kind)))
	if withModel && kind == "extractive" {
		reason := "invalid_output"
		if _, r, ok := strings.Cut(method, "("); ok && !strings.Contains(r, "invalid") {
			reason = strings.ReplaceAll(strings.TrimSuffix(strings.TrimSpace(r), ")"), " ", "_")
		}
		in.fallbacks.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", reason)))
	}
}
