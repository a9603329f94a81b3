// Package graphdrivers opens the graph stores that -graph-store names: embedded (bbolt
// in the data dir, package boltgraph) and neo4j (package neo4jgraph, with Graph Data
// Science when the server has it). The mains of the services that read or write the
// graph import it; the extractor's does not, so its binary does not link the Neo4j
// driver.
package graphdrivers
