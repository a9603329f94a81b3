// Package bench is the benchmark tool (tools/cmd/bench, `make bench`), outside the shipped
// graphrag binary: it measures indexing and retrieval on realistic
// corpora (a real corpus scaled by copies with entity names rewritten, indexed by a
// child `graphrag eval` per size), retrieval latency on a synthetic corpus, pipeline
// throughput by extractor replicas, the map phase of global search, the graph
// algorithms, re-summarization, global question cost and the event codec and bus, and
// writes docs/benchmarks.md above its hand-measured part. It builds its corpora with the
// production code (the grapher's community detection, the summarizer's extractive
// reports, the query engine), never with copies of it.
package bench
