package grapher

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
)

// collectGrapher returns, per metric, the sum of its counter values, histogram counts or
// gauge values.
func collectGrapher(t *testing.T, r *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					v, _ := dp.Attributes.Value("outcome")
					out[m.Name+" "+v.AsString()] += dp.Value
				}
			case metricdata.Gauge[int64]:
				for _, dp := range d.DataPoints {
					out[m.Name] += dp.Value
				}
			case metricdata.Histogram[int64]:
				for _, dp := range d.DataPoints {
					out[m.Name] += int64(dp.Count)
				}
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					out[m.Name] += int64(dp.Count)
				}
			}
		}
	}
	return out
}

// The grapher reports its merges (batch size, latency), its detection runs (by outcome,
// with their duration) and whether it is the active grapher (issue 12, item 10).
func TestGrapherMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	otel.SetMeterProvider(mp) // the package's instruments are created on the global provider
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	ctx := t.Context()
	srv := bustest.StartServer(t)
	b, err := bus.New(bustest.Connect(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	if err := pipeline.Provision(ctx, b, pipeline.DefaultTopology()); err != nil {
		t.Fatal(err)
	}
	g, err := boltgraph.Open(filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	vs, err := embedded.Open(filepath.Join(t.TempDir(), "v"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = vs.Close() })
	cfg := DefaultConfig()
	cfg.Lease = false
	cfg.Debounce = 20 * time.Millisecond
	s, err := New(cfg, Deps{Bus: b, Graph: g, Vectors: vs, Embedder: hashembed.New(32), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	before := collectGrapher(t, reader)
	if _, ok := before[MetricDetections+" error"]; !ok {
		t.Errorf("failed detections are not registered at zero: %v", before)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	x := &events.Extraction{Schema: events.SchemaExtraction, Corpus: "demo", ChunkID: "c1", DocumentID: "d1", Method: "offline/v1",
		Entities:      []events.ExtractedEntity{{Name: "Ada", Type: "PERSON"}, {Name: "Bay", Type: "PLACE"}},
		Relationships: []events.ExtractedRelationship{{Source: "Ada", Target: "Bay", Strength: 1}}}
	data, _ := events.Encode(x)
	if err := s.handleExtraction(ctx, "demo", &bus.Message{Data: data}); err != nil {
		t.Fatal(err)
	}
	var got map[string]int64
	for range 1000 { // until the scheduled detection ran (a safety bound, not a speed goal)
		if got = collectGrapher(t, reader); got[MetricDetections+" ok"] > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, name := range []string{MetricDetections + " ok", MetricDetectionDuration, MetricMergeBatch, MetricMergeDuration, MetricLeaseHeld} {
		if got[name] < 1 {
			t.Errorf("%s = %d, want at least 1 (all %v)", name, got[name], got)
		}
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if got := collectGrapher(t, reader); got[MetricLeaseHeld] != 0 {
		t.Errorf("lease gauge %d after Stop, want 0 (not reported)", got[MetricLeaseHeld])
	}
	// A sharded grapher reports the shards it holds: all of them when it is alone. (One
	// test holds every metric check: the instruments bind to the first global provider.)
	sharded, _ := startGrapher(t, srv, shardedStores{g: g, vs: vs}, shardTestConfig(4), nil)
	waitUntil(t, "the grapher to hold every shard", func() bool { return len(sharded.heldShards()) == 4 })
	if got := collectGrapher(t, reader); got[MetricShardsHeld] != 4 || got[MetricLeaseHeld] != 1 {
		t.Errorf("shards gauge %d, lease gauge %d: want 4 and 1 (all %v)", got[MetricShardsHeld], got[MetricLeaseHeld], got)
	}
}
