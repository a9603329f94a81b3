// Package llm is the one client every service uses to talk to an
// OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp server) for
// chat completions and embeddings, through github.com/sashabaranov/go-openai.
//
// A Client adds what each service would otherwise redo:
//
//   - limits: at most Config.MaxConcurrency requests in flight, plus
//     requests-per-minute and tokens-per-minute throttles (tokens estimated
//     as len/4 before a call, the excess reported by the endpoint charged
//     after it);
//   - a timeout per attempt, and retries with exponential backoff and jitter
//     on 429, 5xx, timeouts, connection errors and malformed answers,
//     honouring Retry-After (seconds or HTTP date) and Retry-After-Ms;
//     never on 400, 401, 403 or 404;
//   - errors that say what failed: a *CallError matching one class sentinel
//     (ErrRateLimited, ErrServer, ErrTimeout, ErrUnavailable, ErrBadRequest,
//     ErrUnauthorized, ErrNotFound, ErrBadResponse) with errors.Is;
//   - a content-addressed cache of successful answers (Cache, with
//     MemoryCache and the JetStream KV backed KVCache shared by replicas), so
//     re-indexing unchanged chunks makes no call; embeddings are cached per
//     text;
//   - ChatJSON, which decodes structured output into a Go type and asks
//     again on invalid JSON;
//   - OpenTelemetry metrics (see the Metric* constants) labelled with kind
//     (chat|embed) and stage (extractor|grapher|summarizer|query, from
//     ChatRequest.Stage or ContextWithStage), and in-process Usage counters.
//
// Config.EmbedBaseURL sends embeddings to a server other than BaseURL.
//
// Package llmtest provides a fake endpoint for tests and benchmarks.
package llm
