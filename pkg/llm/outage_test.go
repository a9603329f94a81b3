package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
)

// outageClient is a client that retries and probes quickly.
func outageClient(t *testing.T, srv *llmtest.Server) *llm.Client {
	t.Helper()
	return newClient(t, srv, func(c *llm.Config) { c.Timeout = 5 * time.Second },
		llm.WithBackoff(time.Millisecond, 5*time.Millisecond), llm.WithProbeInterval(10*time.Millisecond, 50*time.Millisecond))
}

// waitDown waits until the client reports its endpoint down.
func waitDown(t *testing.T, c *llm.Client, want bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		down, _, reason := c.Outage()
		if down == want {
			if want && reason == "" {
				t.Error("an outage without a reason")
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the client never reported the endpoint down=%v", want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A call under WaitOutOutages that meets an outage waits until the endpoint answers
// again, then succeeds; so does a call started during the outage, which sends nothing
// meanwhile.
func TestCallWaitsOutAnOutage(t *testing.T) {
	srv := newFake(t)
	c := outageClient(t, srv)
	ctx := llm.WaitOutOutages(t.Context(), nil)
	srv.Down()
	first := make(chan error, 1)
	go func() {
		_, err := c.Chat(ctx, chatReq("during the outage"))
		first <- err
	}()
	waitDown(t, c, true)
	second := make(chan error, 1)
	go func() {
		_, err := c.Embed(ctx, []string{"also during the outage"})
		second <- err
	}()
	time.Sleep(100 * time.Millisecond) // several probes
	select {
	case err := <-first:
		t.Fatalf("the call returned during the outage: %v", err)
	case err := <-second:
		t.Fatalf("the call started during the outage returned: %v", err)
	default:
	}
	if n := srv.Calls(); n != 0 {
		t.Fatalf("%d requests answered while the endpoint was down", n)
	}
	srv.Up()
	for _, ch := range []chan error{first, second} {
		select {
		case err := <-ch:
			if err != nil {
				t.Fatalf("after the endpoint came back: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the call did not resume when the endpoint came back")
		}
	}
	waitDown(t, c, false)
}

// Without WaitOutOutages a call fails at once with an error matching ErrOutage (and its
// class), and the client keeps probing until the endpoint answers.
func TestCallWithoutWaitingFailsWithErrOutage(t *testing.T) {
	srv := newFake(t)
	c := outageClient(t, srv)
	srv.Down()
	_, err := c.Chat(t.Context(), chatReq("x"))
	if !errors.Is(err, llm.ErrOutage) || !errors.Is(err, llm.ErrUnavailable) {
		t.Fatalf("error %v, want ErrOutage and ErrUnavailable", err)
	}
	waitDown(t, c, true)
	srv.Up()
	waitDown(t, c, false)
	if _, err := c.Chat(t.Context(), chatReq("y")); err != nil {
		t.Fatal(err)
	}
}

// Closing the stop channel (a service shutting down) ends a wait with ErrOutage.
func TestStopEndsAnOutageWait(t *testing.T) {
	srv := newFake(t)
	c := outageClient(t, srv)
	stop := make(chan struct{})
	srv.Down()
	done := make(chan error, 1)
	go func() {
		_, err := c.Chat(llm.WaitOutOutages(t.Context(), stop), chatReq("x"))
		done <- err
	}()
	waitDown(t, c, true)
	close(stop)
	select {
	case err := <-done:
		if !errors.Is(err, llm.ErrOutage) {
			t.Fatalf("error %v, want ErrOutage", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("closing stop did not end the wait")
	}
}

// A server that answers its probe is up: a call failing with 5xx fails as before, with
// no outage, and is not waited out.
func TestServerErrorsOfAnAnsweringServerAreNoOutage(t *testing.T) {
	srv := newFake(t)
	c := outageClient(t, srv)
	srv.Inject(llmtest.ServerError(), llmtest.ServerError(), llmtest.ServerError(), llmtest.ServerError())
	_, err := c.Chat(llm.WaitOutOutages(t.Context(), nil), chatReq("x"))
	if !errors.Is(err, llm.ErrServer) || errors.Is(err, llm.ErrOutage) {
		t.Fatalf("error %v, want ErrServer without ErrOutage", err)
	}
	if down, _, _ := c.Outage(); down {
		t.Fatal("endpoint reported down while it answers")
	}
}

// A model slower than the timeout is given more time on each retry, and answers: a slow
// model delays a call, it does not fail it forever.
func TestSlowModelGetsAGrowingBudget(t *testing.T) {
	// Answers of about 100 tokens, as long as the request allows.
	srv := newFake(t, llmtest.WithLatency(300*time.Millisecond),
		llmtest.WithChatReply(func(openai.ChatCompletionRequest) string { return strings.Repeat("word ", 80) }))
	c := newClient(t, srv, func(c *llm.Config) { c.Timeout = 100 * time.Millisecond; c.MaxRetries = 3 },
		llm.WithBackoff(time.Millisecond, 5*time.Millisecond))
	if _, err := c.Chat(t.Context(), llm.ChatRequest{User: "slow", MaxTokens: 100}); err != nil {
		t.Fatalf("a model 3× slower than the timeout: %v", err)
	}
	// Calls after it start with a budget that fits the model's speed: no timeout at all.
	before := c.Usage().Retries
	if _, err := c.Chat(t.Context(), llm.ChatRequest{User: "slow again", MaxTokens: 100}); err != nil {
		t.Fatal(err)
	}
	if got := c.Usage().Retries - before; got != 0 {
		t.Errorf("%d retries for the next call: the budget did not adapt", got)
	}
}

// A model that never answers within the largest budget fails with ErrTimeout, not as an
// outage (the server answers its probe): the caller falls back.
func TestModelTooSlowForAnyBudgetTimesOut(t *testing.T) {
	srv := newFake(t, llmtest.WithLatency(time.Hour))
	c := newClient(t, srv, func(c *llm.Config) { c.Timeout = 20 * time.Millisecond; c.MaxRetries = 3 },
		llm.WithBackoff(time.Millisecond, 5*time.Millisecond))
	ctx, cancel := context.WithTimeout(llm.WaitOutOutages(t.Context(), nil), time.Minute)
	defer cancel()
	_, err := c.Chat(ctx, llm.ChatRequest{User: "never", MaxTokens: 100})
	if !errors.Is(err, llm.ErrTimeout) || errors.Is(err, llm.ErrOutage) {
		t.Fatalf("error %v, want ErrTimeout without ErrOutage", err)
	}
}
