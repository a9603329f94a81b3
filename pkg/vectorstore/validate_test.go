package vectorstore_test

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/graphrag/graphrag/pkg/telemetry/calltrace"
	"github.com/graphrag/graphrag/pkg/telemetry/calltrace/calltracetest"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// counting is a driver that counts the calls reaching it; every method answers nil.
type counting struct {
	vectorstore.Store // nil: a method not overridden below panics
	calls, closes     int
}

func (c *counting) EnsureCollection(context.Context, vectorstore.CollectionSpec) error {
	c.calls++
	return nil
}

func (c *counting) Get(context.Context, string, []string) ([]vectorstore.Record, error) {
	c.calls++
	return nil, nil
}

func (c *counting) Search(context.Context, string, []float32, int, vectorstore.Filter) ([]vectorstore.Hit, error) {
	c.calls++
	return nil, nil
}

func (c *counting) SearchText(context.Context, string, string, int, vectorstore.Filter) ([]vectorstore.Hit, error) {
	c.calls++
	return nil, nil
}

func (c *counting) List(context.Context, string, string, int) ([]string, string, error) {
	c.calls++
	return []string{"a"}, "a", nil
}

func (c *counting) DropCollection(context.Context, string) error {
	c.calls++
	return nil
}

func (c *counting) Collections(context.Context) ([]string, error) {
	c.calls++
	return nil, nil
}

func (c *counting) Ping(context.Context) error {
	c.calls++
	return nil
}

func (c *counting) Close() error {
	c.closes++
	return nil
}

// A bad argument is ErrInvalidArgument and never reaches the driver; k and limit are
// checked before the collection's name, as Milvus did.
func TestValidatingRefuses(t *testing.T) {
	ctx := t.Context()
	v := []float32{1}
	tests := []struct {
		name string
		call func(s vectorstore.Store) error
		want string
	}{
		{"spec name", func(s vectorstore.Store) error {
			return s.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: "a-b", Dim: 1})
		}, `vectorstore: invalid argument: collection name "a-b": only letters, digits and '_' are allowed, not starting with a digit`},
		{"spec dim", func(s vectorstore.Store) error {
			return s.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: "c", Dim: 0})
		}, `vectorstore: invalid argument: collection "c": dimension 0 must be positive`},
		{"get name", func(s vectorstore.Store) error { _, err := s.Get(ctx, "", nil); return err },
			`vectorstore: invalid argument: collection name "" must have 1 to 255 characters`},
		{"search k before name", func(s vectorstore.Store) error {
			_, err := s.Search(ctx, "9", v, 0, vectorstore.Filter{})
			return err
		}, "vectorstore: invalid argument: k must be at least 1, got 0"},
		{"text k", func(s vectorstore.Store) error {
			_, err := s.SearchText(ctx, "c", "q", -1, vectorstore.Filter{})
			return err
		}, "vectorstore: invalid argument: k must be at least 1, got -1"},
		{"list limit", func(s vectorstore.Store) error { _, _, err := s.List(ctx, "c", "", 0); return err },
			"vectorstore: invalid argument: limit must be at least 1, got 0"},
		{"drop name", func(s vectorstore.Store) error { return s.DropCollection(ctx, "c d") },
			`vectorstore: invalid argument: collection name "c d": only letters, digits and '_' are allowed, not starting with a digit`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := &counting{}
			err := tc.call(vectorstore.Validating(d))
			if !errors.Is(err, vectorstore.ErrInvalidArgument) || err.Error() != tc.want {
				t.Fatalf("error %v, want ErrInvalidArgument %q", err, tc.want)
			}
			if d.calls != 0 {
				t.Fatalf("the driver was called %d times", d.calls)
			}
		})
	}
	d := &counting{}
	s := vectorstore.Validating(d)
	if ids, next, err := s.List(ctx, "c", "", 1); err != nil || len(ids) != 1 || next != "a" {
		t.Fatalf("List = %v, %q, %v", ids, next, err)
	}
	if d.calls != 1 {
		t.Fatalf("a valid call reached the driver %d times, want 1", d.calls)
	}
}

// After Close every call is ErrClosed, before its arguments or its context are looked
// at, and the driver is closed once.
func TestValidatingClosed(t *testing.T) {
	d := &counting{}
	s := vectorstore.Validating(d)
	for range 2 {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if d.closes != 1 {
		t.Fatalf("driver closed %d times, want 1", d.closes)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Ping(ctx); !errors.Is(err, vectorstore.ErrClosed) {
		t.Fatalf("Ping = %v", err)
	}
	if _, err := s.Collections(ctx); !errors.Is(err, vectorstore.ErrClosed) {
		t.Fatalf("Collections = %v", err)
	}
	if _, err := s.Search(ctx, "", nil, 0, vectorstore.Filter{}); !errors.Is(err, vectorstore.ErrClosed) {
		t.Fatalf("Search with bad arguments = %v", err)
	}
	if d.calls != 0 {
		t.Fatalf("the driver was called %d times", d.calls)
	}
}

// A canceled context comes before the arguments, as in both drivers.
func TestValidatingCanceled(t *testing.T) {
	d := &counting{}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := vectorstore.Validating(d).Get(ctx, "", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Get = %v, want context.Canceled", err)
	}
}

// Every call but Ping and Close is one client span named after the method, with the
// collection and its corpus; a failed one has the status Error described by the
// error's kind. Every call is counted and timed, and a failure counted by its kind.
func TestValidatingTelemetry(t *testing.T) {
	p := calltracetest.Install(t)
	s := vectorstore.Validating(&counting{})
	ctx := t.Context()
	if _, err := s.Get(ctx, "demo_corpus_chunks", []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SearchText(ctx, "demo_entities", "q", 0, vectorstore.Filter{}); err == nil {
		t.Fatal("SearchText with k 0 succeeded")
	}
	if _, err := s.Collections(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	type got struct {
		name, coll, corpus string
		code               codes.Code
		desc               string
	}
	want := []got{
		{"vectorstore.Get", "demo_corpus_chunks", "demo_corpus", codes.Unset, ""},
		{"vectorstore.SearchText", "demo_entities", "demo", codes.Error, "invalid"},
		{"vectorstore.Collections", "", "", codes.Unset, ""},
	}
	spans := p.Spans.GetSpans()
	if len(spans) != len(want) {
		t.Fatalf("%d spans, want %d", len(spans), len(want))
	}
	for i, sp := range spans {
		g := got{name: sp.Name, code: sp.Status.Code, desc: sp.Status.Description}
		for _, a := range sp.Attributes {
			switch a.Key {
			case vectorstore.AttrCollection:
				g.coll = a.Value.AsString()
			case vectorstore.AttrCorpus:
				g.corpus = a.Value.AsString()
			}
		}
		if g != want[i] {
			t.Errorf("span %d = %+v, want %+v", i, g, want[i])
		}
		if sp.SpanKind != trace.SpanKindClient {
			t.Errorf("span %s is of kind %v, want client", sp.Name, sp.SpanKind)
		}
	}
	op := func(name string) attribute.KeyValue { return calltrace.AttrOperation.String(name) }
	for _, c := range []struct {
		metric string
		attrs  []attribute.KeyValue
		want   int64
	}{
		{"graphrag.vectorstore.calls", nil, 3},
		{"graphrag.vectorstore.calls", []attribute.KeyValue{op("Get")}, 1},
		{"graphrag.vectorstore.duration", []attribute.KeyValue{op("SearchText")}, 1},
		{"graphrag.vectorstore.errors", nil, 1},
		{"graphrag.vectorstore.errors", []attribute.KeyValue{op("SearchText"), calltrace.AttrErrorKind.String("invalid")}, 1},
	} {
		if got := p.Count(t, c.metric, c.attrs...); got != c.want {
			t.Errorf("%s%v = %d, want %d", c.metric, c.attrs, got, c.want)
		}
	}
}
