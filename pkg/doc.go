// Package pkg is the root of the shared libraries of the GraphRAG platform.
// Each subdirectory is one package with one job; see its doc.go.
package pkg
