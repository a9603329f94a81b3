package calltrace

import (
	"context"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/graphrag/graphrag/pkg/errkind"
)

// Attribute keys of the measurements: the method called and, on failures, the error's
// kind (errkind.Kind's text: "invalid", "not found", "unknown"...).
const (
	AttrOperation = attribute.Key("operation")
	AttrErrorKind = attribute.Key("error.kind")
)

// MetricNames are the names of the instruments of the client named client:
// "graphrag.<client>.calls" counts the calls by operation, "graphrag.<client>.errors"
// the failed ones by operation and error kind, "graphrag.<client>.duration" is a
// histogram of their seconds by operation. (Prometheus: graphrag_vectorstore_calls_total,
// graphrag_vectorstore_duration_seconds...)
func MetricNames(client string) (calls, errs, duration string) {
	p := "graphrag." + client + "."
	return p + "calls", p + "errors", p + "duration"
}

// Recorder records the calls of one client.
type Recorder struct {
	client   string
	tr       trace.Tracer
	calls    metric.Int64Counter
	errors   metric.Int64Counter
	duration metric.Float64Histogram
}

// New returns the Recorder of the client named client (a span of its method Search is
// "<client>.Search"), whose tracer and meter are named scope (the package's import
// path). The instruments come from the global meter provider, which forwards to the one
// telemetry.Setup installs even when it is installed later; an instrument that cannot
// be created is reported to otel.Handle and not recorded.
func New(scope, client string) *Recorder {
	r := &Recorder{client: client, tr: otel.Tracer(scope)}
	m := otel.Meter(scope)
	calls, errs, duration := MetricNames(client)
	var err error
	if r.calls, err = m.Int64Counter(calls, metric.WithUnit("{call}"),
		metric.WithDescription("Calls of the "+client+", by operation.")); err != nil {
		otel.Handle(err)
	}
	if r.errors, err = m.Int64Counter(errs, metric.WithUnit("{call}"),
		metric.WithDescription("Failed calls of the "+client+", by operation and error kind.")); err != nil {
		otel.Handle(err)
	}
	if r.duration, err = m.Float64Histogram(duration, metric.WithUnit("s"),
		metric.WithDescription("Duration of the calls of the "+client+", by operation.")); err != nil {
		otel.Handle(err)
	}
	return r
}

// Call is one call being recorded; End ends it.
type Call struct {
	r     *Recorder
	op    string
	span  trace.Span
	start time.Time
}

// Start starts the call of the method op: a client span "<client>.<op>" with attrs,
// child of ctx's span. The returned context carries the span.
func (r *Recorder) Start(ctx context.Context, op string, attrs ...attribute.KeyValue) (context.Context, Call) {
	ctx, span := r.tr.Start(ctx, r.client+"."+op, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attrs...))
	return ctx, Call{r: r, op: op, span: span, start: time.Now()}
}

// End ends the call with its outcome: a failed call records err on its span, whose
// status is Error described by the error's kind, and counts as an error of that kind.
// The measurements are taken even when ctx is canceled.
func (c Call) End(ctx context.Context, err error) {
	ctx = context.WithoutCancel(ctx)
	op := metric.WithAttributes(AttrOperation.String(c.op))
	if c.r.duration != nil {
		c.r.duration.Record(ctx, time.Since(c.start).Seconds(), op)
	}
	if c.r.calls != nil {
		c.r.calls.Add(ctx, 1, op)
	}
	if err != nil {
		kind := errkind.KindOf(err).String()
		c.span.RecordError(err)
		c.span.SetStatus(codes.Error, kind)
		if c.r.errors != nil {
			c.r.errors.Add(ctx, 1, metric.WithAttributes(AttrOperation.String(c.op), AttrErrorKind.String(kind)))
		}
	}
	c.span.End()
}

// Do runs fn as the call op (Start, then End with fn's error) and returns what fn
// returns; fn gets the context of the call's span.
func Do[T any](ctx context.Context, r *Recorder, op string, attrs []attribute.KeyValue, fn func(context.Context) (T, error)) (T, error) {
	ctx, c := r.Start(ctx, op, attrs...)
	out, err := fn(ctx)
	c.End(ctx, err)
	return out, err
}
