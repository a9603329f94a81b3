package extractor

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/graphrag/graphrag/pkg/telemetry"
)

// Metric names (Prometheus: graphrag_extractor_chunks_total, ..._chunks_skipped_total,
// ..._extractions_total).
const (
	// MetricChunks counts the chunks the chunker writes.
	MetricChunks = "graphrag.extractor.chunks"
	// MetricChunksSkipped counts the chunks not extracted, by reason (low_information,
	// quarantined).
	MetricChunksSkipped = "graphrag.extractor.chunks_skipped"
	// MetricExtractions counts the chunks extracted, by method (offline/v1, llm/<model>).
	MetricExtractions = "graphrag.extractor.extractions"
)

type extractorInstruments struct {
	metrics                    *telemetry.Metrics
	chunks, skipped, extracted metric.Int64Counter
}

// instruments are created once, from the global meter provider (telemetry.Metrics); New
// sets the chunks written and those skipped for low information at zero (Zero), so
// that a rate or an alert sees the first skipped chunk.
var instruments = sync.OnceValue(func() extractorInstruments {
	m := telemetry.NewMetrics(meterName)
	return extractorInstruments{
		metrics: m,
		chunks:  m.Counter(MetricChunks, "", "chunks written", attribute.NewSet()),
		skipped: m.Counter(MetricChunksSkipped, "", "chunks not extracted, by reason",
			attribute.NewSet(attribute.String("reason", "low_information"))),
		extracted: m.Counter(MetricExtractions, "", "chunks extracted, by method"),
	}
})
