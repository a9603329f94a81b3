// Package schema is the storage schema the pipeline's stages share: the names
// under which one stage writes what another reads. The extractor writes chunk
// records that the query service reads, the grapher writes entity records and
// progress records, the summarizer writes community reports; each name is
// defined here once, and the stages use these constants instead of spelling
// the names again.
//
// It holds:
//   - the vector collections of a corpus (Kind, Collection);
//   - the attributes of their records (Chunk*, Entity*, Report*), the string
//     map vectorstore.Record.Attrs;
//   - the key-value buckets and object store the pipeline provisions, and the
//     keys of their records (StateBucket and its keys, LeaseBucket and
//     GrapherLease, DocumentBucket and DocumentObject).
//
// What is private to one backend stays in its driver: Milvus field names in
// package milvusstore, Neo4j labels and properties in package neo4jgraph,
// bbolt buckets in the embedded drivers. Values encoded as JSON (the
// grapher's pipeline.GraphState, taxonomy.Taxonomy, a community report) are
// Go types whose struct tags are the one definition of their fields; readers
// decode them through those types. The wire contract (events and subjects)
// is package events.
//
// The names are persistent: renaming one orphans the data written under the
// old name, so a change here is a data migration.
package schema
