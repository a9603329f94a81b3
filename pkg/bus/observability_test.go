package bus_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/telemetry"
)

// The consumer's counters exist, at zero, as soon as it consumes: an alert on "any
// increase of dead letters" sees the first one (issue 12, item 10).
func TestCountersRegisteredAtZero(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	e := newEnv(t, bus.WithMeterProvider(mp))
	consume(t, e.b, fastSpec("zero"), func(context.Context, *bus.Message) error { return nil })
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(testCtx(t), &rm); err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				continue
			}
			for _, dp := range sum.DataPoints {
				if v, _ := dp.Attributes.Value("consumer"); v.AsString() == "zero" && dp.Value == 0 {
					found[m.Name] = true
				}
			}
		}
	}
	for _, name := range []string{bus.MetricProcessed, bus.MetricFailed, bus.MetricDeadLettered} {
		if !found[name] {
			t.Errorf("%s has no zero series for the new consumer (found %v)", name, found)
		}
	}
}

// syncBuffer is a log sink the consumer's goroutines write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Split(strings.TrimSpace(s.b.String()), "\n")
}

// Every line logged while a message is handled carries the message's trace id: the
// dead-letter warning and the retries before it (issue 12, item 10).
func TestLogLinesCarryTraceID(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	var logs syncBuffer
	e := newEnv(t, bus.WithTracerProvider(tp), bus.WithLogger(telemetry.NewLogger(&logs, slog.LevelDebug, "json")))
	dlq := readDLQ(t, e)
	if _, err := e.b.Publish(testCtx(t), "ev.poison", []byte("poison")); err != nil {
		t.Fatal(err)
	}
	consume(t, e.b, fastSpec("traced"), func(context.Context, *bus.Message) error { return errors.New("always fails") })
	eventually(t, "dead letter", func() bool { return len(dlq.snapshot()) == 1 })
	// The consumer logs the dead letter after publishing it: wait for the line too.
	eventually(t, "dead-letter log line", func() bool {
		return strings.Contains(strings.Join(logs.lines(), "\n"), `"msg":"message dead-lettered"`)
	})
	var checked int
	for _, line := range logs.lines() {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q is not JSON: %v", line, err)
		}
		msg, _ := rec["msg"].(string)
		if msg != "message dead-lettered" && msg != "handler failed; retrying" {
			continue
		}
		checked++
		if id, _ := rec[telemetry.TraceIDKey].(string); len(id) != 32 {
			t.Errorf("line without a trace id: %s", line)
		}
	}
	if checked < 3 { // two retries, one dead letter
		t.Errorf("checked %d lines, want the retries and the dead letter:\n%s", checked, strings.Join(logs.lines(), "\n"))
	}
}
