package service

import (
	"context"
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
)

// Names of the HTTP server metrics (OpenTelemetry semantic conventions; Prometheus
// turns the dots into underscores and adds the unit: http_server_request_duration_seconds).
const (
	// MetricHTTPDuration is a histogram of request durations by route (the mux pattern,
	// "POST /v1/query"), method and status code; its count is the number of requests.
	MetricHTTPDuration = "http.server.request.duration"
	// MetricHTTPActive is the number of requests being served.
	MetricHTTPActive = "http.server.active_requests"
)

// unobserved are the paths probes and scrapers call every few seconds: no span and no
// request metric for them.
var unobserved = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// instrument gives every request a server span (continuing the caller's trace from its
// traceparent header, so the log lines written while serving it carry the trace id) and
// records its duration by route and status, with the global tracer and meter providers
// (telemetry.Setup installs them). The route is the pattern the mux matched, so the
// label set stays bounded whatever paths clients send.
func instrument(next http.Handler) http.Handler {
	active, err := otel.Meter("github.com/graphrag/graphrag/pkg/service").Int64UpDownCounter(MetricHTTPActive,
		metric.WithUnit("{request}"), metric.WithDescription("HTTP requests being served."))
	if err != nil {
		otel.Handle(err)
	}
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if active != nil {
			active.Add(r.Context(), 1)
			defer active.Add(context.WithoutCancel(r.Context()), -1)
		}
		next.ServeHTTP(w, r)
	})
	return otelhttp.NewHandler(counted, "http",
		otelhttp.WithFilter(func(r *http.Request) bool { return !unobserved[r.URL.Path] }),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			if r.Pattern != "" {
				return r.Pattern
			}
			return r.Method
		}))
}
