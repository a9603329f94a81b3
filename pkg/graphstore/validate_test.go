package graphstore_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/telemetry/calltrace"
	"github.com/graphrag/graphrag/pkg/telemetry/calltrace/calltracetest"
)

// counting is a driver that counts the calls reaching it; every method answers nil.
type counting struct {
	graphstore.Store // nil: a method not overridden below panics
	calls            int
}

func (c *counting) SetDescriptions(context.Context, string, map[string]string) error {
	c.calls++
	return nil
}

func (c *counting) SetPageRank(context.Context, string, map[string]float64) error {
	c.calls++
	return nil
}

func (c *counting) Communities(context.Context, string, int) ([]graphstore.Community, error) {
	c.calls++
	return nil, nil
}

func (c *counting) Stats(context.Context, string) (graphstore.Stats, error) {
	c.calls++
	return graphstore.Stats{}, nil
}

// Arguments that break the contract are ErrInvalid and never reach the driver; the
// others do, unchanged.
func TestValidating(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name  string
		call  func(graphstore.Store) error
		valid bool
	}{
		{"stats", func(s graphstore.Store) error { _, err := s.Stats(ctx, "k"); return err }, true},
		{"stats, empty corpus", func(s graphstore.Store) error { _, err := s.Stats(ctx, ""); return err }, false},
		{"stats, long corpus", func(s graphstore.Store) error {
			_, err := s.Stats(ctx, strings.Repeat("k", graphstore.MaxKeyLen+1))
			return err
		}, false},
		{"communities", func(s graphstore.Store) error { _, err := s.Communities(ctx, "k", -1); return err }, true},
		{"communities, level -2", func(s graphstore.Store) error { _, err := s.Communities(ctx, "k", -2); return err }, false},
		{"descriptions", func(s graphstore.Store) error { return s.SetDescriptions(ctx, "k", map[string]string{"a": "é"}) }, true},
		{"descriptions, not UTF-8", func(s graphstore.Store) error {
			return s.SetDescriptions(ctx, "k", map[string]string{"a": "ok", "b": "\xff"})
		}, false},
		{"pagerank", func(s graphstore.Store) error { return s.SetPageRank(ctx, "k", map[string]float64{"a": 0.5}) }, true},
		{"pagerank, infinite", func(s graphstore.Store) error {
			return s.SetPageRank(ctx, "k", map[string]float64{"a": 0.5, "b": math.Inf(1)})
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := &counting{}
			err := tc.call(graphstore.Validating(d))
			if tc.valid {
				if err != nil || d.calls != 1 {
					t.Fatalf("err %v, %d calls reached the driver: want nil, 1", err, d.calls)
				}
				return
			}
			if !errors.Is(err, graphstore.ErrInvalid) || d.calls != 0 {
				t.Fatalf("err %v, %d calls reached the driver: want ErrInvalid, 0", err, d.calls)
			}
		})
	}
}

// The error names the smallest bad key, whatever the map's order.
func TestValidatingNamesTheSmallestBadKey(t *testing.T) {
	scores := map[string]float64{"e": math.NaN(), "c": math.Inf(-1), "a": 1, "d": math.NaN()}
	for range 20 {
		err := graphstore.Validating(&counting{}).SetPageRank(t.Context(), "k", scores)
		if err == nil || !strings.Contains(err.Error(), `"c"`) {
			t.Fatalf("error %v, want one naming \"c\"", err)
		}
	}
}

// Every call is one span named after the method, with the corpus; a failed one has
// the status Error described by the error's kind.
func TestValidatingSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	s := graphstore.Validating(&counting{})
	ctx := t.Context()
	if _, err := s.Stats(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Communities(ctx, "k", -2); !errors.Is(err, graphstore.ErrInvalid) {
		t.Fatalf("Communities(-2) = %v", err)
	}
	if err := s.SetPageRank(ctx, "", nil); !errors.Is(err, graphstore.ErrInvalid) {
		t.Fatalf("SetPageRank(corpus \"\") = %v", err)
	}
	spans := rec.Ended()
	type got struct {
		name, corpus string
		code         codes.Code
		desc         string
	}
	want := []got{
		{"graphstore.Stats", "k", codes.Unset, ""},
		{"graphstore.Communities", "k", codes.Error, "invalid"},
		{"graphstore.SetPageRank", "", codes.Error, "invalid"},
	}
	if len(spans) != len(want) {
		t.Fatalf("%d spans, want %d", len(spans), len(want))
	}
	for i, sp := range spans {
		corpus := ""
		for _, a := range sp.Attributes() {
			if a.Key == "graphrag.corpus" {
				corpus = a.Value.AsString()
			}
		}
		g := got{sp.Name(), corpus, sp.Status().Code, sp.Status().Description}
		if g != want[i] {
			t.Errorf("span %d = %+v, want %+v", i, g, want[i])
		}
		if sp.SpanKind() != trace.SpanKindClient {
			t.Errorf("span %s is of kind %v, want client", sp.Name(), sp.SpanKind())
		}
	}
}

// Every call is counted and timed by operation; a failed one is counted by its kind,
// and a refused argument never reaches the driver but is measured as a call.
func TestValidatingMetrics(t *testing.T) {
	p := calltracetest.Install(t)
	d := &counting{}
	s := graphstore.Validating(d)
	ctx := t.Context()
	for range 2 {
		if _, err := s.Stats(ctx, "k"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Communities(ctx, "k", -2); !errors.Is(err, graphstore.ErrInvalid) {
		t.Fatalf("Communities(-2) = %v", err)
	}
	op := func(name string) attribute.KeyValue { return calltrace.AttrOperation.String(name) }
	for _, c := range []struct {
		metric string
		attrs  []attribute.KeyValue
		want   int64
	}{
		{"graphrag.graphstore.calls", []attribute.KeyValue{op("Stats")}, 2},
		{"graphrag.graphstore.duration", []attribute.KeyValue{op("Stats")}, 2},
		{"graphrag.graphstore.errors", []attribute.KeyValue{op("Stats")}, 0},
		{"graphrag.graphstore.calls", []attribute.KeyValue{op("Communities")}, 1},
		{"graphrag.graphstore.errors", []attribute.KeyValue{op("Communities"), calltrace.AttrErrorKind.String("invalid")}, 1},
	} {
		if got := p.Count(t, c.metric, c.attrs...); got != c.want {
			t.Errorf("%s%v = %d, want %d", c.metric, c.attrs, got, c.want)
		}
	}
	if d.calls != 2 {
		t.Errorf("driver called %d times, want 2", d.calls)
	}
}
