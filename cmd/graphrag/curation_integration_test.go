//go:build integration

package main

import "testing"

// TestCurationOnNeo4j is TestCurationEndToEnd with the graph in Neo4j: a curated
// merge survives re-publishing and deleting documents there too.
func TestCurationOnNeo4j(t *testing.T) {
	env := needEnv(t, "GRAPHRAG_TEST_NEO4J_URI")
	curationEndToEnd(t, testPlatform(t, t.TempDir(), neo4jFlags(env["GRAPHRAG_TEST_NEO4J_URI"])...), uniqueCorpus("curate"))
}
