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
	c, err := m.meter.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	if err != nil {
		otel.Handle(err)
		c = noop.Int64Counter{}
	}
	for _, set := range zeroAt {
		m.zeros = append(m.zeros, zeroSeries{c: c, set: set})
	}
	return c
}

// Histogram returns the histogram name of float values; bounds, when given, are its
// buckets' explicit boundaries.
func (m *Metrics) Histogram(name, unit, desc string, bounds ...float64) metric.Float64Histogram {
	opts := []metric.Float64HistogramOption{metric.WithUnit(unit), metric.WithDescription(desc)}
	if len(bounds) > 0 {
		opts = append(opts, metric.WithExplicitBucketBoundaries(bounds...))
	}
	h, err := m.meter.Float64Histogram(name, opts...)
	if err != nil {
		otel.Handle(err)
		h = noop.Float64Histogram{}
	}
	return h
}

// Int64Histogram returns the histogram name of integer values, as Histogram.
func (m *Metrics) Int64Histogram(name, unit, desc string, bounds ...float64) metric.Int64Histogram {
	opts := []metric.Int64HistogramOption{metric.WithUnit(unit), metric.WithDescription(desc)}
	if len(bounds) > 0 {
		opts = append(opts, metric.WithExplicitBucketBoundaries(bounds...))
	}
	h, err := m.meter.Int64Histogram(name, opts...)
	if err != nil {
		otel.Handle(err)
		h = noop.Int64Histogram{}
	}
	return h
}

// Gauge returns the observable gauge name, observed by a callback registered on Meter.
func (m *Metrics) Gauge(name, unit, desc string) metric.Int64ObservableGauge {
	g, err := m.meter.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
	if err != nil {
		otel.Handle(err)
		g = noop.Int64ObservableGauge{}
	}
	return g
}

// Zero adds zero to every series registered with Counter's zeroAt.
func (m *Metrics) Zero(ctx context.Context) {
	for _, z := range m.zeros {
		z.c.Add(ctx, 0, metric.WithAttributeSet(z.set))
	}
}
