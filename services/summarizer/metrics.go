package summarizer

import (
	"context"
	"strings"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
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
	reports, fallbacks metric.Int64Counter
}

// instruments are created once, from the global meter provider.
var instruments = sync.OnceValue(func() reportInstruments {
	m := otel.Meter("github.com/graphrag/graphrag/services/summarizer")
	var in reportInstruments
	var err error
	if in.reports, err = m.Int64Counter(MetricReports, metric.WithUnit("{report}"), metric.WithDescription("Community reports written, by method kind (llm, extractive, or copy: a child's report reused).")); err != nil {
		otel.Handle(err)
	}
	if in.fallbacks, err = m.Int64Counter(MetricFallbacks, metric.WithUnit("{report}"), metric.WithDescription("Extractive reports written because the model gave none, by reason.")); err != nil {
		otel.Handle(err)
	}
	return in
})

// countersAtZero makes the series exist at zero, so that a rate or an alert sees the
// first report and the first fallback.
func countersAtZero(ctx context.Context) {
	in := instruments()
	for _, kind := range []string{"llm", "extractive", "copy"} {
		in.reports.Add(ctx, 0, metric.WithAttributes(attribute.String("kind", kind)))
	}
	in.fallbacks.Add(ctx, 0, metric.WithAttributes(attribute.String("reason", "invalid_output")))
}

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
