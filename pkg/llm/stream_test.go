package llm_test

import (
	"errors"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
)

const answer = "Leiden finds communities by moving nodes and refining partitions."

func answerReply(openai.ChatCompletionRequest) string { return answer }

func TestChatStream(t *testing.T) {
	tests := []struct {
		name       string
		faults     []llmtest.Fault
		wantErr    error
		wantCalls  int64
		wantDeltas int // 0: more than one
	}{
		{name: "clean", wantCalls: 1},
		{name: "429 before the first delta is retried", faults: []llmtest.Fault{llmtest.RateLimited("1")}, wantCalls: 2},
		{name: "500 before the first delta is retried", faults: []llmtest.Fault{llmtest.ServerError()}, wantCalls: 2},
		{name: "cut after deltas is an error, not retried", faults: []llmtest.Fault{llmtest.CutStream()}, wantErr: llm.ErrBadResponse, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t, llmtest.WithChatReply(answerReply))
			srv.Inject(tt.faults...)
			rec := &sleepRecorder{}
			c := newClient(t, srv, nil, llm.WithSleeper(rec.sleep))
			var deltas []string
			resp, err := c.ChatStream(t.Context(), chatReq("what is leiden"), func(d string) error {
				deltas = append(deltas, d)
				return nil
			})
			if got := srv.ChatCalls(); got != tt.wantCalls {
				t.Errorf("fake saw %d calls, want %d", got, tt.wantCalls)
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ChatStream: %v", err)
			}
			if len(deltas) < 2 {
				t.Errorf("got %d deltas, want a stream of several", len(deltas))
			}
			if joined := strings.Join(deltas, ""); joined != answer || resp.Content != answer {
				t.Errorf("deltas %q / content %q, want %q", joined, resp.Content, answer)
			}
			if resp.PromptTokens == 0 || resp.CompletionTokens == 0 || resp.FinishReason != "stop" {
				t.Errorf("resp = %+v, want usage and finish reason from the stream", resp)
			}
		})
	}
}

func TestChatStreamCallbackErrorStops(t *testing.T) {
	srv := newFake(t, llmtest.WithChatReply(answerReply))
	c := newClient(t, srv, nil)
	stop := errors.New("client went away")
	n := 0
	_, err := c.ChatStream(t.Context(), chatReq("q"), func(string) error {
		n++
		return stop
	})
	if !errors.Is(err, stop) {
		t.Fatalf("err = %v, want the callback's error", err)
	}
	if n != 1 || srv.ChatCalls() != 1 {
		t.Errorf("callback ran %d times, %d calls: want 1 and 1", n, srv.ChatCalls())
	}
}

func TestChatStreamCached(t *testing.T) {
	srv := newFake(t, llmtest.WithChatReply(answerReply))
	c := newClient(t, srv, nil, llm.WithCache(llm.NewMemoryCache(10)))
	noop := func(string) error { return nil }
	if _, err := c.ChatStream(t.Context(), chatReq("q"), noop); err != nil {
		t.Fatal(err)
	}
	var deltas []string
	resp, err := c.ChatStream(t.Context(), chatReq("q"), func(d string) error {
		deltas = append(deltas, d)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Cached || len(deltas) != 1 || deltas[0] != answer {
		t.Errorf("cached stream: resp %+v deltas %q", resp, deltas)
	}
	// Stream and plain chat share answers.
	if r, err := c.Chat(t.Context(), chatReq("q")); err != nil || !r.Cached || r.Content != answer {
		t.Errorf("Chat after ChatStream: %+v %v", r, err)
	}
	if srv.ChatCalls() != 1 {
		t.Errorf("fake saw %d calls, want 1", srv.ChatCalls())
	}
}
