package service

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/graphrag/graphrag/pkg/telemetry/calltrace/calltracetest"
)

func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

// Every request gets a span (so what is logged while serving it carries a trace id) and
// is counted by route pattern and status in a latency histogram; the requests being
// served are a gauge.
func TestHTTPServerIsInstrumented(t *testing.T) {
	reader := calltracetest.Install(t).Metrics
	var active int64 = -1
	var traced bool
	mux := NewMux(NewHealth(), nil)
	mux.HandleFunc("POST /v1/things/{id}", func(w http.ResponseWriter, r *http.Request) {
		traced = trace.SpanContextFromContext(r.Context()).IsValid()
		if g, ok := collect(t, reader)[MetricHTTPActive].(metricdata.Sum[int64]); ok && len(g.DataPoints) == 1 { //nolint:contextcheck // reading a test meter, not serving r
			active = g.DataPoints[0].Value
		}
		w.WriteHeader(http.StatusCreated)
	})
	addr := startLimited(t, mux, HTTPLimits{})
	for _, path := range []string{"/v1/things/a", "/v1/things/b", "/nowhere", "/healthz"} {
		resp, err := http.Post("http://"+addr+path, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	if !traced {
		t.Error("the handler's context holds no span")
	}
	if active != 1 {
		t.Errorf("%s during a request = %d, want 1", MetricHTTPActive, active)
	}
	h, ok := collect(t, reader)[MetricHTTPDuration].(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("no %s histogram", MetricHTTPDuration)
	}
	got := map[string]uint64{}
	for _, dp := range h.DataPoints {
		route, _ := dp.Attributes.Value(attribute.Key("http.route"))
		status, _ := dp.Attributes.Value(attribute.Key("http.response.status_code"))
		got[route.AsString()+" "+status.String()] += dp.Count
	}
	// The route is the pattern without its method (the method is a label of its own).
	want := map[string]uint64{"/v1/things/{id} 201": 2, "/ 404": 1}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("requests %q = %d, want %d (all: %v)", k, got[k], n, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("series %v, want exactly %v (probes are not counted)", got, want)
	}
}
