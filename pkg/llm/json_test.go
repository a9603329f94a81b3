package llm_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
)

type extraction struct {
	Entities []string `json:"entities"`
}

func (e extraction) Validate() error {
	if len(e.Entities) == 0 {
		return errors.New("no entities")
	}
	return nil
}

// replies answers call n (1-based) with replies[n-1], the last one after that.
func replies(rs ...string) llmtest.Option {
	return llmtest.WithScript(func(r llmtest.Request) llmtest.Reply {
		content := rs[min(int(r.N), len(rs))-1]
		return llmtest.Reply{Status: 200, Body: fmt.Sprintf(`{"id":"x","object":"chat.completion","model":"m",`+
			`"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`, content)}
	})
}

func TestChatJSON(t *testing.T) {
	tests := []struct {
		name      string
		replies   []string
		want      []string
		wantErr   error
		wantCalls int64
	}{
		{name: "valid at once", replies: []string{`{"entities":["Leiden"]}`}, want: []string{"Leiden"}, wantCalls: 1},
		{name: "fenced", replies: []string{"```json\n{\"entities\":[\"A\"]}\n```"}, want: []string{"A"}, wantCalls: 1},
		{name: "invalid then valid", replies: []string{`{"entities":[`, `{"entities":["B"]}`}, want: []string{"B"}, wantCalls: 2},
		{name: "fails validation then valid", replies: []string{`{"entities":[]}`, `{"entities":["C"]}`}, want: []string{"C"}, wantCalls: 2},
		{name: "wrong type every time", replies: []string{`{"entities":"A"}`}, wantErr: llm.ErrInvalidJSON, wantCalls: 3},
		{name: "prose every time", replies: []string{`Sure! Here are the entities: A, B`}, wantErr: llm.ErrInvalidJSON, wantCalls: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t, replies(tt.replies...))
			c := newClient(t, srv, func(c *llm.Config) { c.JSONRetries = 2 })
			got, resp, err := llm.ChatJSON[extraction](t.Context(), c, chatReq("extract"))
			if srv.ChatCalls() != tt.wantCalls {
				t.Errorf("fake saw %d calls, want %d", srv.ChatCalls(), tt.wantCalls)
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				var ije *llm.InvalidJSONError
				if !errors.As(err, &ije) || ije.Attempts != 3 || ije.Content == "" || ije.Err == nil {
					t.Errorf("InvalidJSONError = %+v", ije)
				}
				return
			}
			if err != nil {
				t.Fatalf("ChatJSON: %v", err)
			}
			if strings.Join(got.Entities, ",") != strings.Join(tt.want, ",") || resp.Content == "" {
				t.Errorf("got %+v (%+v), want %v", got, resp, tt.want)
			}
		})
	}
}

func TestChatJSONCallErrorNotMasked(t *testing.T) {
	srv := newFake(t)
	srv.Inject(llmtest.Status(401, `{"error":{"message":"bad key"}}`))
	c := newClient(t, srv, nil)
	_, _, err := llm.ChatJSON[extraction](t.Context(), c, chatReq("x"))
	if !errors.Is(err, llm.ErrUnauthorized) || errors.Is(err, llm.ErrInvalidJSON) {
		t.Fatalf("err = %v, want ErrUnauthorized only", err)
	}
}

func TestChatJSONCache(t *testing.T) {
	cache := llm.NewMemoryCache(10)
	srv := newFake(t, replies(`not json`, `{"entities":["D"]}`))
	c := newClient(t, srv, nil, llm.WithCache(cache))
	// Plain Chat caches whatever it gets, including output ChatJSON rejects.
	if _, err := c.Chat(t.Context(), chatReq("extract")); err != nil {
		t.Fatal(err)
	}
	// ChatJSON sees the bad cached answer, asks the endpoint (bypassing the
	// cache) and stores the good answer over it.
	got, resp, err := llm.ChatJSON[extraction](t.Context(), c, chatReq("extract"))
	if err != nil || got.Entities[0] != "D" || resp.Cached {
		t.Fatalf("ChatJSON = %+v %+v %v", got, resp, err)
	}
	got, resp, err = llm.ChatJSON[extraction](t.Context(), c, chatReq("extract"))
	if err != nil || got.Entities[0] != "D" || !resp.Cached {
		t.Fatalf("third = %+v %+v %v, want the good answer from the cache", got, resp, err)
	}
	if srv.ChatCalls() != 2 {
		t.Errorf("fake saw %d calls, want 2", srv.ChatCalls())
	}
}

func TestChatJSONInvalidNotCached(t *testing.T) {
	cache := llm.NewMemoryCache(10)
	srv := newFake(t, llmtest.WithChatReply(func(openai.ChatCompletionRequest) string { return "nope" }))
	c := newClient(t, srv, func(c *llm.Config) { c.JSONRetries = -1 }, llm.WithCache(cache))
	if _, _, err := llm.ChatJSON[extraction](t.Context(), c, chatReq("x")); !errors.Is(err, llm.ErrInvalidJSON) {
		t.Fatalf("err = %v", err)
	}
	if cache.Len() != 0 {
		t.Errorf("invalid JSON answer was cached")
	}
}

func TestDecodeJSON(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr bool
	}{
		{name: "plain", in: `{"entities":["a"]}`},
		{name: "spaces", in: " \n{\"entities\":[\"a\"]}\n "},
		{name: "fence without language", in: "```\n{\"entities\":[\"a\"]}\n```"},
		{name: "empty", in: "", wantErr: true},
		{name: "trailing data", in: `{"entities":["a"]} and more`, wantErr: true},
		{name: "two values", in: `{"entities":["a"]}{"entities":["b"]}`, wantErr: true},
		{name: "null", in: `null`, wantErr: true}, // Validate rejects the empty value
		{name: "validation", in: `{"entities":[]}`, wantErr: true},
		{name: "unclosed fence", in: "```json\n{\"entities\":[\"a\"]}", wantErr: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := llm.DecodeJSON[extraction](tt.in)
			if (err != nil) != tt.wantErr {
				t.Errorf("DecodeJSON(%q) err = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
		})
	}
	t.Run("nil pointer target", func(t *testing.T) {
		if _, err := llm.DecodeJSON[*extraction]("null"); err == nil {
			t.Error("null into a pointer type must fail, not panic or pass")
		}
	})
}

func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{"entities":["a"]}`, "```json\n{}\n```", "```", "", "null", `{"entities":[1]}`, "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := llm.DecodeJSON[extraction](s)
		if err == nil && len(v.Entities) == 0 {
			t.Fatalf("accepted %q without passing Validate", s)
		}
		_, _ = llm.DecodeJSON[map[string]any](s)
	})
}
