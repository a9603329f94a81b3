package llm

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/llm/llmtest"
)

// embedInputs is the texts of an embeddings request.
func embedInputs(r llmtest.Request) []string {
	var out []string
	if in, ok := r.Embed.Input.([]any); ok {
		for _, x := range in {
			s, _ := x.(string)
			out = append(out, s)
		}
	}
	return out
}

// laneClient is a client for a fake endpoint that holds its first embeddings request
// until release is called, so that calls made meanwhile queue in the lane; arrived is
// closed when that request arrives.
func laneClient(t *testing.T, script llmtest.Script) (c *Client, srv *llmtest.Server, arrived chan struct{}, release func()) {
	t.Helper()
	arrived, held := make(chan struct{}), make(chan struct{})
	var once, releaseOnce sync.Once
	release = func() { releaseOnce.Do(func() { close(held) }) }
	srv = llmtest.NewServer(llmtest.WithRequestLog(), llmtest.WithScript(func(r llmtest.Request) llmtest.Reply {
		if r.Embed != nil {
			once.Do(func() { close(arrived); <-held })
		}
		if script != nil {
			return script(r)
		}
		return llmtest.Reply{}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(release) // before srv.Close: a failed test does not leave the request held
	var err error
	c, err = New(Config{BaseURL: srv.URL(), EmbedModel: "embed-model", Timeout: 10 * time.Second, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, srv, arrived, release
}

// waitQueued waits until n calls wait in the lane of calls without a stage.
func waitQueued(t *testing.T, c *Client, n int) {
	t.Helper()
	l := c.lane(stageOf(t.Context(), ""))
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		l.mu.Lock()
		q := len(l.queue)
		l.mu.Unlock()
		if q == n {
			return
		}
	}
	t.Fatalf("%d calls never queued", n)
}

// Embed calls made while another is sent wait together and are sent in one request,
// each distinct text once: a document of one chunk, or one entity's text, is not a
// request of its own.
func TestConcurrentEmbedCallsShareRequests(t *testing.T) {
	c, srv, arrived, release := laneClient(t, nil)
	ctx := t.Context()
	var wg sync.WaitGroup
	results := make([][][]float32, 3)
	errs := make([]error, 3)
	calls := [][]string{{"first"}, {"shared", "b"}, {"shared", "c"}}
	wg.Go(func() { results[0], errs[0] = c.Embed(ctx, calls[0]) })
	<-arrived // the first call holds the lane: its request waits at the fake
	for i := 1; i < 3; i++ {
		wg.Go(func() { results[i], errs[i] = c.Embed(ctx, calls[i]) })
	}
	waitQueued(t, c, 2)
	release()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d embeddings requests, want 2 (the first call, then the two waiting together)", len(reqs))
	}
	got := embedInputs(reqs[1])
	slices.Sort(got)
	if want := []string{"b", "c", "shared"}; !slices.Equal(got, want) {
		t.Errorf("second request sent %q, want %q (each text once)", got, want)
	}
	want := llmtest.HashEmbedding("shared", 8)
	if !slices.Equal(results[1][0], want) || !slices.Equal(results[2][0], want) {
		t.Error("a call got another text's vector")
	}
	if !slices.Equal(results[2][1], llmtest.HashEmbedding("c", 8)) {
		t.Error("the third call's own text has the wrong vector")
	}
}

// A group that fails for one call's text (one the endpoint refuses) fails only that
// call: the others send their texts again alone.
func TestAFailedSharedRequestFailsOnlyItsCause(t *testing.T) {
	c, srv, arrived, release := laneClient(t, func(r llmtest.Request) llmtest.Reply {
		if slices.Contains(embedInputs(r), "refused") {
			return llmtest.Reply{Status: 400, Body: `{"error":{"message":"input too long","type":"invalid_request_error"}}`}
		}
		return llmtest.Reply{}
	})
	ctx := t.Context()
	var wg sync.WaitGroup
	var errFirst, errGood, errBad error
	wg.Go(func() { _, errFirst = c.Embed(ctx, []string{"first"}) })
	<-arrived
	wg.Go(func() { _, errGood = c.Embed(ctx, []string{"good"}) })
	wg.Go(func() { _, errBad = c.Embed(ctx, []string{"refused"}) })
	waitQueued(t, c, 2)
	release()
	wg.Wait()
	if errFirst != nil || errGood != nil {
		t.Errorf("calls with valid texts failed: %v, %v", errFirst, errGood)
	}
	if errBad == nil {
		t.Error("the refused text's call succeeded")
	}
	var alone int
	for _, r := range srv.Requests() {
		if in := embedInputs(r); len(in) == 1 && in[0] == "good" {
			alone++
		}
	}
	if alone != 1 {
		t.Errorf("the valid text was sent alone %d times after the group failed, want 1", alone)
	}
}

// A call whose ctx ends while it waits for the lane returns at once, and the call that
// sends the group skips its texts.
func TestEmbedCallCancelledWhileQueued(t *testing.T) {
	c, srv, arrived, release := laneClient(t, nil)
	ctx := t.Context()
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = c.Embed(ctx, []string{"first"}) })
	<-arrived
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := c.Embed(cctx, []string{"gone"}); done <- err }()
	waitQueued(t, c, 1)
	cancel()
	if err := <-done; err == nil {
		t.Error("cancelled call returned no error")
	}
	wg.Go(func() { _, _ = c.Embed(ctx, []string{"next"}) })
	waitQueued(t, c, 2)
	release()
	wg.Wait()
	for _, r := range srv.Requests() {
		if strings.Contains(strings.Join(embedInputs(r), "\n"), "gone") {
			t.Error("the cancelled call's text was sent")
		}
	}
}
