// Package export writes a corpus out of the stores for analysis elsewhere: its
// entities, relationships, communities with their reports, and chunks with their
// document ids, in one of three formats:
//
//   - jsonl: one JSON object per line in entities.jsonl, relationships.jsonl,
//     communities.jsonl (each with its report) and chunks.jsonl, in this platform's
//     own terms (entity keys, community levels with 0 the coarsest, the root, as
//     everywhere in the platform's outputs);
//   - graphml: graph.graphml, the entity graph for Gephi, networkx or any GraphML
//     reader (entities as nodes with their community per level, relationships as
//     directed edges), with communities.jsonl and chunks.jsonl beside it, since
//     GraphML has no place for reports and passages;
//   - parquet: the output tables of Microsoft GraphRAG (entities, relationships,
//     communities, community_reports, text_units), with its column names and types
//     (its level numbering is the platform's: 0 the coarsest), so that its query
//     notebooks load them; the column mapping is in docs/operations.md.
//
// Files go to a Sink: a directory (the CLI) or a zip archive streamed to an HTTP
// response (the query service). Everything but the chunks is read into memory first
// (degrees, community relationships and titles need the whole graph); the chunks are
// read and written a batch at a time.
package export
