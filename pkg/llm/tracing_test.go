package llm_test

import (
	"errors"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
	"github.com/graphrag/graphrag/pkg/telemetry/calltrace/calltracetest"
)

// Every Chat, ChatStream and Embed call is one span with the model, the stage, the
// tokens the endpoint reported, the retries and the status; a cached answer sends
// nothing and says so; a failed call has the status Error described by its class.
func TestSpans(t *testing.T) {
	p := calltracetest.Install(t)
	srv := newFake(t)
	srv.Inject(llmtest.ServerError())
	c := newClient(t, srv, func(cfg *llm.Config) { cfg.MaxRetries = 1 },
		llm.WithCache(llm.NewMemoryCache(10)), llm.WithSleeper((&sleepRecorder{}).sleep))
	ctx := t.Context()
	for range 2 { // one call with one retry, then a cache hit
		if _, err := c.Chat(ctx, chatReq("hello")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.ChatStream(ctx, chatReq("stream"), func(string) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Embed(llm.ContextWithStage(ctx, "summarizer"), []string{"x", "y"}); err != nil {
		t.Fatal(err)
	}
	srv.Inject(llmtest.Status(400, `{"error":{"message":"no"}}`))
	if _, err := c.Chat(ctx, chatReq("refused")); !errors.Is(err, llm.ErrBadRequest) {
		t.Fatalf("Chat = %v, want ErrBadRequest", err)
	}

	type want struct {
		name, model, stage, status string
		retries, requests          int64
		tokens, stream             bool
		code                       codes.Code
	}
	wants := []want{
		{llm.SpanChat, "chat-model", "extractor", "ok", 1, 1, true, false, codes.Unset},
		{llm.SpanChat, "chat-model", "extractor", "cached", 0, 0, false, false, codes.Unset},
		{llm.SpanChat, "chat-model", "extractor", "ok", 0, 1, true, true, codes.Unset},
		{llm.SpanEmbed, "embed-model", "summarizer", "ok", 0, 1, true, false, codes.Unset},
		{llm.SpanChat, "chat-model", "extractor", "bad request", 0, 1, false, false, codes.Error},
	}
	spans := p.Spans.GetSpans()
	if len(spans) != len(wants) {
		t.Fatalf("%d spans, want %d: %v", len(spans), len(wants), spanNames(spans))
	}
	for i, sp := range spans {
		a := attrMap(sp.Attributes)
		got := want{
			name: sp.Name, model: a[llm.AttrModel].AsString(), stage: a[llm.AttrStage].AsString(),
			status: a[llm.AttrStatus].AsString(), retries: a[llm.AttrRetries].AsInt64(),
			requests: a[llm.AttrRequests].AsInt64(), tokens: a[llm.AttrInputTokens].AsInt64() > 0,
			stream: a[llm.AttrStream].AsBool(), code: sp.Status.Code,
		}
		if got != wants[i] {
			t.Errorf("span %d = %+v, want %+v", i, got, wants[i])
		}
	}
	if a := attrMap(spans[0].Attributes); a[llm.AttrOutputTokens].AsInt64() <= 0 {
		t.Errorf("chat span without output tokens: %v", spans[0].Attributes)
	}
	if a := attrMap(spans[3].Attributes); a[llm.AttrTexts].AsInt64() != 2 || a[llm.AttrOperation].AsString() != "embeddings" {
		t.Errorf("embed span attributes %v", spans[3].Attributes)
	}
}

func attrMap(kvs []attribute.KeyValue) map[attribute.Key]attribute.Value {
	m := make(map[attribute.Key]attribute.Value, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

func spanNames(spans tracetest.SpanStubs) []string {
	names := make([]string, len(spans))
	for i, sp := range spans {
		names[i] = sp.Name
	}
	return names
}
