package llm_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
)

func TestEmbedBatchingAndOrder(t *testing.T) {
	tests := []struct {
		name      string
		texts     []string
		batch     int
		wantCalls int64
	}{
		{name: "one batch", texts: texts(10, 0), batch: 64, wantCalls: 1},
		{name: "exact batches", texts: texts(128, 0), batch: 64, wantCalls: 2},
		{name: "partial last batch", texts: texts(150, 0), batch: 64, wantCalls: 3},
		{name: "duplicates sent once", texts: texts(10, 5), batch: 4, wantCalls: 2}, // 5 distinct
		{name: "empty", texts: nil, batch: 64, wantCalls: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t, llmtest.WithDimension(16))
			c := newClient(t, srv, func(c *llm.Config) { c.EmbedBatchSize = tt.batch })
			vecs, err := c.Embed(t.Context(), tt.texts)
			if err != nil {
				t.Fatalf("Embed: %v", err)
			}
			if len(vecs) != len(tt.texts) {
				t.Fatalf("got %d vectors for %d texts", len(vecs), len(tt.texts))
			}
			for i, text := range tt.texts {
				if !equalVec(vecs[i], llmtest.HashEmbedding(text, 16)) {
					t.Fatalf("vector %d is not the one for %q", i, text)
				}
			}
			if got := srv.EmbedCalls(); got != tt.wantCalls {
				t.Errorf("fake saw %d embed calls, want %d", got, tt.wantCalls)
			}
		})
	}
}

// texts returns n texts; with distinct > 0 only that many different ones.
func texts(n, distinct int) []string {
	out := make([]string, n)
	for i := range out {
		k := i
		if distinct > 0 {
			k = i % distinct
		}
		out[i] = fmt.Sprintf("chunk number %d", k)
	}
	return out
}

func TestEmbedFailure(t *testing.T) {
	srv := newFake(t)
	srv.Inject(llmtest.Status(400, `{"error":{"message":"input too long"}}`))
	c := newClient(t, srv, func(c *llm.Config) { c.EmbedBatchSize = 2 })
	vecs, err := c.Embed(t.Context(), texts(2, 0))
	if !errors.Is(err, llm.ErrBadRequest) || vecs != nil {
		t.Fatalf("Embed = %v, %v; want nil and ErrBadRequest", vecs, err)
	}
	var ce *llm.CallError
	if !errors.As(err, &ce) || ce.Kind != "embed" {
		t.Errorf("CallError = %+v", ce)
	}
}

func TestEmbedBadResponse(t *testing.T) {
	tests := []struct {
		name string
		body string
	}{
		{name: "too few vectors", body: `{"object":"list","data":[{"index":0,"embedding":[1,2]}]}`},
		{name: "repeated index", body: `{"object":"list","data":[{"index":0,"embedding":[1,2]},{"index":0,"embedding":[1,2]}]}`},
		{name: "ragged dimensions", body: `{"object":"list","data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1]}]}`},
		{name: "empty vector", body: `{"object":"list","data":[{"index":0,"embedding":[]},{"index":1,"embedding":[]}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t, llmtest.WithScript(func(llmtest.Request) llmtest.Reply {
				return llmtest.Reply{Status: 200, Body: tt.body}
			}))
			c := newClient(t, srv, func(c *llm.Config) { c.MaxRetries = 1 }, llm.WithSleeper((&sleepRecorder{}).sleep))
			if _, err := c.Embed(t.Context(), []string{"a", "b"}); !errors.Is(err, llm.ErrBadResponse) {
				t.Fatalf("err = %v, want ErrBadResponse", err)
			}
			if srv.EmbedCalls() != 2 {
				t.Errorf("fake saw %d calls, want 2 (one retry)", srv.EmbedCalls())
			}
		})
	}
}

func TestDimension(t *testing.T) {
	srv := newFake(t, llmtest.WithDimension(24))
	srv.Inject(llmtest.Status(404, `{"error":{"message":"model not found"}}`))
	c := newClient(t, srv, nil)
	if _, err := c.Dimension(t.Context()); !errors.Is(err, llm.ErrNotFound) {
		t.Fatalf("first probe err = %v, want ErrNotFound", err)
	}
	for range 3 {
		d, err := c.Dimension(t.Context())
		if err != nil || d != 24 {
			t.Fatalf("Dimension = %d, %v; want 24", d, err)
		}
	}
	if got := srv.EmbedCalls(); got != 2 {
		t.Errorf("fake saw %d embed calls, want 2 (failed probe, then one probe)", got)
	}
}

func TestEmbedBaseURL(t *testing.T) {
	tests := []struct {
		name string
		// embedOnOther says whether embeddings go to the second server.
		embedOnOther bool
		cfg          func(c *llm.Config, chat, embed *llmtest.Server)
	}{
		{name: "unset: one server", cfg: func(*llm.Config, *llmtest.Server, *llmtest.Server) {}},
		{name: "same as BaseURL", cfg: func(c *llm.Config, chat, _ *llmtest.Server) { c.EmbedBaseURL = chat.URL() }},
		{name: "separate server", embedOnOther: true, cfg: func(c *llm.Config, _, embed *llmtest.Server) { c.EmbedBaseURL = embed.URL() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chatSrv := newFake(t, llmtest.WithDimension(8))
			embedSrv := newFake(t, llmtest.WithDimension(8))
			c := newClient(t, chatSrv, func(c *llm.Config) { tt.cfg(c, chatSrv, embedSrv) })
			if _, err := c.Chat(t.Context(), chatReq("hello")); err != nil {
				t.Fatalf("Chat: %v", err)
			}
			if _, err := c.Embed(t.Context(), []string{"a", "b"}); err != nil {
				t.Fatalf("Embed: %v", err)
			}
			wantEmbedOnChat, wantEmbedOnOther := int64(1), int64(0)
			if tt.embedOnOther {
				wantEmbedOnChat, wantEmbedOnOther = 0, 1
			}
			if got := chatSrv.ChatCalls(); got != 1 {
				t.Errorf("chat calls at BaseURL = %d, want 1", got)
			}
			if got := embedSrv.ChatCalls(); got != 0 {
				t.Errorf("chat calls at the embeddings server = %d, want 0", got)
			}
			if got := chatSrv.EmbedCalls(); got != wantEmbedOnChat {
				t.Errorf("embed calls at BaseURL = %d, want %d", got, wantEmbedOnChat)
			}
			if got := embedSrv.EmbedCalls(); got != wantEmbedOnOther {
				t.Errorf("embed calls at EmbedBaseURL = %d, want %d", got, wantEmbedOnOther)
			}
		})
	}
}
