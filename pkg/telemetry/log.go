package telemetry

import (
	"context"
	"io"
	"log/slog"
	"slices"

	"go.opentelemetry.io/otel/trace"
)

// Log attribute keys added to records logged inside a span.
const (
	TraceIDKey = "trace_id"
	SpanIDKey  = "span_id"
)

// NewLogger returns a logger writing to w at level and above, as JSON when
// format is "json" and as logfmt-style text when it is "text"; any other
// format falls back to JSON, the format log pipelines parse. Records logged
// with a context holding a valid span carry its trace_id and span_id. A key
// given twice at the top level (a service's logger.With("service", "grapher")
// on a process logger that already says "service") appears once, with the
// last value: log pipelines keep one of two duplicate JSON keys, and which one
// depends on the parser.
func NewLogger(w io.Writer, level slog.Leveler, format string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	if format == "text" {
		h = slog.NewTextHandler(w, opts)
	} else {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(NewTraceHandler(h))
}

// NewTraceHandler wraps h so that every record logged with a context holding
// a valid span context gets trace_id and span_id attributes, and so that a
// top-level key appears once per record (the last value given wins). Inside
// a group opened with WithGroup the ids land in that group, as any attribute
// would.
func NewTraceHandler(h slog.Handler) slog.Handler { return traceHandler{base: h, next: h} }

// traceHandler keeps the top-level attributes given with WithAttrs itself, so that a
// later value of the same key replaces the earlier one instead of following it.
type traceHandler struct {
	base  slog.Handler // the wrapped handler, without the attributes below
	attrs []slog.Attr  // top-level attributes, one per key
	next  slog.Handler // base with attrs, then the groups and their attributes
	group bool         // a group is open: attributes go into it
}

func (h traceHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	next := h.next
	if !h.group && len(h.attrs) > 0 && r.NumAttrs() > 0 {
		// A record attribute with the key of a With attribute replaces it.
		var keys []string
		r.Attrs(func(a slog.Attr) bool {
			keys = append(keys, a.Key)
			return true
		})
		if slices.ContainsFunc(h.attrs, func(a slog.Attr) bool { return slices.Contains(keys, a.Key) }) {
			kept := slices.DeleteFunc(slices.Clone(h.attrs), func(a slog.Attr) bool { return slices.Contains(keys, a.Key) })
			next = h.base.WithAttrs(kept)
		}
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		// Clone: the record's attribute storage may be shared with the caller.
		r = r.Clone()
		r.AddAttrs(
			slog.String(TraceIDKey, sc.TraceID().String()),
			slog.String(SpanIDKey, sc.SpanID().String()),
		)
	}
	return next.Handle(ctx, r)
}

func (h traceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	if h.group {
		h.next = h.next.WithAttrs(attrs)
		return h
	}
	merged := slices.Clone(h.attrs)
	for _, a := range attrs {
		if i := slices.IndexFunc(merged, func(b slog.Attr) bool { return b.Key == a.Key }); i >= 0 {
			merged = slices.Delete(merged, i, i+1)
		}
		merged = append(merged, a)
	}
	h.attrs = merged
	h.next = h.base.WithAttrs(merged)
	return h
}

func (h traceHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h.next = h.next.WithGroup(name)
	h.group = true
	return h
}
