package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

func TestLoggerTraceIDs(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	spanCtx, span := tp.Tracer("test").Start(t.Context(), "op")
	defer span.End()
	sc := span.SpanContext()

	tests := []struct {
		name      string
		ctx       context.Context
		withAttrs bool
		wantIDs   bool
	}{
		{"inside span", spanCtx, false, true},
		{"inside span with attrs", spanCtx, true, true},
		{"no span", t.Context(), false, false},
		{"invalid span context", trace.ContextWithSpanContext(t.Context(), trace.SpanContext{}), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			logger := NewLogger(&buf, slog.LevelInfo, "json")
			if tt.withAttrs {
				logger = logger.With("component", "c")
			}
			logger.InfoContext(tt.ctx, "hello", "k", "v")

			var line map[string]any
			if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
				t.Fatalf("log line is not JSON: %v: %s", err, buf.String())
			}
			if line["msg"] != "hello" || line["k"] != "v" {
				t.Errorf("log line lost its content: %v", line)
			}
			if tt.withAttrs && line["component"] != "c" {
				t.Errorf("log line lost With attrs: %v", line)
			}
			gotTrace, hasTrace := line[TraceIDKey]
			gotSpan, hasSpan := line[SpanIDKey]
			if !tt.wantIDs {
				if hasTrace || hasSpan {
					t.Errorf("ids logged without a span: %v", line)
				}
				return
			}
			if gotTrace != sc.TraceID().String() {
				t.Errorf("trace_id = %v, want %s", gotTrace, sc.TraceID())
			}
			if gotSpan != sc.SpanID().String() {
				t.Errorf("span_id = %v, want %s", gotSpan, sc.SpanID())
			}
		})
	}
}

func TestLoggerFormatAndLevel(t *testing.T) {
	tests := []struct {
		name     string
		format   string
		level    slog.Level
		logDebug bool
		wantJSON bool
		wantLine bool
	}{
		{"json info drops debug", "json", slog.LevelInfo, true, true, false},
		{"json debug keeps debug", "json", slog.LevelDebug, true, true, true},
		{"text", "text", slog.LevelInfo, false, false, true},
		{"unknown falls back to json", "yaml", slog.LevelInfo, false, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			logger := NewLogger(&buf, tt.level, tt.format)
			if tt.logDebug {
				logger.Debug("m")
			} else {
				logger.Info("m")
			}
			out := buf.String()
			if !tt.wantLine {
				if out != "" {
					t.Fatalf("got output %q, want none", out)
				}
				return
			}
			if isJSON := strings.HasPrefix(out, "{"); isJSON != tt.wantJSON {
				t.Errorf("output %q: JSON = %v, want %v", out, isJSON, tt.wantJSON)
			}
		})
	}
}

func TestLoggerTextHasTraceID(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	ctx, span := tp.Tracer("test").Start(t.Context(), "op")
	defer span.End()

	var buf bytes.Buffer
	NewLogger(&buf, slog.LevelInfo, "text").InfoContext(ctx, "m")
	want := "trace_id=" + span.SpanContext().TraceID().String()
	if !strings.Contains(buf.String(), want) {
		t.Errorf("text line %q lacks %q", buf.String(), want)
	}
}

// BenchmarkLogger measures what the trace handler adds per record.
func BenchmarkLogger(b *testing.B) {
	tp := sdktrace.NewTracerProvider()
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	spanCtx, span := tp.Tracer("bench").Start(b.Context(), "op")
	defer span.End()
	for _, bc := range []struct {
		name    string
		handler slog.Handler
		ctx     context.Context
	}{
		{"plain json", slog.NewJSONHandler(io.Discard, nil), spanCtx},
		{"trace json no span", NewTraceHandler(slog.NewJSONHandler(io.Discard, nil)), b.Context()},
		{"trace json in span", NewTraceHandler(slog.NewJSONHandler(io.Discard, nil)), spanCtx},
	} {
		b.Run(bc.name, func(b *testing.B) {
			logger := slog.New(bc.handler)
			b.ReportAllocs()
			for b.Loop() {
				logger.InfoContext(bc.ctx, "message", "key", "value", "n", 42)
			}
		})
	}
}

// topLevelKeys returns the keys of a JSON object in order, duplicates kept.
func topLevelKeys(t *testing.T, line []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %s", line)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("reading %s: %v", line, err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatalf("reading %s: %v", line, err)
		}
	}
	return keys
}

// A key given again replaces the earlier value instead of following it: no log line
// carries a key twice (issue 12, item 10: "service":"up","service":"extractor").
func TestLoggerNoDuplicateKeys(t *testing.T) {
	tests := []struct {
		name string
		log  func(l *slog.Logger)
		want map[string]any
	}{
		{"With twice", func(l *slog.Logger) { l.With("service", "up").With("service", "extractor").Info("m") },
			map[string]any{"service": "extractor"}},
		{"With then record", func(l *slog.Logger) { l.With("corpus", "a", "k", "v").Info("m", "corpus", "b") },
			map[string]any{"corpus": "b", "k": "v"}},
		{"one With, same key twice", func(l *slog.Logger) { l.With("a", 1, "a", 2).Info("m") },
			map[string]any{"a": 2.0}},
		{"group keeps its own keys", func(l *slog.Logger) { l.With("a", 1).WithGroup("g").With("a", 2).Info("m") },
			map[string]any{"a": 1.0, "g": map[string]any{"a": 2.0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			tt.log(NewLogger(&buf, slog.LevelInfo, "json"))
			keys := topLevelKeys(t, buf.Bytes())
			seen := map[string]bool{}
			for _, k := range keys {
				if seen[k] {
					t.Errorf("key %q twice in %s", k, buf.Bytes())
				}
				seen[k] = true
			}
			var line map[string]any
			if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.want {
				got, _ := json.Marshal(line[k])
				w, _ := json.Marshal(v)
				if string(got) != string(w) {
					t.Errorf("%s = %s, want %s (line %s)", k, got, w, buf.Bytes())
				}
			}
		})
	}
}
