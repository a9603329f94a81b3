package telemetry_test

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/graphrag/graphrag/pkg/telemetry"
	"github.com/graphrag/graphrag/pkg/telemetry/calltrace/calltracetest"
)

// Zero makes every series declared with zeroAt exist at zero, and only those; each call
// of Zero adds nothing.
func TestMetricsZero(t *testing.T) {
	p := calltracetest.Install(t)
	m := telemetry.NewMetrics("test")
	ok, failed := attribute.String("outcome", "ok"), attribute.String("outcome", "error")
	c := m.Counter("test.runs", "{run}", "runs", attribute.NewSet(ok), attribute.NewSet(failed))
	plain := m.Counter("test.plain", "", "plain", attribute.NewSet())
	h := m.Histogram("test.duration", "s", "duration", 1, 2)
	if n := p.Count(t, "test.runs"); n != 0 {
		t.Fatalf("runs = %d before anything", n)
	}
	for range 2 {
		m.Zero(t.Context())
	}
	if got := p.Series(t, "test.runs"); got != 2 {
		t.Errorf("%d series of test.runs after Zero, want 2", got)
	}
	if got := p.Series(t, "test.plain"); got != 1 {
		t.Errorf("%d series of test.plain after Zero, want 1", got)
	}
	c.Add(t.Context(), 3, metric.WithAttributes(failed))
	plain.Add(t.Context(), 1)
	h.Record(t.Context(), 1.5)
	for _, tc := range []struct {
		name  string
		attrs []attribute.KeyValue
		want  int64
	}{
		{"test.runs", []attribute.KeyValue{ok}, 0},
		{"test.runs", []attribute.KeyValue{failed}, 3},
		{"test.plain", nil, 1},
		{"test.duration", nil, 1},
	} {
		if got := p.Count(t, tc.name, tc.attrs...); got != tc.want {
			t.Errorf("%s%v = %d, want %d", tc.name, tc.attrs, got, tc.want)
		}
	}
}
