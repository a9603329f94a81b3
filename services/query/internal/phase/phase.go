package phase

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/graphrag/graphrag/pkg/errkind"
)

// tracerName names the tracer of the query phases (the engine's since the first).
const tracerName = "github.com/graphrag/graphrag/services/query/engine"

// SpanPrefix starts the name of every phase's span: "engine.link", "engine.fuse"...;
// the rest is the phase's key in a response's timings_ms.
const SpanPrefix = "engine."

// Timer times the phases of one request (a response's timings_ms) and traces them: each
// phase is a span, SpanPrefix+phase, child of the context it starts from, and its
// timing is that span's duration, measured once for both. Phases run side by side (the
// searches of one step) each have their own, so they may add up to more than "total",
// the time since New; the time between phases is in no phase but in "total".
type Timer struct {
	tr    trace.Tracer
	mu    sync.Mutex
	start time.Time
	m     map[string]float64
}

// New starts timing a request.
func New() *Timer {
	return &Timer{tr: otel.Tracer(tracerName), start: time.Now(), m: map[string]float64{}}
}

// Phase is a phase being timed; End ends it.
type Phase struct {
	t     *Timer
	name  string
	span  trace.Span
	start time.Time
}

// Begin starts the phase name: the returned context carries its span, for the store and
// model calls made in it.
func (t *Timer) Begin(ctx context.Context, name string) (context.Context, *Phase) {
	start := time.Now()
	ctx, span := t.tr.Start(ctx, SpanPrefix+name, trace.WithTimestamp(start))
	return ctx, &Phase{t: t, name: name, span: span, start: start}
}

// End ends the phase with its outcome and adds its duration to its timing; safe for
// concurrent use. A failed phase records err and has the status Error, described by
// the error's kind. It returns err.
func (p *Phase) End(err error) error {
	now := time.Now()
	if err != nil {
		p.span.RecordError(err)
		p.span.SetStatus(codes.Error, errkind.KindOf(err).String())
	}
	p.span.End(trace.WithTimestamp(now))
	p.t.mu.Lock()
	defer p.t.mu.Unlock()
	p.t.m[p.name] += MS(now.Sub(p.start))
	return err
}

// Timed runs fn as the phase name (Begin, then End with fn's error).
func (t *Timer) Timed(ctx context.Context, name string, fn func(ctx context.Context) error) error {
	ctx, p := t.Begin(ctx, name)
	return p.End(fn(ctx))
}

// Add adds the phase timings of a part of the request timed by a Timer of its own (a
// retrieval's), all but its "total"; safe for concurrent use.
func (t *Timer) Add(timings map[string]float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for name, took := range timings {
		if name != "total" {
			t.m[name] += took
		}
	}
}

// Done sets "total", the time since New, and returns the timings.
func (t *Timer) Done() map[string]float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m["total"] = MS(time.Since(t.start))
	return t.m
}

// MS is d in milliseconds, to the microsecond, as timings hold it.
func MS(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
