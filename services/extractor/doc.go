// Package extractor is the first stage of indexing, run as horizontally scaled replicas.
//
// It consumes documents (graphrag.documents.<corpus>), splits them into token-aware,
// Markdown-section-aware chunks, scores each chunk's information content, writes chunk
// text, metadata and embedding to the vector store's chunk collection, and publishes one
// chunk event per chunk. It then consumes chunk events (graphrag.chunks.<corpus>, shared by
// every replica through one durable consumer per corpus) and extracts entities and
// relationships, with an LLM (structured output against a JSON Schema, optional gleaning)
// or offline (proper nouns, noun phrases, sentence co-occurrence), publishing one
// extraction event per chunk. A chunk the model cannot answer in valid JSON after its
// retries is extracted offline, and its event's method says so.
package extractor
