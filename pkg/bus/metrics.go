package bus

import (
	"fmt"

	"go.opentelemetry.io/otel/metric"
)

// instruments are the consumer metrics; every measurement carries the
// stream and consumer attributes.
type instruments struct {
	processed    metric.Int64Counter
	failed       metric.Int64Counter
	deadLettered metric.Int64Counter
	duration     metric.Float64Histogram
}

// Metric names, exported so dashboards and tests do not repeat strings.
const (
	MetricProcessed    = "bus.messages.processed"
	MetricFailed       = "bus.messages.failed"
	MetricDeadLettered = "bus.messages.dead_lettered"
	MetricDuration     = "bus.handler.duration"
)

func newInstruments(m metric.Meter) (instruments, error) {
	var (
		in  instruments
		err error
	)
	if in.processed, err = m.Int64Counter(MetricProcessed, metric.WithUnit("{message}"),
		metric.WithDescription("Messages handled successfully and acked.")); err != nil {
		return in, fmt.Errorf("counter %s: %w", MetricProcessed, err)
	}
	if in.failed, err = m.Int64Counter(MetricFailed, metric.WithUnit("{message}"),
		metric.WithDescription("Handler runs that returned an error or panicked.")); err != nil {
		return in, fmt.Errorf("counter %s: %w", MetricFailed, err)
	}
	if in.deadLettered, err = m.Int64Counter(MetricDeadLettered, metric.WithUnit("{message}"),
		metric.WithDescription("Messages published to the dead-letter subject and terminated.")); err != nil {
		return in, fmt.Errorf("counter %s: %w", MetricDeadLettered, err)
	}
	if in.duration, err = m.Float64Histogram(MetricDuration, metric.WithUnit("s"),
		metric.WithDescription("Time spent in the handler.")); err != nil {
		return in, fmt.Errorf("histogram %s: %w", MetricDuration, err)
	}
	return in, nil
}
