// Package stack wires the four services (extractor, grapher, summarizer, query engine)
// on one platform, as `graphrag up`, `graphrag eval` and the end-to-end tests run them
// in one process.
package stack
