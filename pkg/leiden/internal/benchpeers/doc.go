// Command benchpeers is the Go half of `make bench-peers` (scripts/bench-peers):
// it writes the benchmark's edge lists and runs pkg/leiden on them for the
// Python driver, which runs python-igraph, leidenalg and graspologic-native on
// the same files and scores every partition with one modularity function.
//
//	benchpeers gen -out DIR                 synthetic graphs (wgraphtest.Sparse, as the Go benchmarks)
//	benchpeers export -data-dir D -out F    the entity graph of an embedded index (boltgraph snapshot)
//	benchpeers serve                        JSON lines on stdin/stdout: load a graph, run Leiden
//
// Edge lists are in the format of package edgelist.
package main
