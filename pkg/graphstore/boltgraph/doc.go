// Package boltgraph is the embedded graphstore.Store: pure Go, one file on disk
// (go.etcd.io/bbolt), crash safe and safe for concurrent use. It is the default
// graph store when the platform runs as one process with no external server.
//
// Every Merge (and every other write) is one bbolt read-write transaction committed
// with bbolt's default fsync, so a write that returned nil survives a crash and a
// write that did not return is either wholly there or wholly absent. bbolt allows
// one writer at a time and any number of readers alongside it.
//
// # Layout
//
// A top-level bucket "info" holds the layout version ("format" = "2"). Open migrates
// a version 1 file (the same buckets with JSON values) in one transaction and refuses
// any other version with ErrFormat. A top-level bucket "corpora" holds one bucket per
// corpus, which holds:
//
//	chunks     chunkID                    -> the chunk's graphstore.Contribution
//	ents       key                        -> entity aggregate: PageRank first, chunk
//	                                         counts per name and type, mention count,
//	                                         description set summary, summary
//	entchunks  lp(key) chunkID            -> empty (provenance index)
//	entdescs   lp(key) description        -> number of chunks giving it (uvarint)
//	rels       lp(source) target          -> relationship aggregate: weight first,
//	                                         chunk count, type counts, description
//	                                         set summary
//	relchunks  lp(source) lp(target) chunkID -> the chunk's strength (float64 bits)
//	reldescs   lp(source) lp(target) description -> number of chunks (uvarint)
//	adj        lp(a) b                    -> undirected weight (float64 bits) and the
//	                                         number of directed relationships (1 or 2),
//	                                         stored under both (a,b) and (b,a)
//	comms      communityID                -> graphstore.Community
//	membership key                        -> community id per level
//	meta       "levels"                   -> number of community levels
//
// lp(s) is s prefixed by its length as a uvarint, so composite keys need no
// separator and a prefix scan over lp(a) yields exactly the entries of a.
//
// Descriptions are kept out of the aggregate records because a hub entity gets a
// different one from nearly every chunk: the record holds only their count, an
// order-free fingerprint (sum of hashes, which tells whether a summary is still
// current) and the longest, recomputed from entdescs only when it is removed. So a
// Merge touching a hub entity costs the same as one touching a fresh entity.
//
// The aggregates are derived state: a Merge subtracts a chunk's previous
// contribution (read from chunks) and adds the new one, which gives the replace
// semantics graphstore documents. A chunk whose stored contribution is byte for
// byte the new one (a redelivered message) is skipped without touching anything.
// Weights are re-summed from relchunks in chunk id order after every change, so
// they do not drift through float additions and subtractions and do not depend on
// the order chunks arrived in. Check recomputes all derived state from chunks and
// compares (an fsck). A Merge writes every bucket in key order: bbolt inserts into
// a node's sorted slice, so new keys in random order cost time quadratic in the
// number a node takes in one transaction.
//
// Values use a hand-written binary codec (codec.go): fields in a fixed order,
// varint integers, length-prefixed strings, 8-byte floats and hashes. An entity's
// PageRank sits at offset 0 so Neighborhood ranks the entities it reaches without
// decoding them. Layout 1 stored JSON; at the density of a realistic 10k-chunk
// corpus, decoding it was 28 % of the query CPU, and BenchmarkCodec measures an
// entity record round trip about 20 times faster in binary (docs/benchmarks.md).
// gob was rejected earlier: it pays its type header per record.
//
// bbolt runs with NoFreelistSync and the map freelist, as etcd does: the freelist is
// rebuilt at open rather than written on every commit; data pages are still fsync'ed.
// Close writes it once (one last commit), so that only an Open after a crash scans the
// file for free pages: at 100k chunks that scan reads all 5 GB.
package boltgraph
