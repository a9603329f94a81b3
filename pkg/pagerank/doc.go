// Package pagerank ranks the nodes of an undirected weighted graph
// (wgraph.Graph) by weighted PageRank and by Personalized PageRank.
//
// A random walker leaves node u along each incident edge with probability
// proportional to its weight (a self loop counts once, as one way out); with
// probability 1−damping it instead jumps to a node drawn from the teleport
// vector, uniform for PageRank and the normalised seed weights for
// Personalized PageRank. The mass of nodes without edges is redistributed by
// the teleport vector. Power iteration stops when the L1 change falls below the
// tolerance or after MaxIterations; scores always sum to 1. The computation is
// sequential and deterministic.
package pagerank
