// Package engine is the query service's retrieval engine, independent of any transport:
// the HTTP API (httpapi), the MCP tools (mcpserver) and the graphrag CLI call the same
// Engine. Answers are written by an answer.Answerer that New chooses once (package
// answer: with a model, or extractive); the console's browsing reads are package
// explore's.
//
// Local questions are answered by entity linking, graph traversal and the fusion of
// dense, lexical, graph and subject result lists (FuseText: the text lists by standard
// scores, the passages they are confident of first, the rest by Reciprocal Rank Fusion),
// with community context; global questions by map-reduce over community reports, which
// are selected by their members' entity vectors and the question's words (reports need
// no vector of their own, ADR 0070). The subject list (subject.go)
// is the explicit second hop: the passages about the entities the question names or the
// best passages mention. Searches that do not need each other's results (the lexical
// search and the query's embedding; then the dense search, entity linking and the
// community report search; then the graph and subject lists) run concurrently; their
// results are combined in a fixed order, so an answer does not depend on which finished
// first.
//
// The defects of the system this replaces each have a regression test here: fusion is
// real RRF; chunks found only by the graph are fetched, never dropped; entity names are
// normalized by pkg/normalize exactly as the grapher writes them; global questions use
// map-reduce; every community level is selectable; community context reaches the
// generation prompt (tested in package answer, which writes the prompt).
package engine
