package summarizer

import (
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
	"github.com/graphrag/graphrag/pkg/schema"
)

const modelReport = `{"title":"Alpha and Beta","summary":"Two entities.","findings":[{"summary":"s","explanation":"e"}],"rating":5,"rating_explanation":"r"}`

// withModel gives the summarizer a client of srv with fast retries and probes.
func withModel(t *testing.T, ts testSummarizer, srv *llmtest.Server, timeout time.Duration) {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), ChatModel: "test", MaxRetries: 2, Timeout: timeout},
		llm.WithBackoff(time.Millisecond, 5*time.Millisecond), llm.WithProbeInterval(20*time.Millisecond, 100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ts.s.deps.LLM = c
}

func (ts testSummarizer) method(t *testing.T, id string) string {
	t.Helper()
	recs, err := ts.v.Get(t.Context(), schema.Collection("demo", schema.Communities), []string{id})
	if err != nil || len(recs) != 1 {
		t.Fatalf("report of %s: %v %v", id, recs, err)
	}
	return recs[0].Attrs[schema.ReportMethod]
}

// A model that answers its probe but gives no report within its largest time budget
// gets the extractive report written instead: one slow report must not keep the corpus
// from completing.
func TestReportFallsBackWhenTheModelTimesOut(t *testing.T) {
	srv := llmtest.NewServer(llmtest.WithLatency(time.Hour))
	t.Cleanup(srv.Close)
	ts := newTestSummarizer(t, nil)
	withModel(t, ts, srv, 20*time.Millisecond)
	if err := ts.s.pausing(ts.s.handleCommunity)(t.Context(), "demo", communityMsg(t, "c0-x", "run1")); err != nil {
		t.Fatalf("handler: %v, want the extractive fallback", err)
	}
	if m := ts.method(t, "c0-x"); m != "extractive/v1 (model timed out)" {
		t.Fatalf("method %q", m)
	}
}

// While the model endpoint is down the handler waits (the message is neither failed nor
// dead-lettered); when it answers again, the model writes the report.
func TestReportWaitsOutAModelOutage(t *testing.T) {
	srv := llmtest.NewServer(llmtest.WithChatReply(func(openai.ChatCompletionRequest) string { return modelReport }))
	t.Cleanup(srv.Close)
	ts := newTestSummarizer(t, nil)
	withModel(t, ts, srv, 5*time.Second)
	srv.Down()
	done := make(chan error, 1)
	msg := communityMsg(t, "c0-x", "run1")
	go func() { done <- ts.s.pausing(ts.s.handleCommunity)(t.Context(), "demo", msg) }()
	deadline := time.Now().Add(20 * time.Second)
	for down, _, _ := ts.s.deps.LLM.Outage(); !down; down, _, _ = ts.s.deps.LLM.Outage() {
		if time.Now().After(deadline) {
			t.Fatal("the outage was never noticed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("the handler returned during the outage: %v", err)
	default:
	}
	srv.Up()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the handler did not resume")
	}
	if m := ts.method(t, "c0-x"); !strings.HasPrefix(m, "llm/") {
		t.Fatalf("method %q, want the model's report", m)
	}
}
