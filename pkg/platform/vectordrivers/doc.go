// Package vectordrivers opens the vector stores that -vector-store names: embedded
// (bbolt + HNSW + bleve postings in the data dir, package embedded) and milvus (package
// milvusstore). Every service's main imports it.
package vectordrivers
