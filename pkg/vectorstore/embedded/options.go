package embedded

// config holds the driver settings; see the With... options.
type config struct {
	exactThreshold int
	hnswM          int
	efConstruction int
	efSearch       int
	snapshotEvery  int
}

func defaultConfig() config {
	return config{
		exactThreshold: 200_000,
		hnswM:          16,
		efConstruction: 100,
		efSearch:       128,
		snapshotEvery:  0,
	}
}

// Option configures Open.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithExactThreshold sets the number of live records above which a
// collection keeps an HNSW graph and answers unfiltered (and weakly filtered)
// dense searches from it instead of an exact scan. Exact scans return the
// true top k; the graph is approximate but faster on large collections.
//
// The default, 200k, comes from BenchmarkSearch on this 2-core machine: an
// exact scan of 100k 384-d vectors takes ~10-20 ms, within the hybrid budget,
// while HNSW recall@10 depends on the data: 0.98 at ef 64 on clustered
// vectors (TestANNGraphRecall) but only 0.18 at ef 128 on uniformly random
// 384-d vectors at 100k. Lower it when embeddings are known to cluster and
// latency matters more than exactness.
func WithExactThreshold(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 0 {
			c.exactThreshold = n
		}
	})
}

// WithHNSW sets the HNSW parameters: m links per node and layer (2·m on
// layer 0; default 16), the candidate list size while inserting (default 100)
// and while searching (default 128; a search uses at least k). Higher values
// raise recall and cost.
func WithHNSW(m, efConstruction, efSearch int) Option {
	return optionFunc(func(c *config) {
		if m > 1 {
			c.hnswM = m
		}
		if efConstruction > 0 {
			c.efConstruction = efConstruction
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
