// Package curation is the curation log: per corpus, the operations people apply to the
// graph extraction built (merge entities, split one back out, rename, set a type, pin a
// description, delete or add a relationship, undo an earlier operation), kept as one
// value of the state bucket and appended to by compare-and-set.
//
// The graph is a function of the log and the extractions: the grapher folds the log's
// effective operations into a State (Fold) and curates every chunk's extraction through
// it (State.Apply) before merging it, so a curation survives re-publication and
// re-extraction. The query service checks and appends operations (Curator) and reads
// the applied state (AppliedState) to resolve names curation merged or renamed away.
// See docs/adr/0069-curation-log.md.
package curation
