// Package llmtest is a fake OpenAI-compatible endpoint for tests and
// benchmarks of code that uses package llm (or go-openai directly).
//
// The Server answers POST /v1/chat/completions (plain JSON and SSE streams)
// and POST /v1/embeddings with deterministic content (and GET /v1/models), and
// can model a real endpoint: a fixed latency, a concurrency limit beyond which
// requests queue, a token and request budget per window answered with 429 and
// Retry-After past it as hosted APIs do (WithTokenBudget, BudgetUsage), scripted replies, injected faults (429 with Retry-After,
// 500, garbage bodies, hangs), and an outage (Down, then Up: connections
// dropped in between). It counts calls and records the peak number of
// requests that arrived concurrently.
package llmtest
