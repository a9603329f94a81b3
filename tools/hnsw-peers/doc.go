// Package hnswpeers compares the embedded vector store's HNSW graph with
// github.com/coder/hnsw on the same realistic vectors (package vecgen), in
// one run: recall@50 against the exact scan, query latency, build time and
// heap. It is a module of its own, outside go.work, so that the peer library
// and its requirements stay out of the versions the workspace selects for the
// platform (docs/adr/0019-hnsw-recall.md, docs/adr/0057-benchmarks-are-tools.md).
// From the repository's root:
//
//	make bench-hnsw-peers
//
// runs cd tools/hnsw-peers && GOWORK=off go test -run XXX -bench . -benchtime 1x -timeout 90m;
// HNSW_PEERS_N=10000 measures one size only.
package hnswpeers
