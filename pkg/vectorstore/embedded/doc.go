// Package embedded is the in-process vectorstore driver: pure Go, persistent
// in one directory, crash-safe and safe for concurrent use.
//
// Layout and recovery:
//   - records live in bbolt (vectors.db), the single source of truth; every
//     write is an fsynced transaction and gets a per-collection sequence
//     number (bbolt's bucket sequence), so an acknowledged Upsert survives
//     kill -9; Upserts that arrive while a write runs are committed together
//     in the next transaction and text index batch (group commit), each
//     returning once its records are durable;
//   - each collection's openindex bucket holds, per record ID, what an open
//     needs of the record (sequence, analyzed text length, attribute bytes),
//     written in the transaction that writes or deletes the record: an open
//     iterates it and reads a whole record (1.5 KB of vector and its text)
//     only when the HNSW snapshot lacks the vector or the text index the
//     text, instead of reading the whole file. A file written before the
//     bucket existed gains it on its first open, in one transaction
//     (docs/adr/0043-vector-store-open-index.md);
//   - memory holds each record's normalized vector quantized to int8 with
//     one scale (qvec, a quarter of the float32 bytes) and its attributes
//     up to 64 bytes a value (attrSet); bbolt holds the exact vector and the
//     long values (docs/adr/0035-quantized-vectors.md);
//   - dense search ranks by the quantized vectors (AVX2 integer dot
//     products), scanning all candidates up to WithExactThreshold live
//     records and above it walking an in-memory HNSW graph (annGraph;
//     github.com/coder/hnsw was measured first and rejected, see annGraph),
//     then re-ranks the best candidates by their exact vectors read from
//     bbolt, and any other candidate whose quantization error bound could
//     still place it in the top k (refine): scans stay exact. Graph nodes
//     are keyed by record sequence, not ID: a
//     replaced or deleted record leaves a dead node that searches skip, and
//     the graph is rebuilt when dead nodes outnumber live ones;
//   - the graph is snapshotted to collections/<name>/hnsw.snap with a
//     checksum, the collection's incarnation and the sequence it covers: on
//     Close and Checkpoint, and in the background after a graph build and
//     after insertions amounting to a quarter of the graph (WithSnapshotEvery),
//     so that an open after a crash loads the graph instead of rebuilding it
//     (a rebuild costs ~1 ms per record). On open an intact snapshot is
//     reconciled with bbolt (nodes no longer live become dead, live records it
//     lacks are added); a damaged or foreign one is ignored and the graph
//     rebuilt, so no crash can lose or corrupt anything;
//   - lexical collections keep a bleve index (collections/<name>/text.bleve,
//     English analyzer, attributes as keyword fields). Each batch is durable
//     when bleve returns and carries the sequence it covers; on open, records
//     and deletion markers newer than that are replayed from bbolt, and a
//     damaged index is rebuilt. Ranking is Okapi BM25 (k1 1.2, b 0.75)
//     computed from bleve's postings, because bleve's own "bm25" model
//     distorts term-frequency saturation (see searchBM25).
package embedded
