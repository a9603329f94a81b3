// Package calltracetest installs in-memory trace and metric providers as the otel
// globals for a test, and reads back what they recorded.
package calltracetest

import (
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// Providers are the in-memory providers Install made global.
type Providers struct {
	Spans   *tracetest.InMemoryExporter
	Metrics *sdkmetric.ManualReader
}

// Detach sets no-op tracer and meter providers as the otel globals, which otel's
// defaults forward to, for good, the first provider set in the process. A package's
// TestMain calls it before m.Run, so that what one test's servers and stores record
// (a request still in flight when it ends) does not reach the providers of the first
// test to call Install; each test then reads only the tracers and instruments made after
// its Install. A test that builds what it observes before calling Install fails under
// Detach, as it would after another test's Install.
func Detach() {
	otel.SetTracerProvider(tracenoop.NewTracerProvider())
	otel.SetMeterProvider(metricnoop.NewMeterProvider())
}

// Install makes an in-memory tracer provider (spans exported synchronously) and a
// meter provider read on demand the otel globals until the test ends. Tests that call
// it must not run in parallel with others that use the globals.
func Install(t testing.TB) Providers {
	t.Helper()
	p := Providers{Spans: tracetest.NewInMemoryExporter(), Metrics: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(p.Spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(p.Metrics))
	prevT, prevM := otel.GetTracerProvider(), otel.GetMeterProvider()
	otel.SetTracerProvider(tp)
	otel.SetMeterProvider(mp)
	t.Cleanup(func() {
		otel.SetTracerProvider(prevT)
		otel.SetMeterProvider(prevM)
		_ = tp.Shutdown(t.Context())
		_ = mp.Shutdown(t.Context())
	})
	return p
}

// Count returns the sum of the counter name's points whose attributes include attrs,
// and of the counts of the histogram name's points that do.
func (p Providers) Count(t testing.TB, name string, attrs ...attribute.KeyValue) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := p.Metrics.Collect(t.Context(), &rm); err != nil {
		t.Fatalf("collecting metrics: %v", err)
	}
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					if has(dp.Attributes, attrs) {
						n += dp.Value
					}
				}
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					if has(dp.Attributes, attrs) {
						n += int64(dp.Count)
					}
				}
			}
		}
	}
	return n
}

func has(set attribute.Set, attrs []attribute.KeyValue) bool {
	for _, a := range attrs {
		if v, ok := set.Value(a.Key); !ok || v != a.Value {
			return false
		}
	}
	return true
}

// Series returns the number of series (data points) of the metric name.
func (p Providers) Series(t testing.TB, name string) int {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := p.Metrics.Collect(t.Context(), &rm); err != nil {
		t.Fatalf("collecting metrics: %v", err)
	}
	n := 0
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if s, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == name {
				n += len(s.DataPoints)
			}
		}
	}
	return n
}
