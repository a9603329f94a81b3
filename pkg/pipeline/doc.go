// Package pipeline is the topology of the indexing pipeline on the bus: the streams,
// one durable consumer per stage shared by every corpus and every replica of the stage,
// the document records that order a document's versions and deletions, the grapher's
// progress record, the functions that publish documents, deletions and corpus drops,
// and the per-corpus status that `graphrag status` prints.
//
// Why one consumer per stage (ADR 0022): the number of corpora has no ceiling (one
// consumer per corpus met the server's limit of consumers per stream), nothing needs to
// discover new corpora, and per-document order does not depend on the consumer: a
// document's record, written only by compare-and-set with the stream sequence as the
// version, decides which event owns the document. Streams keep Limits retention (not
// WorkQueue) so that history stays available for status and for replaying into new
// stores.
package pipeline
