// Package edgelist reads and writes the plain edge lists that the peer
// benchmark (scripts/bench-peers) hands to pkg/leiden and to the Python
// libraries alike: a header line "# nodes N edges M", then one "u v w" line
// per undirected edge (u < v, or u = v for a self loop), node ids 0..N-1 and
// weights printed so that they parse back to the same float64. Files whose
// name ends in .gz are gzip-compressed.
package edgelist
