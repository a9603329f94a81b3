// Package grapher is the stage that owns the knowledge graph. It runs as a single active
// instance per bus: it holds the grapher lease (pkg/bus Lease) while it runs, and a second
// grapher waits for it (see docs/operations.md).
//
// It consumes extraction events, normalizes entity names with pkg/normalize (the one
// normalization the query service also uses), and merges them into the graph store in
// group-committed batches; merging is keyed by chunk, so a replayed event changes nothing.
// When a corpus has been quiet for a debounce interval (or after many changes) it runs
// community detection: hierarchical Leiden and PageRank (in the graph store when it has
// them natively, Neo4j GDS, else in pure Go on a snapshot), writes the hierarchy and the
// scores back, embeds changed entity descriptions for query-time entity linking, refreshes
// the entity-type taxonomy, and publishes a community event for every community that has
// no report yet. Community ids derive from level and membership, so an unchanged community
// keeps its report and incremental indexing does not recompute the world. Records of
// entities and communities that are gone are found by enumerating the vector collections
// with vectorstore List, which has no size cap (a search has: 16,384 hits on Milvus).
package grapher
