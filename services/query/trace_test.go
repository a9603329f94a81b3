package query_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
	"github.com/graphrag/graphrag/pkg/service"
	"github.com/graphrag/graphrag/pkg/telemetry/calltrace/calltracetest"
	"github.com/graphrag/graphrag/services/query"
	"github.com/graphrag/graphrag/services/query/ask"
	"github.com/graphrag/graphrag/services/query/internal/phase"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// The trace of one local question asked over HTTP holds, under the request's server
// span, the engine's phases, the graph and vector store calls, the model's embedding
// and chat calls and the answer, each a descendant of the request's span.
func TestQueryTrace(t *testing.T) {
	p := calltracetest.Install(t)
	st := querytest.Demo(t)
	// The model endpoint embeds as the fixture was embedded, so the stores match.
	model := llmtest.NewServer(llmtest.WithDimension(querytest.Dim), llmtest.WithEmbedder(func(s string) []float32 {
		v, err := st.Embedder.Embed(context.Background(), []string{s})
		if err != nil {
			panic(err)
		}
		return v[0]
	}), llmtest.WithChatReply(func(openai.ChatCompletionRequest) string { return "The Analytical Engine [1]." }))
	t.Cleanup(model.Close)
	client, err := llm.New(llm.Config{BaseURL: model.URL(), ChatModel: "chat-model", EmbedModel: "embed-model"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	svc, err := query.New(query.DefaultConfig(), query.Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: client, LLM: client,
		Logger: querytest.Logger(), Version: "v9.9.9"})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	svc.Mount(mux)
	hs := service.HTTPServer("127.0.0.1:0", mux)
	if err := hs.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hs.Stop(context.Background()) })

	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+hs.Addr()+"/v1/query",
		strings.NewReader(`{"corpus":"demo","query":"Who designed the Analytical Engine?","mode":"local"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out ask.Response
	err = json.NewDecoder(resp.Body).Decode(&out)
	_ = resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/query: %d, %v", resp.StatusCode, err)
	}
	if err := hs.Stop(t.Context()); err != nil { // the server span ends before Stop returns
		t.Fatal(err)
	}

	spans := p.Spans.GetSpans()
	byID := map[trace.SpanID]tracetest.SpanStub{}
	var root tracetest.SpanStub
	for _, sp := range spans {
		byID[sp.SpanContext.SpanID()] = sp
		if sp.Name == "POST /v1/query" && sp.SpanKind == trace.SpanKindServer {
			root = sp
		}
	}
	if !root.SpanContext.IsValid() {
		t.Fatalf("no server span POST /v1/query among %d spans", len(spans))
	}
	under := func(sp tracetest.SpanStub) bool {
		for sp.Parent.IsValid() {
			if sp.Parent.SpanID() == root.SpanContext.SpanID() {
				return true
			}
			sp = byID[sp.Parent.SpanID()]
		}
		return false
	}
	seen := map[string]bool{}
	counts := map[string]int{}
	for _, sp := range spans {
		if sp.SpanContext.TraceID() != root.SpanContext.TraceID() || sp.SpanContext.SpanID() == root.SpanContext.SpanID() {
			continue // the fixture's writes, or the request itself
		}
		if !under(sp) {
			t.Errorf("span %s is not under the request's span", sp.Name)
		}
		prefix, _, _ := strings.Cut(sp.Name, ".")
		seen[prefix] = true
		seen[sp.Name] = true
		counts[sp.Name]++
	}
	n := 0
	for _, c := range counts {
		n += c
	}
	t.Logf("%d spans under the request's: %v", n, counts)
	for _, want := range []string{"graphstore", "vectorstore", "vectorstore.Search", "vectorstore.SearchText",
		llm.SpanChat, llm.SpanEmbed, "answer.Local"} {
		if !seen[want] {
			t.Errorf("no %s span in the trace", want)
		}
	}
	for name := range out.Timings {
		if name != "total" && !seen[phase.SpanPrefix+name] {
			t.Errorf("no span for the phase %s", name)
		}
	}
	if len(out.Timings) < 6 {
		t.Errorf("timings %v: too few phases", out.Timings)
	}
}
