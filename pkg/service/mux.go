package service

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// MetricsSource serves metrics; *telemetry.Telemetry is one.
type MetricsSource interface {
	MetricsHandler() http.Handler
}

// NewMux returns a ServeMux with GET /healthz, /readyz and /metrics mounted;
// callers add their own routes to it. A nil health or metrics leaves its
// routes out. A request no route matches gets a JSON error, 404 or 405 with
// Allow, like the API's own errors, not the mux's plain text.
func NewMux(health *Health, metrics MetricsSource) *http.ServeMux {
	mux := http.NewServeMux()
	if health != nil {
		mux.Handle("GET /healthz", health.LivenessHandler())
		mux.Handle("GET /readyz", health.ReadinessHandler())
	}
	if metrics != nil {
		mux.Handle("GET /metrics", metrics.MetricsHandler())
	}
	mux.Handle("/", noRoute(mux))
	return mux
}

// probeMethods are the methods tried to tell a 405 from a 404.
var probeMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions}

// noRoute answers what no other route of mux matches: 405 when the path is served
// with other methods, else 404.
func noRoute(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var allow []string
		for _, m := range probeMethods {
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, pattern := mux.Handler(probe); pattern != "" && pattern != "/" && !slices.Contains(allow, m) {
				allow = append(allow, m)
			}
		}
		if len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, strings.Join(allow, ", ")))
			return
		}
		writeError(w, http.StatusNotFound, fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path))
	})
}

// writeError writes the platform's JSON error shape, {"error": "..."}.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(struct {
		Error string `json:"error"`
	}{msg})
}
