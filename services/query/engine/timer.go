package engine

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/graphrag/graphrag/pkg/errkind"
)

// tracerName names the tracer of the query phases.
const tracerName = "github.com/graphrag/graphrag/services/query/engine"

// SpanPrefix starts the name of every phase's span: "engine.link", "engine.fuse"...;
// the rest is the phase's key in a response's timings_ms.
const SpanPrefix = "engine."

// timer times the phases of one request (a response's timings_ms) and traces them: each
// phase is a span, SpanPrefix+phase, child of the context it starts from, and its
// timing is that span's duration, measured once for both. Phases run side by side (the
// searches of one step) each have their own, so they may add up to more than "total",
// the time since newTimer; the time between phases is in no phase but in "total".
type timer struct {
	tr    trace.Tracer
	mu    sync.Mutex
	start time.Time
	m     map[string]float64
}

func newTimer() *timer {
	return &timer{tr: otel.Tracer(tracerName), start: time.Now(), m: map[string]float64{}}
}

// phase is a phase being timed; end ends it.
type phase struct {
	t     *timer
	name  string
	span  trace.Span
	start time.Time
}

// begin starts the phase name: the returned context carries its span, for the store and
// model calls made in it.
func (t *timer) begin(ctx context.Context, name string) (context.Context, *phase) {
	start := time.Now()
	ctx, span := t.tr.Start(ctx, SpanPrefix+name, trace.WithTimestamp(start))
	return ctx, &phase{t: t, name: name, span: span, start: start}
}

// end ends the phase with its outcome and adds its duration to its timing; safe for
// concurrent use. A failed phase records err and has the status Error, described by
// the error's kind. It returns err.
func (p *phase) end(err error) error {
	now := time.Now()
	if err != nil {
		p.span.RecordError(err)
		p.span.SetStatus(codes.Error, errkind.KindOf(err).String())
	}
	p.span.End(trace.WithTimestamp(now))
	p.t.mu.Lock()
	defer p.t.mu.Unlock()
	p.t.m[p.name] += ms(now.Sub(p.start))
	return err
}

// timed runs fn as the phase name (begin, then end with fn's error).
func (t *timer) timed(ctx context.Context, name string, fn func(ctx context.Context) error) error {
	ctx, p := t.begin(ctx, name)
	return p.end(fn(ctx))
}

func (t *timer) done() map[string]float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m["total"] = ms(time.Since(t.start))
	return t.m
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
