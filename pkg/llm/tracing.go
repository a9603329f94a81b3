package llm

import (
	"context"
	"errors"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracerName names the tracer of the model calls.
const tracerName = "github.com/graphrag/graphrag/pkg/llm"

// Span names and attributes of the model calls. The gen_ai ones are OpenTelemetry's
// semantic conventions for generative AI clients.
const (
	// SpanChat is a Chat, ChatStream or JSON call; SpanEmbed an Embed call.
	SpanChat  = "llm.chat"
	SpanEmbed = "llm.embed"

	AttrOperation    = attribute.Key("gen_ai.operation.name") // "chat" or "embeddings"
	AttrModel        = attribute.Key("gen_ai.request.model")
	AttrInputTokens  = attribute.Key("gen_ai.usage.input_tokens")  // prompt tokens the endpoint reported
	AttrOutputTokens = attribute.Key("gen_ai.usage.output_tokens") // completion tokens the endpoint reported
	AttrStage        = attribute.Key("graphrag.llm.stage")
	AttrRetries      = attribute.Key("graphrag.llm.retries")  // requests sent again after a failure
	AttrRequests     = attribute.Key("graphrag.llm.requests") // requests that reached the endpoint, retries not counted
	AttrTexts        = attribute.Key("graphrag.llm.texts")    // texts asked of Embed
	// AttrStatus is "ok", "cached" (answered from the cache, nothing sent) or, for a
	// failed call, its class (the reason of llm.errors: "timeout", "rate limited"...).
	AttrStatus = attribute.Key("graphrag.llm.status")
	AttrStream = attribute.Key("graphrag.llm.stream")
)

// callTrace is the span of one model call and what the requests sent for it
// (recordCall, instruments.retry) add to it, found through the call's context.
type callTrace struct {
	span                      trace.Span
	requests, retries         atomic.Int64
	inputTokens, outputTokens atomic.Int64
}

type callTraceKey struct{}

// startTrace starts the span name of a call to model for stage, as a client span
// child of ctx's, and returns the context the call's requests are sent with.
func startTrace(ctx context.Context, name, operation, model, stage string, attrs ...attribute.KeyValue) (context.Context, *callTrace) {
	attrs = append(attrs, AttrOperation.String(operation), AttrModel.String(model), AttrStage.String(stage))
	ctx, span := otel.Tracer(tracerName).Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attrs...))
	ct := &callTrace{span: span}
	return context.WithValue(ctx, callTraceKey{}, ct), ct
}

// traceOf returns the call's trace in ctx, or nil outside a traced call.
func traceOf(ctx context.Context) *callTrace {
	ct, _ := ctx.Value(callTraceKey{}).(*callTrace)
	return ct
}

// sent notes a request that reached the endpoint and the tokens it reported.
func (ct *callTrace) sent(prompt, completion int) {
	if ct == nil {
		return
	}
	ct.requests.Add(1)
	ct.inputTokens.Add(int64(prompt))
	ct.outputTokens.Add(int64(completion))
}

// retried notes a request sent again.
func (ct *callTrace) retried() {
	if ct != nil {
		ct.retries.Add(1)
	}
}

// end ends the call's span with its outcome; a failed call records err and has the
// status Error described by its class.
func (ct *callTrace) end(err error) {
	status := "ok"
	if ct.requests.Load() == 0 {
		status = "cached"
	}
	if err != nil {
		status = "error"
		if ce, ok := errors.AsType[*CallError](err); ok {
			status = reason(ce.Class)
		}
		ct.span.RecordError(err)
		ct.span.SetStatus(codes.Error, status)
	}
	attrs := []attribute.KeyValue{AttrStatus.String(status), AttrRequests.Int64(ct.requests.Load()),
		AttrRetries.Int64(ct.retries.Load())}
	if n := ct.inputTokens.Load(); n > 0 {
		attrs = append(attrs, AttrInputTokens.Int64(n))
	}
	if n := ct.outputTokens.Load(); n > 0 {
		attrs = append(attrs, AttrOutputTokens.Int64(n))
	}
	ct.span.SetAttributes(attrs...)
	ct.span.End()
}
