// Package phase times and traces the phases of one query request: the retrieval engine's
// searches and the answering around them (package ask). A response's timings_ms is a
// Timer's Done.
package phase
