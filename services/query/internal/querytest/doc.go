// Package querytest holds the test fixtures the query service's packages share: embedded
// stores in a test's temporary directory, and a small indexed corpus to ask questions of.
// It is imported by tests only.
package querytest
