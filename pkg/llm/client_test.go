package llm_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
)

func TestConcurrencyLimit(t *testing.T) {
	const limit, callers = 3, 10
	release := make(chan struct{})
	// Every request waits for release, so requests pile up at the fake as
	// far as the client lets them.
	srv := newFake(t, llmtest.WithScript(func(llmtest.Request) llmtest.Reply {
		<-release
		return llmtest.Reply{}
	}))
	c := newClient(t, srv, func(c *llm.Config) { c.MaxConcurrency = limit })
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for i := range callers {
		wg.Go(func() {
			_, err := c.Chat(t.Context(), chatReq(fmt.Sprint("prompt ", i)))
			errs <- err
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	for srv.Calls() < limit && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	// Give a broken limiter the chance to let more through before releasing.
	time.Sleep(50 * time.Millisecond)
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Chat: %v", err)
		}
	}
	if got := srv.MaxConcurrent(); got != limit {
		t.Errorf("max concurrent requests at the fake = %d, want %d", got, limit)
	}
	if got := srv.ChatCalls(); got != callers {
		t.Errorf("fake saw %d calls, want %d", got, callers)
	}
}

func TestRateLimits(t *testing.T) {
	long := strings.Repeat("word ", 800) // ~1000 tokens by the len/4 estimate
	tests := []struct {
		name string
		cfg  func(*llm.Config)
		opts []llmtest.Option
		// first is sent freely; second must then wait longer than its deadline.
		first, second string
	}{
		{name: "requests per minute", cfg: func(c *llm.Config) { c.RequestsPerMinute = 60 }, first: "a", second: "b"},
		{
			name: "tokens per minute, estimate",
			cfg:  func(c *llm.Config) { c.TokensPerMinute = 600 },
			// The endpoint reports no usage, so only the len/4 estimate taken
			// before the call (capped at the 600-token burst) limits.
			opts:   []llmtest.Option{llmtest.WithScript(zeroUsage)},
			first:  long,
			second: strings.Repeat("x", 60), // ~19 tokens: ~2s at 10 tokens/s
		},
		{
			name: "tokens per minute, reconciled with reported usage",
			cfg:  func(c *llm.Config) { c.TokensPerMinute = 600 },
			// The prompt is tiny, the answer ~1000 tokens: only reconciliation
			// after the call can exhaust the budget.
			opts:  []llmtest.Option{llmtest.WithChatReply(func(openai.ChatCompletionRequest) string { return long })},
			first: "a", second: "b",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t, tt.opts...)
			c := newClient(t, srv, tt.cfg)
			if _, err := c.Chat(t.Context(), chatReq(tt.first)); err != nil {
				t.Fatalf("first Chat: %v", err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
			defer cancel()
			_, err := c.Chat(ctx, chatReq(tt.second))
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("second Chat err = %v, want a rate-limit wait beyond the deadline", err)
			}
			if got := srv.ChatCalls(); got != 1 {
				t.Errorf("fake saw %d calls, want 1", got)
			}
		})
	}
	t.Run("unlimited", func(t *testing.T) {
		srv := newFake(t)
		c := newClient(t, srv, nil)
		for i := range 20 {
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			_, err := c.Chat(ctx, chatReq(long+fmt.Sprint(i)))
			cancel()
			if err != nil {
				t.Fatalf("Chat %d: %v", i, err)
			}
		}
	})
}

func TestChatRequestOnTheWire(t *testing.T) {
	srv := newFake(t, llmtest.WithRequestLog())
	c := newClient(t, srv, nil)
	_, err := c.Chat(t.Context(), llm.ChatRequest{
		System:    "sys",
		Messages:  []llm.Message{{Role: llm.RoleUser, Content: "q1"}, {Role: llm.RoleAssistant, Content: "a1"}},
		User:      "q2",
		MaxTokens: 50,
		JSONSchema: &llm.Schema{Name: "answer", Strict: true,
			Schema: map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "string"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	body := string(reqs[0].Body)
	for _, want := range []string{`"temperature":0.000001`, `"max_tokens":50`, `"type":"json_schema"`, `"name":"answer"`, `"strict":true`, `"model":"chat-model"`} {
		if !strings.Contains(body, want) {
			t.Errorf("request body lacks %s: %s", want, body)
		}
	}
	var roles []string
	for _, m := range reqs[0].Chat.Messages {
		roles = append(roles, m.Role+":"+m.Content)
	}
	if got := strings.Join(roles, ","); got != "system:sys,user:q1,assistant:a1,user:q2" {
		t.Errorf("messages = %s", got)
	}
}

func TestInvalidRequests(t *testing.T) {
	srv := newFake(t)
	c := newClient(t, srv, nil)
	tests := []struct {
		name string
		req  llm.ChatRequest
	}{
		{name: "no messages", req: llm.ChatRequest{}},
		{name: "schema not JSON", req: llm.ChatRequest{User: "x", JSONSchema: &llm.Schema{Schema: "{nope"}}},
		{name: "schema empty", req: llm.ChatRequest{User: "x", JSONSchema: &llm.Schema{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := c.Chat(t.Context(), tt.req); !errors.Is(err, llm.ErrBadRequest) {
				t.Errorf("err = %v, want ErrBadRequest", err)
			}
		})
	}
	if srv.Calls() != 0 {
		t.Errorf("invalid requests reached the endpoint")
	}
}

func TestNewAndString(t *testing.T) {
	tests := []struct {
		name    string
		cfg     llm.Config
		wantErr bool
		hidden  string // must not appear in String()
		shown   string // must appear
	}{
		{name: "no base url", cfg: llm.Config{ChatModel: "m"}, wantErr: true},
		{name: "no model", cfg: llm.Config{BaseURL: "http://x"}, wantErr: true},
		{name: "negative limit", cfg: llm.Config{BaseURL: "http://x", ChatModel: "m", RequestsPerMinute: -1}, wantErr: true},
		{name: "negative timeout", cfg: llm.Config{BaseURL: "http://x", ChatModel: "m", Timeout: -time.Second}, wantErr: true},
		{name: "negative concurrency", cfg: llm.Config{BaseURL: "http://x", ChatModel: "m", MaxConcurrency: -1}, wantErr: true},
		{name: "negative batch", cfg: llm.Config{BaseURL: "http://x", EmbedModel: "e", EmbedBatchSize: -64}, wantErr: true},
		{name: "long key", cfg: llm.Config{BaseURL: "http://x", ChatModel: "m", APIKey: "sk-proj-SECRETSECRET9876"}, hidden: "SECRETSECRET", shown: "****9876"},
		{name: "short key", cfg: llm.Config{BaseURL: "http://x", ChatModel: "m", APIKey: "abc123"}, hidden: "abc123", shown: "****"},
		{name: "no key", cfg: llm.Config{BaseURL: "http://x", EmbedModel: "e"}, shown: `APIKey:""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := llm.New(tt.cfg)
			if tt.wantErr {
				if !errors.Is(err, llm.ErrInvalidConfig) {
					t.Fatalf("err = %v, want ErrInvalidConfig", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			s := c.String()
			if tt.hidden != "" && strings.Contains(s, tt.hidden) {
				t.Errorf("String() leaks the key: %s", s)
			}
			if !strings.Contains(s, tt.shown) {
				t.Errorf("String() = %s, want it to contain %s", s, tt.shown)
			}
			if s2 := fmt.Sprintf("%v", c.Config()); tt.hidden != "" && strings.Contains(s2, tt.hidden) {
				t.Errorf("Config formatting leaks the key: %s", s2)
			}
		})
	}
}

func TestModelMissing(t *testing.T) {
	srv := newFake(t)
	chatOnly := newClient(t, srv, func(c *llm.Config) { c.EmbedModel = "" })
	if _, err := chatOnly.Embed(t.Context(), []string{"x"}); !errors.Is(err, llm.ErrInvalidConfig) {
		t.Errorf("Embed without EmbedModel: %v", err)
	}
	embedOnly := newClient(t, srv, func(c *llm.Config) { c.ChatModel = "" })
	if _, err := embedOnly.Chat(t.Context(), chatReq("x")); !errors.Is(err, llm.ErrInvalidConfig) {
		t.Errorf("Chat without ChatModel: %v", err)
	}
}

// zeroUsage answers like an endpoint that reports no token usage.
func zeroUsage(llmtest.Request) llmtest.Reply {
	return llmtest.Reply{Status: 200, Body: `{"id":"x","object":"chat.completion","model":"m",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`}
}
