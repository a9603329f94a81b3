package vectorstore

import (
	"context"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"

	"github.com/graphrag/graphrag/pkg/telemetry/calltrace"
)

// instrumentationName names the tracer and the meter of the store calls.
const instrumentationName = "github.com/graphrag/graphrag/pkg/vectorstore"

// Span attributes of the store calls.
const (
	// AttrCollection is the collection a call is about.
	AttrCollection = attribute.Key("graphrag.collection")
	// AttrCorpus is the corpus of the collection: its name up to the last underscore,
	// since the services name collections "<corpus>_<kind>" (schema.Collection).
	AttrCorpus = attribute.Key("graphrag.corpus")
)

// Validating returns d behind the checks of the Store contract that do not depend on
// the backend, in this order: the store not closed (ErrClosed), the context not done,
// then the arguments: k (ValidateK) and List's limit (ValidateLimit), the spec
// (ValidateSpec) and every collection name (ValidateCollectionName). A bad argument is
// ErrInvalidArgument and never reaches d. The vectors and records are the driver's to
// check, against the collection's dimension. Each driver's Open returns its store
// behind Validating.
//
// Every call but Ping and Close is a client span of the global tracer provider,
// "vectorstore.<Method>", with the attributes graphrag.collection and graphrag.corpus;
// a failed call records its error and has the status Error, described by the error's
// kind (errkind.KindOf). Every call is measured on the global meter provider:
// graphrag.vectorstore.calls and .duration by operation, graphrag.vectorstore.errors
// by operation and error kind (calltrace).
func Validating(d Store) Store {
	return &validating{d: d, rec: calltrace.New(instrumentationName, "vectorstore")}
}

type validating struct {
	d      Store
	rec    *calltrace.Recorder
	closed atomic.Bool
}

// collAttrs are the span attributes of a call about the collection coll.
func collAttrs(coll string) []attribute.KeyValue {
	attrs := []attribute.KeyValue{AttrCollection.String(coll)}
	if i := strings.LastIndexByte(coll, '_'); i > 0 {
		attrs = append(attrs, AttrCorpus.String(coll[:i]))
	}
	return attrs
}

// begin checks what every call checks first: the store open, the context live.
func (v *validating) begin(ctx context.Context) error {
	if v.closed.Load() {
		return ErrClosed
	}
	return ctx.Err()
}

// call runs fn as the call op on coll (a span and its measurements) after begin and
// the argument checks, in order; the first that fails is the call's error.
func call[T any](ctx context.Context, v *validating, op, coll string, checks []error, fn func(context.Context) (T, error)) (T, error) {
	return calltrace.Do(ctx, v.rec, op, collAttrs(coll), func(ctx context.Context) (T, error) {
		var zero T
		if err := v.begin(ctx); err != nil {
			return zero, err
		}
		for _, err := range checks {
			if err != nil {
				return zero, err
			}
		}
		return fn(ctx)
	})
}

// none adapts a method that returns only an error to call.
func none(fn func(context.Context) error) func(context.Context) (struct{}, error) {
	return func(ctx context.Context) (struct{}, error) { return struct{}{}, fn(ctx) }
}

func (v *validating) EnsureCollection(ctx context.Context, spec CollectionSpec) error {
	_, err := call(ctx, v, "EnsureCollection", spec.Name, []error{ValidateSpec(spec)}, none(func(ctx context.Context) error {
		return v.d.EnsureCollection(ctx, spec)
	}))
	return err
}

func (v *validating) Upsert(ctx context.Context, coll string, recs []Record) error {
	_, err := call(ctx, v, "Upsert", coll, []error{ValidateCollectionName(coll)}, none(func(ctx context.Context) error {
		return v.d.Upsert(ctx, coll, recs)
	}))
	return err
}

func (v *validating) Get(ctx context.Context, coll string, ids []string) ([]Record, error) {
	return call(ctx, v, "Get", coll, []error{ValidateCollectionName(coll)}, func(ctx context.Context) ([]Record, error) {
		return v.d.Get(ctx, coll, ids)
	})
}

func (v *validating) Attrs(ctx context.Context, coll string, ids []string) (map[string]map[string]string, error) {
	return call(ctx, v, "Attrs", coll, []error{ValidateCollectionName(coll)}, func(ctx context.Context) (map[string]map[string]string, error) {
		return v.d.Attrs(ctx, coll, ids)
	})
}

func (v *validating) Delete(ctx context.Context, coll string, ids []string) error {
	_, err := call(ctx, v, "Delete", coll, []error{ValidateCollectionName(coll)}, none(func(ctx context.Context) error {
		return v.d.Delete(ctx, coll, ids)
	}))
	return err
}

func (v *validating) Search(ctx context.Context, coll string, vec []float32, k int, f Filter) ([]Hit, error) {
	return call(ctx, v, "Search", coll, []error{ValidateK(k), ValidateCollectionName(coll)}, func(ctx context.Context) ([]Hit, error) {
		return v.d.Search(ctx, coll, vec, k, f)
	})
}

func (v *validating) SearchText(ctx context.Context, coll string, query string, k int, f Filter) ([]Hit, error) {
	return call(ctx, v, "SearchText", coll, []error{ValidateK(k), ValidateCollectionName(coll)}, func(ctx context.Context) ([]Hit, error) {
		return v.d.SearchText(ctx, coll, query, k, f)
	})
}

func (v *validating) Count(ctx context.Context, coll string) (int, error) {
	return call(ctx, v, "Count", coll, []error{ValidateCollectionName(coll)}, func(ctx context.Context) (int, error) {
		return v.d.Count(ctx, coll)
	})
}

// page is what List returns.
type page struct {
	ids  []string
	next string
}

func (v *validating) List(ctx context.Context, coll, after string, limit int) ([]string, string, error) {
	p, err := call(ctx, v, "List", coll, []error{ValidateLimit(limit), ValidateCollectionName(coll)}, func(ctx context.Context) (page, error) {
		ids, next, err := v.d.List(ctx, coll, after, limit)
		return page{ids, next}, err
	})
	return p.ids, p.next, err
}

func (v *validating) DropCollection(ctx context.Context, coll string) error {
	_, err := call(ctx, v, "DropCollection", coll, []error{ValidateCollectionName(coll)}, none(func(ctx context.Context) error {
		return v.d.DropCollection(ctx, coll)
	}))
	return err
}

func (v *validating) Collections(ctx context.Context) ([]string, error) {
	return calltrace.Do(ctx, v.rec, "Collections", nil, func(ctx context.Context) ([]string, error) {
		if err := v.begin(ctx); err != nil {
			return nil, err
		}
		return v.d.Collections(ctx)
	})
}

// Ping is not traced: the readiness check pings at every probe.
func (v *validating) Ping(ctx context.Context) error {
	if err := v.begin(ctx); err != nil {
		return err
	}
	return v.d.Ping(ctx)
}

// Close closes d once; every later call is ErrClosed.
func (v *validating) Close() error {
	if v.closed.Swap(true) {
		return nil
	}
	return v.d.Close()
}
