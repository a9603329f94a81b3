// Package llm is the one client every service uses to talk to an
// OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp server) for
// chat completions and embeddings, through github.com/sashabaranov/go-openai.
//
// A Client adds what each service would otherwise redo:
//
//   - limits: an adaptive concurrency limit per endpoint (chat and embeddings
//     apart), shared by every client of that endpoint in the process: AIMD, cut
//     on 429, 503 and timeouts, grown back while latency holds, never above
//     Config.MaxConcurrency (adaptive.go; Client.Concurrency reports it); a 429
//     with Retry-After pauses the endpoint for every caller; plus optional
//     requests-per-minute and tokens-per-minute throttles (tokens estimated
//     as len/4 before a call, the excess reported by the endpoint charged
//     after it);
//   - a time budget per attempt that follows the model: at least Config.Timeout,
//     twice what max_tokens takes at the completion speed observed, doubled
//     after an attempt that timed out, at most 16 × Config.Timeout (budget.go);
//   - retries with exponential backoff and jitter on 429, 5xx, timeouts,
//     connection errors and malformed answers, honouring Retry-After (seconds
//     or HTTP date) and Retry-After-Ms; never on 400, 401, 403 or 404. A 429
//     with Retry-After is the endpoint pacing its callers: waiting it out does
//     not count against Config.MaxRetries (only against WithMaxRateLimitWait),
//     and ErrRateLimited is of the kind errkind.Unavailable, so a pipeline
//     stage never dead-letters a message for a rate limit;
//   - outages told apart from failing requests: after a call fails with a class
//     an outage causes, GET <base>/models is probed; without an answer the
//     endpoint is down (Outage reports it, errors match ErrOutage) and is
//     probed until it answers. Calls under WaitOutOutages wait for it instead
//     of failing, then start again (outage.go);
//   - errors that say what failed: a *CallError matching one class sentinel
//     (ErrRateLimited, ErrServer, ErrTimeout, ErrUnavailable, ErrBadRequest,
//     ErrUnauthorized, ErrNotFound, ErrBadResponse) with errors.Is, and
//     ErrOutage besides when the endpoint was found down;
//   - a content-addressed cache of successful answers (Cache, with
//     MemoryCache and the JetStream KV backed KVCache shared by replicas), so
//     re-indexing unchanged chunks makes no call; embeddings are cached per
//     text;
//   - ChatJSON, which decodes structured output into a Go type and asks
//     again on invalid JSON;
//   - OpenTelemetry metrics (see the Metric* constants) labelled with kind
//     (chat|embed) and stage (extractor|grapher|summarizer|query, from
//     ChatRequest.Stage or ContextWithStage), the gauge of each endpoint's
//     concurrency limit (MetricConcurrencyLimit, by kind), and in-process
//     Usage counters;
//   - a span per call, SpanChat or SpanEmbed, with the model, the tokens, the
//     requests and retries sent, and the status (tracing.go).
//
// Config.EmbedBaseURL sends embeddings to a server other than BaseURL.
//
// Package llmtest provides a fake endpoint for tests and benchmarks.
package llm
