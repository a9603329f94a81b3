package graphstore

import (
	"context"
	"fmt"
	"math"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"

	"github.com/graphrag/graphrag/pkg/telemetry/calltrace"
)

// instrumentationName names the tracer of the store calls.
const instrumentationName = "github.com/graphrag/graphrag/pkg/graphstore"

// Validating returns d behind the checks of the Store contract that do not depend on
// the backend: corpus names (CheckKey), the community level of Communities, finite
// PageRank scores and UTF-8 descriptions. An argument that breaks them is ErrInvalid
// and never reaches d, so a driver checks none of them. Each driver's Open returns its
// store behind Validating; Merge's batch and ReplaceCommunities' hierarchy are checked
// by Contribute and NormalizeCommunities, which the drivers call for the forms they
// store.
//
// Every call is a span of the global tracer provider, "graphstore.<Method>", with the
// corpus as the attribute graphrag.corpus; a failed call records its error and has the
// status Error, described by the error's kind (errkind.KindOf). Every call is measured
// too, on the global meter provider: graphrag.graphstore.calls and .duration by
// operation, graphrag.graphstore.errors by operation and error kind (calltrace).
func Validating(d Store) Store { return validating{d: d, rec: newRecorder()} }

func newRecorder() *calltrace.Recorder { return calltrace.New(instrumentationName, "graphstore") }

type validating struct {
	d   Store
	rec *calltrace.Recorder
}

func checkCorpus(corpus string) error { return CheckKey("corpus name", corpus) }

// call runs fn as the call op on corpus (a span and its measurements), after checking
// the corpus name when check is set.
func call[T any](ctx context.Context, rec *calltrace.Recorder, op, corpus string, check bool, fn func(context.Context) (T, error)) (T, error) {
	attrs := []attribute.KeyValue{attribute.String("graphrag.corpus", corpus)}
	return calltrace.Do(ctx, rec, op, attrs, func(ctx context.Context) (T, error) {
		if check {
			if err := checkCorpus(corpus); err != nil {
				var zero T
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

func (v validating) Merge(ctx context.Context, corpus string, batch []ChunkExtraction) error {
	_, err := call(ctx, v.rec, "Merge", corpus, true, none(func(ctx context.Context) error {
		return v.d.Merge(ctx, corpus, batch)
	}))
	return err
}

func (v validating) RemoveChunks(ctx context.Context, corpus string, chunkIDs []string) error {
	_, err := call(ctx, v.rec, "RemoveChunks", corpus, true, none(func(ctx context.Context) error {
		return v.d.RemoveChunks(ctx, corpus, chunkIDs)
	}))
	return err
}

func (v validating) Entity(ctx context.Context, corpus, key string) (Entity, error) {
	return call(ctx, v.rec, "Entity", corpus, true, func(ctx context.Context) (Entity, error) {
		return v.d.Entity(ctx, corpus, key)
	})
}

func (v validating) Entities(ctx context.Context, corpus string, keys []string, opts ...ReadOption) ([]Entity, error) {
	return call(ctx, v.rec, "Entities", corpus, true, func(ctx context.Context) ([]Entity, error) {
		return v.d.Entities(ctx, corpus, keys, opts...)
	})
}

func (v validating) SetDescriptions(ctx context.Context, corpus string, descs map[string]string) error {
	_, err := call(ctx, v.rec, "SetDescriptions", corpus, true, none(func(ctx context.Context) error {
		if k, bad := firstBad(descs, func(d string) bool { return !utf8.ValidString(d) }); bad {
			return fmt.Errorf("setting description of %q: not UTF-8: %w", k, ErrInvalid)
		}
		return v.d.SetDescriptions(ctx, corpus, descs)
	}))
	return err
}

func (v validating) RelationshipsOf(ctx context.Context, corpus string, keys []string, limit int) ([]Relationship, error) {
	return call(ctx, v.rec, "RelationshipsOf", corpus, true, func(ctx context.Context) ([]Relationship, error) {
		return v.d.RelationshipsOf(ctx, corpus, keys, limit)
	})
}

func (v validating) RelationshipsAmong(ctx context.Context, corpus string, keys []string, opts ...ReadOption) ([]Relationship, error) {
	return call(ctx, v.rec, "RelationshipsAmong", corpus, true, func(ctx context.Context) ([]Relationship, error) {
		return v.d.RelationshipsAmong(ctx, corpus, keys, opts...)
	})
}

func (v validating) ChunkEntities(ctx context.Context, corpus string, chunkIDs []string) (map[string][]string, error) {
	return call(ctx, v.rec, "ChunkEntities", corpus, true, func(ctx context.Context) (map[string][]string, error) {
		return v.d.ChunkEntities(ctx, corpus, chunkIDs)
	})
}

func (v validating) Contributions(ctx context.Context, corpus string, chunkIDs []string) (map[string]Contribution, error) {
	return call(ctx, v.rec, "Contributions", corpus, true, func(ctx context.Context) (map[string]Contribution, error) {
		return v.d.Contributions(ctx, corpus, chunkIDs)
	})
}

func (v validating) Neighborhood(ctx context.Context, corpus string, start []string, depth, limit int) ([]Neighbor, error) {
	return call(ctx, v.rec, "Neighborhood", corpus, true, func(ctx context.Context) ([]Neighbor, error) {
		return v.d.Neighborhood(ctx, corpus, start, depth, limit)
	})
}

func (v validating) Snapshot(ctx context.Context, corpus string) (Snapshot, error) {
	return call(ctx, v.rec, "Snapshot", corpus, true, func(ctx context.Context) (Snapshot, error) {
		return v.d.Snapshot(ctx, corpus)
	})
}

func (v validating) SetPageRank(ctx context.Context, corpus string, scores map[string]float64) error {
	_, err := call(ctx, v.rec, "SetPageRank", corpus, true, none(func(ctx context.Context) error {
		if k, bad := firstBad(scores, func(s float64) bool { return math.IsNaN(s) || math.IsInf(s, 0) }); bad {
			return fmt.Errorf("setting pagerank of %q to %v: %w", k, scores[k], ErrInvalid)
		}
		return v.d.SetPageRank(ctx, corpus, scores)
	}))
	return err
}

// firstBad returns the smallest key whose value is bad, so that the error names the
// same key whatever the map's order, without sorting the map.
func firstBad[V any](m map[string]V, bad func(V) bool) (string, bool) {
	first, found := "", false
	for k, val := range m {
		if bad(val) && (!found || k < first) {
			first, found = k, true
		}
	}
	return first, found
}

func (v validating) ReplaceCommunities(ctx context.Context, corpus string, cs []Community) error {
	_, err := call(ctx, v.rec, "ReplaceCommunities", corpus, true, none(func(ctx context.Context) error {
		return v.d.ReplaceCommunities(ctx, corpus, cs)
	}))
	return err
}

func (v validating) Communities(ctx context.Context, corpus string, level int) ([]Community, error) {
	return call(ctx, v.rec, "Communities", corpus, true, func(ctx context.Context) ([]Community, error) {
		if level < -1 {
			return nil, fmt.Errorf("listing communities at level %d: %w", level, ErrInvalid)
		}
		return v.d.Communities(ctx, corpus, level)
	})
}

func (v validating) Community(ctx context.Context, corpus, id string) (Community, error) {
	return call(ctx, v.rec, "Community", corpus, true, func(ctx context.Context) (Community, error) {
		return v.d.Community(ctx, corpus, id)
	})
}

func (v validating) Stats(ctx context.Context, corpus string) (Stats, error) {
	return call(ctx, v.rec, "Stats", corpus, true, func(ctx context.Context) (Stats, error) {
		return v.d.Stats(ctx, corpus)
	})
}

func (v validating) Levels(ctx context.Context, corpus string) (int, error) {
	return call(ctx, v.rec, "Levels", corpus, true, func(ctx context.Context) (int, error) {
		return v.d.Levels(ctx, corpus)
	})
}

func (v validating) Corpora(ctx context.Context) ([]string, error) {
	return call(ctx, v.rec, "Corpora", "", false, v.d.Corpora)
}

func (v validating) DropCorpus(ctx context.Context, corpus string) error {
	_, err := call(ctx, v.rec, "DropCorpus", corpus, true, none(func(ctx context.Context) error {
		return v.d.DropCorpus(ctx, corpus)
	}))
	return err
}

// Ping and Close are not traced: the readiness check pings at every probe.
func (v validating) Ping(ctx context.Context) error { return v.d.Ping(ctx) }

func (v validating) Close() error { return v.d.Close() }

// ValidatingAlgorithms returns a behind the corpus name check (CheckKey) of
// Communities, in a span as Validating's; the options are the driver's to check.
func ValidatingAlgorithms(a Algorithms) Algorithms {
	return validatingAlgorithms{a: a, rec: newRecorder()}
}

type validatingAlgorithms struct {
	a   Algorithms
	rec *calltrace.Recorder
}

func (v validatingAlgorithms) Available(ctx context.Context) (bool, error) { return v.a.Available(ctx) }

func (v validatingAlgorithms) Communities(ctx context.Context, corpus string, o AlgorithmOptions) (AlgorithmResult, error) {
	return call(ctx, v.rec, "Algorithms.Communities", corpus, true, func(ctx context.Context) (AlgorithmResult, error) {
		return v.a.Communities(ctx, corpus, o)
	})
}
