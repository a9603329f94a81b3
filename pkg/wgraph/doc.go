// Package wgraph is a compact, immutable, undirected weighted graph in CSR form
// (offsets, neighbours, weights) with the helpers the community and centrality
// algorithms need: modularity, connected components, a connectivity check for a
// partition, splitting of disconnected communities and aggregation of a graph
// by a partition.
//
// Nodes are the integers 0..N-1. Parallel edges are summed when the graph is
// built. Self loops are kept apart from the neighbour lists: a loop of weight w
// adds 2w to the node's degree, the usual convention under which modularity of
// an aggregated graph equals modularity of the original one.
package wgraph
