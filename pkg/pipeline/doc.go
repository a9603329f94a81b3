// Package pipeline is the topology of the indexing pipeline on the bus: the streams, one
// durable consumer per stage and corpus, the discovery of new corpora, the grapher's
// progress record, and the per-corpus status that `graphrag status` prints.
//
// Why one consumer per stage and corpus: a busy corpus cannot starve another, a corpus can
// be re-indexed or dropped alone, and the consumer's own counters give exact per-corpus
// pending, in-flight and done numbers. Replicas of a stage share each consumer, which is
// what gives work-queue semantics. Streams keep Limits retention (not WorkQueue) so that
// history stays available for status and for replaying a corpus into a new store.
package pipeline
