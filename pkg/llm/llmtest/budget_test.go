package llmtest_test

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/graphrag/graphrag/pkg/llm/llmtest"
)

// Over its token budget the fake answers 429 with Retry-After and Retry-After-Ms up to
// the next window, charges nothing for the refusal, and counts it; SetBudget lifts it.
func TestTokenBudget(t *testing.T) {
	// An hour-long window: every request of the test falls in the first one.
	s := llmtest.NewServer(llmtest.WithTokenBudget(10, time.Hour))
	defer s.Close()
	c := client(t, s)
	chat := func(msg string) error {
		_, err := c.CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{Model: "m",
			Messages: []openai.ChatCompletionMessage{{Role: "user", Content: msg}}})
		return err
	}
	// "hi" costs 1 token, "echo: hi" 3: 4 of 10.
	if err := chat("hi"); err != nil {
		t.Fatalf("first chat: %v", err)
	}
	if err := chat("hi"); err != nil {
		t.Fatalf("second chat: %v", err)
	}
	err := chat("hi")
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != http.StatusTooManyRequests {
		t.Fatalf("third chat over the budget: %v, want a 429", err)
	}
	w := s.BudgetUsage()
	if len(w) != 1 || w[0].Tokens != 8 || w[0].Requests != 2 || w[0].Refused != 1 {
		t.Errorf("usage = %+v, want one window with 8 tokens, 2 requests, 1 refused", w)
	}
	s.SetBudget(0, 0)
	if err := chat("hi"); err != nil {
		t.Fatalf("chat after the budget was lifted: %v", err)
	}
}

func TestBudgetRetryAfter(t *testing.T) {
	s := llmtest.NewServer(llmtest.WithRequestBudget(1, time.Hour))
	defer s.Close()
	body := `{"model":"m","input":"x"}`
	post := func() *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL()+"/embeddings", strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp
	}
	if r := post(); r.StatusCode != http.StatusOK {
		t.Fatalf("first request: status %d", r.StatusCode)
	}
	r := post()
	if r.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("second request: status %d, want 429", r.StatusCode)
	}
	secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || secs < 3500 || secs > 3600 {
		t.Errorf("Retry-After = %q, want the seconds left of the hour window", r.Header.Get("Retry-After"))
	}
	ms, err := strconv.Atoi(r.Header.Get("Retry-After-Ms"))
	if err != nil || ms < 3500_000 || ms > 3600_000 {
		t.Errorf("Retry-After-Ms = %q, want the milliseconds left of the hour window", r.Header.Get("Retry-After-Ms"))
	}
}

func TestBudgetOptionsChecked(t *testing.T) {
	for name, opt := range map[string]llmtest.Option{
		"negative":  llmtest.WithTokenBudget(-1, time.Minute),
		"no window": llmtest.WithRequestBudget(5, 0),
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("NewServer accepted an unusable budget")
				}
			}()
			llmtest.NewServer(opt).Close()
		})
	}
}
