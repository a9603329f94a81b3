package telemetry

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// Metrics declares the instruments of one package (a stage service's) on the global
// meter provider, which forwards to the one Setup installs. Every stage declares its
// metrics the same way: a struct of instruments made once from a Metrics, and New
// calling Zero, so that the counters' series exist at zero from the start and a rate
// or an alert sees their first event. An instrument that cannot be created is reported
// to otel.Handle (Setup logs it) and replaced by one that records nothing: metrics never
// stop a service.
type Metrics struct {
	meter metric.Meter
	zeros []zeroSeries
}

// zeroSeries is a counter's series to add zero to.
type zeroSeries struct {
	c   metric.Int64Counter
	set attribute.Set
}

// NewMetrics returns the Metrics of the instrumentation scope scope (the package's
// import path).
func NewMetrics(scope string) *Metrics { return &Metrics{meter: otel.Meter(scope)} }

// Meter is the scope's meter, for callbacks of observable instruments.
func (m *Metrics) Meter() metric.Meter { return m.meter }

// Counter returns the counter name; zeroAt are the attribute sets of the series Zero
// makes exist (attribute.NewSet() for the series without attributes).
func (m *Metrics) Counter(name, unit, desc string, zeroAt ...attribute.Set) metric.Int64Counter {
	c := orNoop(m.meter.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc)))(noop.Int64Counter{})
	for _, set := range zeroAt {
		m.zeros = append(m.zeros, zeroSeries{c: c, set: set})
	}
	return c
}

// Histogram returns the histogram name of float values; bounds, when given, are its
// buckets' explicit boundaries.
func (m *Metrics) Histogram(name, unit, desc string, bounds ...float64) metric.Float64Histogram {
	return orNoop(m.meter.Float64Histogram(name, histogramOptions[metric.Float64HistogramOption](unit, desc, bounds)...))(noop.Float64Histogram{})
}

// Int64Histogram returns the histogram name of integer values, as Histogram.
func (m *Metrics) Int64Histogram(name, unit, desc string, bounds ...float64) metric.Int64Histogram {
	return orNoop(m.meter.Int64Histogram(name, histogramOptions[metric.Int64HistogramOption](unit, desc, bounds)...))(noop.Int64Histogram{})
}

// Gauge returns the observable gauge name, observed by a callback registered on Meter.
func (m *Metrics) Gauge(name, unit, desc string) metric.Int64ObservableGauge {
	return orNoop(m.meter.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc)))(noop.Int64ObservableGauge{})
}

// histogramOptions are a histogram's unit, description and bucket boundaries, as options
// of either number type (the metric package's options implement both).
func histogramOptions[O any](unit, desc string, bounds []float64) []O {
	opts := []any{metric.WithUnit(unit), metric.WithDescription(desc)}
	if len(bounds) > 0 {
		opts = append(opts, metric.WithExplicitBucketBoundaries(bounds...))
	}
	out := make([]O, len(opts))
	for i, o := range opts {
		out[i] = o.(O)
	}
	return out
}

// orNoop returns what an instrument's constructor returned, or, when it failed, reports
// the error to otel.Handle and returns the no-op instrument given to the result.
func orNoop[T any](inst T, err error) func(none T) T {
	return func(none T) T {
		if err != nil {
			otel.Handle(err)
			return none
		}
		return inst
	}
}

// Zero adds zero to every series registered with Counter's zeroAt.
func (m *Metrics) Zero(ctx context.Context) {
	for _, z := range m.zeros {
		z.c.Add(ctx, 0, metric.WithAttributeSet(z.set))
	}
}
