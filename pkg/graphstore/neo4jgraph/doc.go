// Package neo4jgraph is the graphstore.Store for Neo4j 5, with community
// detection and PageRank run inside the database by the Graph Data Science
// library when it is installed (graphstore.Algorithms, through Store.Algorithms).
//
// It has the same semantics as the embedded boltgraph driver, checked by the
// graphstoretest conformance suite: every aggregate (name, type, descriptions,
// weights, provenance) follows the rules and helpers of package graphstore, so
// both drivers agree byte for byte.
//
// # Graph model
//
// Every node carries the corpus it belongs to; identities are unique per corpus
// (composite uniqueness constraints created at Open):
//
//	(:Corpus {name, levels})
//	(:Chunk {corpus, id, document, hash, contrib})
//	(:Entity {corpus, key, name, type, longest, descriptions, descFP, mentions,
//	          agg, pagerank, summary, summaryFP})
//	(:Chunk)-[:MENTIONS]->(:Entity)                             one per chunk and entity
//	(:Entity)-[:RELATED {pk, type, longest, descriptions, weight, agg, chunks, ws,
//	                     chunks1, ws1, ...}]->(:Entity)
//	(:Community {corpus, id, level, parentId, childIds, members, relationshipCount})
//	(:Membership {corpus, key, communities})                    Entity.Communities
//	(:Layout {name: 'graphstore', typeOther})                   migrations done
//
// Chunk.contrib is the chunk's normalized graphstore.Contribution (JSON) and
// MENTIONS the entity provenance; Entity and RELATED hold the aggregates
// and, in agg (JSON), the counter state they derive from: how many chunks
// mention the entity (or support the pair) and give each name, type and
// description. Entity.ChunkIDs are collected from MENTIONS on read. A pair's
// evidence is kept on its RELATED as pairs of parallel lists, in no particular
// order: chunks<i> (chunk ids) and ws<i> (their strengths), where bucket 0 has
// no number. Relationship.ChunkIDs are all chunks<i> lists, sorted. A Merge
// appends to the last bucket and opens a new one when it is full, so it
// rewrites one bucket of a hub pair (ADR 0039; agg says which bucket is last).
// pk is a hash of corpus and pair, indexed on RELATED, so a pair is found
// without expanding a hub entity.
// Membership is kept apart from Entity because the hierarchy names keys, which
// outlive an entity that disappears and comes back. See ADRs 0029, 0036 and 0039;
// Open migrates a graph that still has the EVIDENCE relationships of ADR 0029,
// and re-derives the types stored as OTHER by the rule before graphstore.TypeOther
// was set aside (Layout.typeOther says it did).
//
// # Errors
//
// Driver errors are translated once, where a transaction returns (translate): a
// closed driver is graphstore.ErrClosed, a client error caused by the input is
// graphstore.ErrInvalid, and a server that cannot serve now (unreachable, a
// connection lost, a transient error or leader switch that outlasted the driver's
// retries) is an outage, errkind.Down(graphstore.Dependency, err), of kind
// Unavailable: a stage waits it out and the HTTP API answers 503 (ADR 0065). Ping
// fails at once when the server cannot be reached.
//
// # Writes
//
// A Merge is one managed write transaction (ExecuteWrite, which retries transient
// errors such as deadlocks) of a fixed sequence of parameterized UNWIND
// statements, whatever the batch size: lock the batch's chunks in id order and
// read their stored contributions, lock (or create) every affected entity in key
// order and read its state, read the states of the affected pairs, replace the
// MENTIONS of the chunks whose content hash changed, then write the states,
// with each changed chunk's old contribution subtracted and its new one added,
// and the aggregates derived from them; the evidence lists are edited in place
// (the changed chunks' entries removed from bucket 0, the new ones appended to
// the last bucket). A pair with several buckets that loses a chunk has all its
// buckets read, edited in Go and the changed ones written. Locking before reading is what makes
// concurrent merges of overlapping chunks correct under Neo4j's read committed
// isolation; the fixed lock order keeps deadlocks rare. After the locks, nodes
// and relationships are addressed by element id. So a Merge reads and writes in
// proportion to what the batch says, not to how often the corpus mentions the
// entities it touches (TestMergeProfile checks this with PROFILE), except for
// the distinct names, types and descriptions in a touched state.
//
// Weights are sums of strengths in chunk id order. While every strength of a
// pair is a whole number and the sum stays below 2^53, adding and subtracting
// is exact in any order and the weight is updated in place; otherwise it is
// re-summed from all the pair's evidence buckets, of which only the changed
// ones are written back.
//
// No Cypher statement is built from input: all are constants, and user text
// travels only as parameters.
package neo4jgraph
