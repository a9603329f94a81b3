// Package community finds the hierarchical communities of a corpus's entity graph and
// ranks its entities: Leiden (level 0 finest, levels nested) and PageRank, either inside
// the graph store when it runs them natively (Neo4j with Graph Data Science) or in pure
// Go on a snapshot of the graph (packages leiden and pagerank). Both paths give the same
// contract: community records with content-derived ids, parent and child links and
// internal relationship counts.
//
// It is the one implementation of detection: the grapher service writes what Detect
// returns, the benchmark harness builds its corpora with it, and the Neo4j store's GDS
// path converts its projection with Graph, so the three cannot drift apart.
package community
