// Package neo4jgraph is the graphstore.Store for Neo4j 5, with community
// detection and PageRank run inside the database by the Graph Data Science
// library when it is installed (graphstore.Algorithms, through Store.Algorithms).
//
// It has the same semantics as the embedded boltgraph driver, checked by the
// graphstoretest conformance suite: every aggregate (name, type, descriptions,
// weights, provenance) is recomputed from per-chunk provenance with the helpers of
// package graphstore, so both drivers agree byte for byte.
//
// # Graph model
//
// Every node carries the corpus it belongs to; identities are unique per corpus
// (composite uniqueness constraints created at Open):
//
//	(:Corpus {name, levels})
//	(:Chunk {corpus, id, document, hash, relSrc, relDst})
//	(:Entity {corpus, key, name, type, longest, descriptions, descFP, mentions,
//	          chunkIds, pagerank, summary, summaryFP})
//	(:Chunk)-[:MENTIONS {names, types, descs}]->(:Entity)            one per chunk and entity
//	(:Entity)-[:EVIDENCE {chunk, strength, types, descs}]->(:Entity)  one per chunk and pair
//	(:Entity)-[:RELATED {type, longest, descriptions, weight, chunkIds}]->(:Entity)
//	(:Community {corpus, id, level, parentId, childIds, members, relationshipCount})
//	(:Membership {corpus, key, communities})                         Entity.Communities
//
// MENTIONS and EVIDENCE are the provenance; Entity and RELATED properties are the
// aggregates derived from it. Membership is kept apart from Entity because the
// hierarchy names keys, which outlive an entity that disappears and comes back.
//
// # Writes
//
// A Merge is one managed write transaction (ExecuteWrite, which retries transient
// errors such as deadlocks) of a fixed sequence of parameterized UNWIND statements:
// lock the batch's chunks in id order and read their previous contribution, lock
// (or create) every affected entity in key order, replace the provenance of the
// chunks whose content hash changed, then read back the provenance of the affected
// entities and pairs and write their aggregates. Locking before reading is what
// makes concurrent merges of overlapping chunks correct under Neo4j's read
// committed isolation; the fixed lock order keeps deadlocks rare. Recomputing an
// entity reads all of its mentions, so a hub entity costs in proportion to the
// chunks mentioning it (see BenchmarkMerge).
//
// No Cypher statement is built from input: all are constants, and user text
// travels only as parameters.
package neo4jgraph
