// Package bench is `graphrag bench`: it measures retrieval latency, pipeline throughput
// by extractor replicas, the map phase of global search, the graph algorithms and the
// event codec and bus, and writes docs/benchmarks.md. It builds its corpora with the
// production code (the grapher's community detection, the summarizer's extractive
// reports, the query engine), never with copies of it.
package bench
