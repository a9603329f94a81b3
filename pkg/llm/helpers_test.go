package llm_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
)

// sleepRecorder replaces real backoff sleeps and records what was asked.
type sleepRecorder struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.delays = append(s.delays, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleepRecorder) recorded() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.delays...)
}

// newFake starts a fake endpoint closed at the end of the test.
func newFake(t *testing.T, opts ...llmtest.Option) *llmtest.Server {
	t.Helper()
	s := llmtest.NewServer(opts...)
	t.Cleanup(s.Close)
	return s
}

// newClient builds a client for srv; mod edits the config first.
func newClient(t *testing.T, srv *llmtest.Server, mod func(*llm.Config), opts ...llm.Option) *llm.Client {
	t.Helper()
	cfg := llm.Config{
		BaseURL: srv.URL(), APIKey: "sk-test-0123456789abcdef",
		ChatModel: "chat-model", EmbedModel: "embed-model",
		Timeout: 10 * time.Second,
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := llm.New(cfg, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func chatReq(user string) llm.ChatRequest {
	return llm.ChatRequest{Stage: "extractor", System: "you are a test", User: user}
}
