// Package evidence holds what an answer is written from: the passages, entities,
// relationships and community reports local retrieval found (Retrieved), and the
// partial answers of a global search's map phase. The query engine produces them, the
// answerers (package answer) read them, and the transports serialize them: Retrieved
// is the "context" of a response (the Context schema of the HTTP API's OpenAPI
// document). The engine names them too (engine.Retrieved is evidence.Retrieved).
//
// It holds types only, so that the answerers depend on no retrieval code.
package evidence
