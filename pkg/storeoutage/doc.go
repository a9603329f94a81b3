// Package storeoutage stops a store server (Neo4j, Milvus) while a corpus is indexed,
// starts it again after a set time, and measures what the pipeline did meanwhile: how
// status named the outage, what questions asked during it were answered, how long after
// the server's return the waiting stages went on. The integration test of a Neo4j outage
// (cmd/graphrag) and the chaos suite's store-outage scenario (tools/cmd/chaos) share it.
//
// A Server is a backend of scripts/integration: its stop.sh and start.sh, run on the same
// run directory, keep the server's data and port, so the platform's clients reconnect to
// it. What the indexed graph must be afterwards is the caller's to check.
package storeoutage
