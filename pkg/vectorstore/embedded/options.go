package embedded

// config holds the driver settings; see the With... options.
type config struct {
	exactThreshold int
	hnswM          int
	efSearch       int
	snapshotEvery  int
}

func defaultConfig() config {
	return config{
		exactThreshold: 20000,
		hnswM:          16,
		efSearch:       64,
		snapshotEvery:  0,
	}
}

// Option configures Open.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithExactThreshold sets the number of candidate records up to which dense
// search scans exactly instead of walking the HNSW graph (default 20000: an
// exact scan of 20k vectors of dim 384 takes a few ms on one core, see
// BenchmarkSearch). It applies to whole collections and to the records left by
// a filter.
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
