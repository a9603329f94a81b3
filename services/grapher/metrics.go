package grapher

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/graphrag/graphrag/pkg/telemetry"
)

// Metric names (Prometheus turns dots into underscores and adds units and _total).
const (
	// MetricMergeBatch is a histogram of the chunks merged per group commit.
	MetricMergeBatch = "graphrag.grapher.merge.batch_size"
	// MetricMergeDuration is a histogram of the time of a group commit into the graph store.
	MetricMergeDuration = "graphrag.grapher.merge.duration"
	// MetricDetections counts community detection runs by outcome (ok, error).
	MetricDetections = "graphrag.grapher.detection.runs"
	// MetricDetectionDuration is a histogram of the time of a detection run.
	MetricDetectionDuration = "graphrag.grapher.detection.duration"
	// MetricLeaseHeld is 1 while this grapher is the active one (it holds the lease,
	// or runs without one; sharded: it holds a shard), 0 while it waits for the lease or
	// after losing it.
	MetricLeaseHeld = "graphrag.grapher.lease.held"
	// MetricShardsHeld is the number of shards a sharded grapher holds (0 unsharded): their
	// sum over the graphers is the number of shards when every corpus has a grapher.
	MetricShardsHeld = "graphrag.grapher.shards.held"
)

type grapherInstruments struct {
	metrics                       *telemetry.Metrics
	mergeBatch                    metric.Int64Histogram
	mergeDuration, detectDuration metric.Float64Histogram
	detections                    metric.Int64Counter
	leaseHeld, shardsHeld         metric.Int64ObservableGauge
}

var (
	outcomeOK    = metric.WithAttributes(attribute.String("outcome", "ok"))
	outcomeError = metric.WithAttributes(attribute.String("outcome", "error"))
)

// instruments are created once, from the global meter provider (telemetry.Metrics); New
// sets the detection outcomes at zero (Zero), so that an alert on any failed run sees
// the first one.
var instruments = sync.OnceValue(func() grapherInstruments {
	m := telemetry.NewMetrics("github.com/graphrag/graphrag/services/grapher")
	return grapherInstruments{
		metrics: m,
		mergeBatch: m.Int64Histogram(MetricMergeBatch, "{chunk}", "Chunks merged into the graph store per group commit.",
			1, 2, 4, 8, 16, 32, 64, 128, 256, 512),
		mergeDuration: m.Histogram(MetricMergeDuration, "s", "Time of one group commit into the graph store."),
		detections: m.Counter(MetricDetections, "{run}", "Community detection runs, by outcome.",
			attribute.NewSet(attribute.String("outcome", "ok")), attribute.NewSet(attribute.String("outcome", "error"))),
		detectDuration: m.Histogram(MetricDetectionDuration, "s", "Time of one community detection run (Leiden, PageRank, writes, embeddings).",
			0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600),
		leaseHeld:  m.Gauge(MetricLeaseHeld, "", "1 while this grapher is the active one, 0 while it waits for the lease or after losing it."),
		shardsHeld: m.Gauge(MetricShardsHeld, "{shard}", "Shards of the corpora this grapher holds (0 when the corpora are not sharded)."),
	}
})

func recordMerge(ctx context.Context, chunks int, took time.Duration) {
	in := instruments()
	in.mergeBatch.Record(ctx, int64(chunks))
	in.mergeDuration.Record(ctx, took.Seconds())
}

func recordDetection(ctx context.Context, took time.Duration, err error) {
	in := instruments()
	outcome := outcomeOK
	if err != nil {
		outcome = outcomeError
	}
	in.detections.Add(ctx, 1, outcome)
	in.detectDuration.Record(ctx, took.Seconds(), outcome)
}

// observeLease reports held() as the lease gauge and shards() as the shards gauge until
// the returned function is called.
func observeLease(held func() bool, shards func() int) func() {
	in := instruments()
	reg, err := in.metrics.Meter().RegisterCallback(func(_ context.Context, o metric.Observer) error {
		v := int64(0)
		if held() {
			v = 1
		}
		o.ObserveInt64(in.leaseHeld, v)
		o.ObserveInt64(in.shardsHeld, int64(shards()))
		return nil
	}, in.leaseHeld, in.shardsHeld)
	if err != nil {
		otel.Handle(err)
		return func() {}
	}
	return func() { _ = reg.Unregister() }
}
