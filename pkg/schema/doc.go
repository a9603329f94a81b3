// Package schema is the storage schema the pipeline's stages share: the names
// under which one stage writes what another reads, and the formats of the
// records' texts. The extractor writes chunk records that the query service
// reads, the grapher writes entity records and progress records, the
// summarizer writes community reports that the query service, the export and
// the bench read; each name and format is defined here once, and the stages
// use these definitions instead of spelling them again.
//
// It holds:
//   - the vector collections of a corpus (Kind, Collection);
//   - the attributes of their records (Chunk*, Entity*, Report*), the string
//     map vectorstore.Record.Attrs;
//   - the text of a chunk record (vectorstore.Record.Text): ChunkText writes
//     its heading (the document title and section path, ChunkHeading), a
//     blank line and the body; SplitChunkText reads them back, given the
//     record's title and section;
//   - the community report (Report, Finding): its JSON is the attribute
//     ReportJSON; its Text (title, a blank line, the summary, a line per
//     finding) is the record's text, its SummaryText the title and summary;
//     SplitReportText reads title and summary back;
//   - the key-value buckets and object store the pipeline provisions, and the
//     keys of their records (StateBucket and its keys, LeaseBucket and
//     GrapherLease, DocumentBucket and DocumentObject).
//
// The readers take the record's attributes as well as its text: a title or
// heading may hold " › " or a blank line, and a body blank lines, so no
// separator found in the text alone says where a heading ends.
//
// What is private to one backend stays in its driver: Milvus field names in
// package milvusstore, Neo4j labels and properties in package neo4jgraph,
// bbolt buckets in the embedded drivers. Values encoded as JSON (the
// grapher's pipeline.GraphState, taxonomy.Taxonomy, a community Report) are
// Go types whose struct tags are the one definition of their fields; readers
// decode them through those types. The wire contract (events and subjects)
// is package events.
//
// The names and formats are persistent: renaming one orphans the data written
// under the old name, and a reader must read every text written before, so a
// change here is a data migration.
package schema
