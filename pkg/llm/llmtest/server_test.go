package llmtest_test

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.uber.org/goleak"

	"github.com/graphrag/graphrag/pkg/llm/llmtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func client(t *testing.T, s *llmtest.Server) *openai.Client {
	t.Helper()
	cfg := openai.DefaultConfig("key")
	cfg.BaseURL = s.URL()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	cfg.HTTPClient = &http.Client{Transport: tr}
	return openai.NewClientWithConfig(cfg)
}

func newServer(t *testing.T, opts ...llmtest.Option) *llmtest.Server {
	t.Helper()
	s := llmtest.NewServer(opts...)
	t.Cleanup(s.Close)
	return s
}

var chatRequest = openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{
	{Role: "system", Content: "be brief"}, {Role: "user", Content: "hello there world"}}}

func TestChat(t *testing.T) {
	s := newServer(t)
	c := client(t, s)
	resp, err := c.CreateChatCompletion(t.Context(), chatRequest)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != "echo: hello there world" {
		t.Errorf("content = %q", got)
	}
	if resp.Usage.PromptTokens == 0 || resp.Usage.TotalTokens != resp.Usage.PromptTokens+resp.Usage.CompletionTokens {
		t.Errorf("usage = %+v", resp.Usage)
	}
	if s.Calls() != 1 || s.ChatCalls() != 1 || s.EmbedCalls() != 0 {
		t.Errorf("counters %d/%d/%d", s.Calls(), s.ChatCalls(), s.EmbedCalls())
	}
}

func TestChatStream(t *testing.T) {
	tests := []struct {
		name      string
		usage     bool
		cut       bool
		wantUsage bool
	}{
		{name: "with usage", usage: true, wantUsage: true},
		{name: "without usage"},
		{name: "cut", cut: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			if tt.cut {
				s.Inject(llmtest.CutStream())
			}
			req := chatRequest
			req.Stream = true
			if tt.usage {
				req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
			}
			stream, err := client(t, s).CreateChatCompletionStream(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			defer stream.Close()
			var sb strings.Builder
			var finish openai.FinishReason
			var usage *openai.Usage
			chunks := 0
			for {
				ch, err := stream.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				chunks++
				if ch.Usage != nil {
					usage = ch.Usage
				}
				for _, c := range ch.Choices {
					sb.WriteString(c.Delta.Content)
					if c.FinishReason != "" {
						finish = c.FinishReason
					}
				}
			}
			if tt.cut {
				if finish != "" || sb.String() == "echo: hello there world" {
					t.Errorf("cut stream finished: %q %q", finish, sb.String())
				}
				return
			}
			if sb.String() != "echo: hello there world" || finish != openai.FinishReasonStop || chunks < 3 {
				t.Errorf("stream gave %q, finish %q, %d chunks", sb.String(), finish, chunks)
			}
			if (usage != nil) != tt.wantUsage {
				t.Errorf("usage chunk = %v, want present %v", usage, tt.wantUsage)
			}
		})
	}
}

func TestEmbeddings(t *testing.T) {
	s := newServer(t, llmtest.WithDimension(5))
	in := []string{"alpha", "beta", "gamma"}
	resp, err := client(t, s).CreateEmbeddings(t.Context(), openai.EmbeddingRequestStrings{Input: in, Model: "e"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Data) != 3 {
		t.Fatalf("%d vectors", len(resp.Data))
	}
	for _, d := range resp.Data {
		want := llmtest.HashEmbedding(in[d.Index], 5)
		for i := range want {
			if d.Embedding[i] != want[i] {
				t.Fatalf("vector for index %d is wrong", d.Index)
			}
		}
	}
}

func TestFaultsInOrder(t *testing.T) {
	s := newServer(t)
	s.Inject(llmtest.RateLimited("2"), llmtest.ServerError(), llmtest.Garbage(), llmtest.Status(404, "missing"))
	want := []struct {
		status     int
		retryAfter string
		json       bool
	}{
		{429, "2", true}, {500, "", true}, {200, "", false}, {404, "", false}, {200, "", true},
	}
	for i, w := range want {
		resp, err := http.Post(s.URL()+"/chat/completions", "application/json",
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"x"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != w.status || resp.Header.Get("Retry-After") != w.retryAfter {
			t.Errorf("request %d: status %d Retry-After %q, want %d %q", i, resp.StatusCode, resp.Header.Get("Retry-After"), w.status, w.retryAfter)
		}
		if isJSON := strings.HasPrefix(string(body), "{"); isJSON != w.json {
			t.Errorf("request %d: body %q", i, body)
		}
	}
	http.DefaultClient.CloseIdleConnections()
}

func TestHang(t *testing.T) {
	t.Run("until the client gives up", func(t *testing.T) {
		s := newServer(t)
		s.Inject(llmtest.Hang())
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		_, err := client(t, s).CreateChatCompletion(ctx, chatRequest)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want deadline exceeded", err)
		}
	})
	t.Run("until the server closes", func(t *testing.T) {
		s := llmtest.NewServer()
		s.Inject(llmtest.Hang())
		c := client(t, s)
		done := make(chan error, 1)
		go func() {
			_, err := c.CreateChatCompletion(context.Background(), chatRequest)
			done <- err
		}()
		for s.Calls() == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		s.Close()
		s.Close() // twice is fine
		if err := <-done; err == nil {
			t.Error("hung request succeeded after Close")
		}
	})
}

func TestMaxConcurrencyQueues(t *testing.T) {
	var inScript, maxInScript atomic.Int64
	var s *llmtest.Server
	s = newServer(t, llmtest.WithMaxConcurrency(1), llmtest.WithScript(func(r llmtest.Request) llmtest.Reply {
		n := inScript.Add(1)
		defer inScript.Add(-1)
		for m := maxInScript.Load(); n > m && !maxInScript.CompareAndSwap(m, n); m = maxInScript.Load() {
		}
		if r.N == 1 {
			// Hold the only slot until the second request has arrived, and a
			// bit longer, so that without the limit both would be here.
			for s.Calls() < 2 {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(30 * time.Millisecond)
		}
		return llmtest.Reply{}
	}))
	c := client(t, s)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if _, err := c.CreateChatCompletion(t.Context(), chatRequest); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := maxInScript.Load(); got != 1 {
		t.Errorf("requests served at once = %d, want 1", got)
	}
	if got := s.MaxConcurrent(); got != 2 {
		t.Errorf("requests arrived at once = %d, want 2", got)
	}
}

func TestScriptAndLog(t *testing.T) {
	s := newServer(t, llmtest.WithRequestLog(), llmtest.WithScript(func(r llmtest.Request) llmtest.Reply {
		if r.Chat != nil && r.Chat.Messages[0].Content == "teapot" {
			return llmtest.Reply{Status: 418, Header: http.Header{"X-Why": {"tea"}}, Body: `{"error":{"message":"teapot"}}`}
		}
		return llmtest.Reply{} // fall through
	}))
	c := client(t, s)
	_, err := c.CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{Model: "m",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "teapot"}}})
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 418 {
		t.Fatalf("err = %v, want 418", err)
	}
	if _, err := c.CreateChatCompletion(t.Context(), chatRequest); err != nil {
		t.Fatalf("fall-through: %v", err)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].N != 1 || reqs[1].N != 2 || reqs[1].Chat == nil || reqs[1].Path != "/v1/chat/completions" {
		t.Errorf("log = %+v", reqs)
	}
}

func TestBadBody(t *testing.T) {
	s := newServer(t)
	resp, err := http.Post(s.URL()+"/embeddings", "application/json", strings.NewReader(`{"input":[1,2]}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("status = %d, want 400", resp.StatusCode)
	}
}

func TestHashEmbedding(t *testing.T) {
	tests := []struct{ text string }{{"a"}, {"b"}, {""}, {"a longer text"}}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			v := llmtest.HashEmbedding(tt.text, 20)
			var norm float64
			for _, f := range v {
				norm += float64(f) * float64(f)
			}
			if math.Abs(norm-1) > 1e-5 {
				t.Errorf("norm = %v, want 1", norm)
			}
			w := llmtest.HashEmbedding(tt.text, 20)
			for i := range v {
				if v[i] != w[i] {
					t.Fatal("not deterministic")
				}
			}
		})
	}
	a, b := llmtest.HashEmbedding("a", 4), llmtest.HashEmbedding("b", 4)
	if a[0] == b[0] && a[1] == b[1] {
		t.Error("different texts give the same vector")
	}
}

// Down drops every connection until Up; the models list answers when up.
func TestDownAndUp(t *testing.T) {
	s := llmtest.NewServer()
	defer s.Close()
	get := func() (int, error) {
		resp, err := http.Get(s.URL() + "/models")
		if err != nil {
			return 0, err
		}
		_ = resp.Body.Close()
		return resp.StatusCode, nil
	}
	if code, err := get(); err != nil || code != http.StatusOK {
		t.Fatalf("models while up: %d %v", code, err)
	}
	s.Down()
	if code, err := get(); err == nil {
		t.Fatalf("models while down answered %d", code)
	}
	s.Up()
	if code, err := get(); err != nil || code != http.StatusOK {
		t.Fatalf("models after Up: %d %v", code, err)
	}
}
