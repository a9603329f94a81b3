package graphstore

import (
	"context"
	"fmt"
	"math"
	"unicode/utf8"
)

// Validating returns d behind the checks of the Store contract that do not depend on
// the backend: corpus names (CheckKey), the community level of Communities, finite
// PageRank scores and UTF-8 descriptions. An argument that breaks them is ErrInvalid
// and never reaches d, so a driver checks none of them. Each driver's Open returns its
// store behind Validating; Merge's batch and ReplaceCommunities' hierarchy are checked
// by Contribute and NormalizeCommunities, which the drivers call for the forms they
// store.
func Validating(d Store) Store { return validating{d} }

type validating struct{ d Store }

func checkCorpus(corpus string) error { return CheckKey("corpus name", corpus) }

func (v validating) Merge(ctx context.Context, corpus string, batch []ChunkExtraction) error {
	if err := checkCorpus(corpus); err != nil {
		return err
	}
	return v.d.Merge(ctx, corpus, batch)
}

func (v validating) RemoveChunks(ctx context.Context, corpus string, chunkIDs []string) error {
	if err := checkCorpus(corpus); err != nil {
		return err
	}
	return v.d.RemoveChunks(ctx, corpus, chunkIDs)
}

func (v validating) Entity(ctx context.Context, corpus, key string) (Entity, error) {
	if err := checkCorpus(corpus); err != nil {
		return Entity{}, err
	}
	return v.d.Entity(ctx, corpus, key)
}

func (v validating) Entities(ctx context.Context, corpus string, keys []string, opts ...ReadOption) ([]Entity, error) {
	if err := checkCorpus(corpus); err != nil {
		return nil, err
	}
	return v.d.Entities(ctx, corpus, keys, opts...)
}

func (v validating) SetDescriptions(ctx context.Context, corpus string, descs map[string]string) error {
	if err := checkCorpus(corpus); err != nil {
		return err
	}
	if k, bad := firstBad(descs, func(d string) bool { return !utf8.ValidString(d) }); bad {
		return fmt.Errorf("setting description of %q: not UTF-8: %w", k, ErrInvalid)
	}
	return v.d.SetDescriptions(ctx, corpus, descs)
}

func (v validating) RelationshipsOf(ctx context.Context, corpus string, keys []string, limit int) ([]Relationship, error) {
	if err := checkCorpus(corpus); err != nil {
		return nil, err
	}
	return v.d.RelationshipsOf(ctx, corpus, keys, limit)
}

func (v validating) RelationshipsAmong(ctx context.Context, corpus string, keys []string, opts ...ReadOption) ([]Relationship, error) {
	if err := checkCorpus(corpus); err != nil {
		return nil, err
	}
	return v.d.RelationshipsAmong(ctx, corpus, keys, opts...)
}

func (v validating) ChunkEntities(ctx context.Context, corpus string, chunkIDs []string) (map[string][]string, error) {
	if err := checkCorpus(corpus); err != nil {
		return nil, err
	}
	return v.d.ChunkEntities(ctx, corpus, chunkIDs)
}

func (v validating) Neighborhood(ctx context.Context, corpus string, start []string, depth, limit int) ([]Neighbor, error) {
	if err := checkCorpus(corpus); err != nil {
		return nil, err
	}
	return v.d.Neighborhood(ctx, corpus, start, depth, limit)
}

func (v validating) Snapshot(ctx context.Context, corpus string) (Snapshot, error) {
	if err := checkCorpus(corpus); err != nil {
		return Snapshot{}, err
	}
	return v.d.Snapshot(ctx, corpus)
}

func (v validating) SetPageRank(ctx context.Context, corpus string, scores map[string]float64) error {
	if err := checkCorpus(corpus); err != nil {
		return err
	}
	if k, bad := firstBad(scores, func(s float64) bool { return math.IsNaN(s) || math.IsInf(s, 0) }); bad {
		return fmt.Errorf("setting pagerank of %q to %v: %w", k, scores[k], ErrInvalid)
	}
	return v.d.SetPageRank(ctx, corpus, scores)
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
	if err := checkCorpus(corpus); err != nil {
		return err
	}
	return v.d.ReplaceCommunities(ctx, corpus, cs)
}

func (v validating) Communities(ctx context.Context, corpus string, level int) ([]Community, error) {
	if err := checkCorpus(corpus); err != nil {
		return nil, err
	}
	if level < -1 {
		return nil, fmt.Errorf("listing communities at level %d: %w", level, ErrInvalid)
	}
	return v.d.Communities(ctx, corpus, level)
}

func (v validating) Community(ctx context.Context, corpus, id string) (Community, error) {
	if err := checkCorpus(corpus); err != nil {
		return Community{}, err
	}
	return v.d.Community(ctx, corpus, id)
}

func (v validating) Stats(ctx context.Context, corpus string) (Stats, error) {
	if err := checkCorpus(corpus); err != nil {
		return Stats{}, err
	}
	return v.d.Stats(ctx, corpus)
}

func (v validating) Corpora(ctx context.Context) ([]string, error) { return v.d.Corpora(ctx) }

func (v validating) DropCorpus(ctx context.Context, corpus string) error {
	if err := checkCorpus(corpus); err != nil {
		return err
	}
	return v.d.DropCorpus(ctx, corpus)
}

func (v validating) Ping(ctx context.Context) error { return v.d.Ping(ctx) }

func (v validating) Close() error { return v.d.Close() }

// ValidatingAlgorithms returns a behind the corpus name check (CheckKey) of
// Communities; the options are the driver's to check.
func ValidatingAlgorithms(a Algorithms) Algorithms { return validatingAlgorithms{a} }

type validatingAlgorithms struct{ a Algorithms }

func (v validatingAlgorithms) Available(ctx context.Context) (bool, error) { return v.a.Available(ctx) }

func (v validatingAlgorithms) Communities(ctx context.Context, corpus string, o AlgorithmOptions) (AlgorithmResult, error) {
	if err := checkCorpus(corpus); err != nil {
		return AlgorithmResult{}, err
	}
	return v.a.Communities(ctx, corpus, o)
}
