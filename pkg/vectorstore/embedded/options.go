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
		exactThreshold: 50_000,
		hnswM:          24,
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
// The default, 50k, comes from BenchmarkANNRecall and the peer benchmark
// (tools/hnsw-peers) on vectors shaped like sentence embeddings
// (package vecgen), 2 shared cores: at 100k records an exact scan took p50
// 46 ms under load while the graph answered in 6 ms with recall@50 0.98
// against it (docs/adr/0019-hnsw-recall.md); below ~50k a scan costs a few
// milliseconds and stays exact. Raise it to keep exact results longer.
func WithExactThreshold(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 0 {
			c.exactThreshold = n
		}
	})
}

// WithHNSW sets the HNSW parameters: m links per node and layer (2·m on
// layer 0; default 24), the candidate list size while inserting (default
// 100) and while searching (default 128; a search of k results uses at least
// 6·k). Higher values raise recall and cost.
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
// insertions since the last one. The default, 0, writes one after insertions
// amounting to a quarter of the graph (at least 4096), after a graph build,
// and on Close and Checkpoint. Snapshots are written in the background and
// bound the replay work of the next open after a crash: an open loads the
// snapshot and inserts only the records it lacks.
func WithSnapshotEvery(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 0 {
			c.snapshotEvery = n
		}
	})
}
