// Package grapher is the stage that owns the knowledge graph. By default it runs as a
// single active instance per bus: it holds the grapher lease (pkg/bus Lease) while it runs,
// and a second grapher waits for it. With Config.Shards the corpora are split into shards
// (pipeline.ShardOf) that the grapher replicas share: each shard is a lease held by one
// replica at a time and a durable consumer of its corpora's extractions, and each replica
// holds its fair share, taking a dead replica's shards and giving some to one that joins
// (shards.go, ADR 0064; docs/operations.md). Either way the merges of a corpus run in one
// process at a time.
//
// It consumes extraction events, normalizes entity names with pkg/normalize (the one
// normalization the query service also uses), and merges them into the graph store in
// group-committed batches; merging is keyed by chunk, so a replayed event changes nothing.
// Each corpus is detected on its own goroutine, at most Config.DetectConcurrency at once.
// When a corpus has been quiet for a debounce interval with nothing of it still waiting
// for the chunker or the extractor (or, while busy, after many changes and a graph grown
// -detect-growth-fold since the last run, so that re-detections, each of which can
// rewrite most reports, stay few while a corpus streams in) it runs community detection:
// hierarchical Leiden and PageRank (in the graph store when it has them natively, Neo4j
// GDS, else in pure Go on a snapshot, starting from the stored hierarchy unless
// -detect-warm=false, ADR 0042), writes the hierarchy and the
// scores back, embeds changed entity descriptions (or names, ADR 0050) for query-time entity linking, refreshes
// the entity-type taxonomy, and publishes a community event for every community that has
// no report yet. Community ids derive from level and membership, and a community whose
// membership barely changed keeps its predecessor's id (community.Stabilize), so it keeps
// its report and incremental indexing does not recompute the world (unless it held an
// entity gone from the graph: its report names it). Records of
// entities and communities that are gone are found by enumerating the vector collections
// with vectorstore List, which has no size cap (a search has: 16,384 hits on Milvus).
package grapher
