package embedded

import "math"

// config holds the driver settings; see the With... options.
type config struct {
	exactThreshold int
	hnswM          int
	efSearch       int
	snapshotEvery  int
}

func defaultConfig() config {
	return config{
		exactThreshold: math.MaxInt,
		hnswM:          16,
		efSearch:       64,
		snapshotEvery:  0,
	}
}

// Option configures Open.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithExactThreshold sets the number of live records above which a
// collection keeps an HNSW graph and answers unfiltered (and weakly filtered)
// dense searches from it instead of an exact scan. The default is never:
// measured on 384-dimensional vectors, coder/hnsw v0.6.1 reaches a recall@10
// of only 0.01-0.15 (its search stops at the first expansion that does not
// improve the best distance, and it lacks the neighbour-selection heuristic),
// while an exact scan of 100k vectors takes a few ms on two cores (see
// BenchmarkSearch). Set a threshold only for collections too large to scan
// where approximate results are acceptable.
func WithExactThreshold(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 0 {
			c.exactThreshold = n
		}
	})
}

// WithHNSW sets the HNSW parameters: m neighbours per node (default 16) and
// the candidate list size used when building and searching (default 64).
// Higher values raise recall and cost.
func WithHNSW(m, efSearch int) Option {
	return optionFunc(func(c *config) {
		if m > 1 {
			c.hnswM = m
		}
		if efSearch > 0 {
			c.efSearch = efSearch
		}
	})
}

// WithSnapshotEvery writes a collection's HNSW snapshot after this many graph
// insertions since the last one (default 0: only on Close and Checkpoint).
// Snapshots bound the replay work on the next open after a crash.
func WithSnapshotEvery(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 0 {
			c.snapshotEvery = n
		}
	})
}
