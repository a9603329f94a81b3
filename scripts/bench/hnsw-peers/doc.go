// Package hnswpeers compares the embedded vector store's HNSW graph with
// github.com/coder/hnsw on the same realistic vectors (package vecgen), in
// one run: recall@50 against the exact scan, query latency, build time and
// heap. It is a separate module (GOWORK=off) so that the peer library stays
// out of the platform's dependencies; see docs/adr/0019-hnsw-recall.md.
//
//	cd scripts/bench/hnsw-peers && GOWORK=off go test -run XXX -bench . -benchtime 1x -timeout 60m
package hnswpeers
