// Package telemetry sets up OpenTelemetry tracing and metrics and structured
// logging for every GraphRAG service process.
//
// Setup installs a tracer provider (exporting over OTLP/gRPC when an endpoint
// is configured), a meter provider read by a Prometheus exporter on a private
// registry (and pushed over OTLP when an endpoint is configured), and the W3C
// TraceContext and Baggage propagators as the otel globals, so library code
// only ever calls otel.Tracer and otel.Meter. NewLogger builds a slog.Logger
// whose records carry the trace_id and span_id of the span in their context,
// which joins logs to traces even when spans are not exported. Metrics is how a stage
// service declares its instruments; package calltrace records the calls of a client
// (the stores) as a span and three measurements.
package telemetry
