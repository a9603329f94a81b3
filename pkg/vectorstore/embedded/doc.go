// Package embedded is the in-process vectorstore driver: pure Go, persistent
// in one directory, crash-safe and safe for concurrent use.
//
// Layout and recovery:
//   - records live in bbolt (vectors.db), the single source of truth; every
//     write is an fsynced transaction and gets a per-collection sequence
//     number (bbolt's bucket sequence), so an acknowledged Upsert survives
//     kill -9;
//   - dense search uses an in-memory HNSW graph (github.com/coder/hnsw) keyed
//     by record sequence, not by ID: a replaced or deleted record leaves a dead
//     node that is skipped at search time, because coder/hnsw's in-place
//     Delete can leave empty layers that panic on search. The graph is
//     compacted when dead nodes outnumber live ones. Small collections and
//     selective filters use an exact scan instead (see WithExactThreshold);
//   - the graph is snapshotted to coll/<name>/hnsw.snap (Close, Checkpoint,
//     WithSnapshotEvery). On open the snapshot is loaded if intact, and
//     reconciled with bbolt: nodes whose sequence is no longer live become
//     dead, live records missing from it are added. A torn or stale snapshot
//     is ignored and the graph rebuilt, so no crash can lose or corrupt data;
//   - lexical collections have a bleve index (coll/<name>/text.bleve) with the
//     BM25 scoring model and the English analyzer. It stores the sequence it
//     covers in the same batch as the documents; on open, records and
//     deletion markers newer than that are replayed from bbolt.
package embedded
