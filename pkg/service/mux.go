package service

import "net/http"

// MetricsSource serves metrics; *telemetry.Telemetry is one.
type MetricsSource interface {
	MetricsHandler() http.Handler
}

// NewMux returns a ServeMux with GET /healthz, /readyz and /metrics mounted;
// callers add their own routes to it. A nil health or metrics leaves its
// routes out.
func NewMux(health *Health, metrics MetricsSource) *http.ServeMux {
	mux := http.NewServeMux()
	if health != nil {
		mux.Handle("GET /healthz", health.LivenessHandler())
		mux.Handle("GET /readyz", health.ReadinessHandler())
	}
	if metrics != nil {
		mux.Handle("GET /metrics", metrics.MetricsHandler())
	}
	return mux
}
