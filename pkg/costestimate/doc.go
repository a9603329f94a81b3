// Package costestimate says, before anything is published, what indexing a set of
// documents will ask of the chat and embedding models: calls (or requests), prompt and
// completion tokens of each kind of work (extraction, gleaning, description summaries,
// community reports; chunk, entity and report embeddings), and their price. graphrag
// estimate and the query API's upload with ?dry_run=true both use it.
//
// What the pipeline does to a document before any model answers is computed, not
// guessed: the documents are chunked by package chunking with the extractor's settings,
// low-information chunks are left out of extraction as the extractor leaves them, and
// every extraction prompt is the template of package prompts rendered on its chunk.
// What follows extraction depends on the model's answers, which no estimate has; it is
// sized from the graph the offline extractor (package offlinextract) finds in the same
// chunks, merged by entity key as the grapher merges it: an extraction answer the size
// of that graph's entities and relationships (at most the request's max_tokens), the
// description summaries of the entities that gather the grapher's threshold of
// descriptions, one embedding text per entity, and the communities package community
// detects on that graph with the grapher's defaults, each with its context rendered as
// the summarizer renders it. Report lengths are calibrated (calibration.go).
//
// Tokens are counted at one per 4 bytes, the rule of the counting endpoints of package
// llmtest and of graphrag eval. docs/benchmarks.md, "Cost estimate before indexing",
// compares the estimate with measured runs; docs/adr/0058-cost-estimate-before-indexing.md
// says why it is built this way.
package costestimate
