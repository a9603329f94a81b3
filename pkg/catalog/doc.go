// Package catalog says what the platform holds: the corpora with their counts and
// state, a corpus's indexing status (the numbers `graphrag status` prints, with the
// dead letters grouped by reason and the state of community detection), and a corpus's
// documents with their state (pending, indexed, failed with the reason). It reads the
// pipeline's records and streams on the bus and the stores' counts; it writes nothing.
// The query service's resource routes and MCP tools are built on it.
//
// Where each answer comes from:
//   - a document's record is the chunker's record in schema.StateBucket (its chunks and
//     content hash; read by one function, documentRecord, so that a change of the
//     record's format is a one-place change here);
//   - a document is pending while a version of it waits in the document stream above
//     the chunker's acknowledgement floor and is not the one recorded;
//   - a document failed when a stage dead-lettered one of its events (the document,
//     a chunk, an extraction) after its record was last written; the reason is the
//     dead letter's.
package catalog
