//go:build integration

package main

import "testing"

// TestAcronymDocumentOnNeo4jAndMilvus: the document of issue 33 completes on Neo4j
// and Milvus with the offline defaults.
func TestAcronymDocumentOnNeo4jAndMilvus(t *testing.T) {
	env := needEnv(t, "GRAPHRAG_TEST_NEO4J_URI", "GRAPHRAG_TEST_MILVUS_ADDR")
	flags := append(neo4jFlags(env["GRAPHRAG_TEST_NEO4J_URI"]), "-vector-store", "milvus", "-milvus-address", env["GRAPHRAG_TEST_MILVUS_ADDR"])
	p := testPlatform(t, t.TempDir(), flags...)
	startStack(t, p, fastConfig())
	checkAcronymDocument(t, p, uniqueCorpus("acronym"))
}
