package llm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Message roles.
const (
	RoleSystem    = openai.ChatMessageRoleSystem
	RoleUser      = openai.ChatMessageRoleUser
	RoleAssistant = openai.ChatMessageRoleAssistant
)

// Message is one turn of a conversation.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Schema asks for structured output (response_format json_schema).
type Schema struct {
	Name        string // default "response"
	Description string
	// Schema is a JSON Schema: json.RawMessage, []byte, string, or any value
	// that encoding/json marshals (e.g. map[string]any).
	Schema any
	Strict bool
}

// ChatRequest is one chat completion. The prompt is System, then Messages,
// then User; empty parts are left out.
type ChatRequest struct {
	Stage       string // metrics label: extractor|grapher|summarizer|query
	System      string
	User        string
	Messages    []Message
	MaxTokens   int     // 0 = server default
	Temperature float32 // 0 is sent as 0 (deterministic), unlike go-openai's omitempty
	JSONSchema  *Schema
}

// ChatResponse is the answer. For a cached answer the token counts are those
// of the original call, and no tokens were spent.
type ChatResponse struct {
	Content          string
	PromptTokens     int
	CompletionTokens int
	Cached           bool
	Model            string
	FinishReason     string // stop | length | ...; length means Content was cut off
}

// preparedChat is a ChatRequest turned into the wire request and its cache key.
type preparedChat struct {
	stage string
	req   openai.ChatCompletionRequest
	key   string
	chars int
}

func (c *Client) prepareChat(ctx context.Context, r ChatRequest) (preparedChat, error) {
	if c.cfg.ChatModel == "" {
		return preparedChat{}, fmt.Errorf("%w: no ChatModel configured", ErrInvalidConfig)
	}
	msgs := make([]Message, 0, len(r.Messages)+2)
	if r.System != "" {
		msgs = append(msgs, Message{Role: RoleSystem, Content: r.System})
	}
	msgs = append(msgs, r.Messages...)
	if r.User != "" {
		msgs = append(msgs, Message{Role: RoleUser, Content: r.User})
	}
	if len(msgs) == 0 {
		return preparedChat{}, fmt.Errorf("%w: chat request has no messages", ErrBadRequest)
	}
	p := preparedChat{stage: stageOf(ctx, r.Stage)}
	p.req = openai.ChatCompletionRequest{
		Model:       c.cfg.ChatModel,
		Messages:    make([]openai.ChatCompletionMessage, len(msgs)),
		MaxTokens:   r.MaxTokens, //nolint:staticcheck // SA1019: max_tokens is understood by every OpenAI-compatible server, max_completion_tokens is not
		Temperature: r.Temperature,
	}
	if r.Temperature == 0 {
		// go-openai drops a zero temperature (omitempty) and the server would
		// use its default (often 1). 1e-6 is greedy in effect (vLLM treats
		// < 1e-5 as greedy); a denormal like SmallestNonzeroFloat32 makes
		// llama.cpp's logits/temperature overflow and sample garbage.
		p.req.Temperature = 1e-6
	}
	for i, m := range msgs {
		p.req.Messages[i] = openai.ChatCompletionMessage{Role: m.Role, Content: m.Content}
		p.chars += len(m.Content)
	}
	var schema json.RawMessage
	if r.JSONSchema != nil {
		var err error
		if schema, err = compactSchema(r.JSONSchema.Schema); err != nil {
			return preparedChat{}, err
		}
		name := r.JSONSchema.Name
		if name == "" {
			name = "response"
		}
		p.req.ResponseFormat = &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
				Name: name, Description: r.JSONSchema.Description, Schema: schema, Strict: r.JSONSchema.Strict,
			},
		}
		p.chars += len(schema)
	}
	p.key = chatKey(c.cfg.ChatModel, msgs, r.JSONSchema, schema, r.Temperature, r.MaxTokens)
	return p, nil
}

func compactSchema(s any) (json.RawMessage, error) {
	var raw []byte
	switch v := s.(type) {
	case nil:
		return nil, fmt.Errorf("%w: JSONSchema.Schema is empty", ErrBadRequest)
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	case string:
		raw = []byte(v)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%w: encoding JSON schema: %w", ErrBadRequest, err)
		}
		raw = b
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf("%w: JSON schema is not valid JSON: %w", ErrBadRequest, err)
	}
	return buf.Bytes(), nil
}

// chatKey is the content address of a chat answer: everything that changes
// the answer, nothing that does not (stage, timeouts).
func chatKey(model string, msgs []Message, s *Schema, schema json.RawMessage, temp float32, maxTokens int) string {
	k := struct {
		V           int             `json:"v"`
		Model       string          `json:"model"`
		Messages    []Message       `json:"messages"`
		SchemaName  string          `json:"schema_name,omitempty"`
		Strict      bool            `json:"strict,omitempty"`
		Schema      json.RawMessage `json:"schema,omitempty"`
		Temperature float32         `json:"temperature"`
		MaxTokens   int             `json:"max_tokens"`
	}{V: 1, Model: model, Messages: msgs, Schema: schema, Temperature: temp, MaxTokens: maxTokens}
	if s != nil {
		k.SchemaName, k.Strict = s.Name, s.Strict
	}
	b, _ := json.Marshal(k) // only strings, numbers and valid raw JSON: cannot fail
	sum := sha256.Sum256(b)
	return "chat." + hex.EncodeToString(sum[:])
}

// cachedChat is the stored form of a ChatResponse.
type cachedChat struct {
	Content          string `json:"content"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	Model            string `json:"model"`
	FinishReason     string `json:"finish_reason"`
}

func (c *Client) lookupChat(ctx context.Context, p preparedChat) (ChatResponse, bool) {
	b, ok := c.cacheGet(ctx, p.key)
	if !ok {
		return ChatResponse{}, false
	}
	var cc cachedChat
	if err := json.Unmarshal(b, &cc); err != nil {
		c.o.logger.WarnContext(ctx, "llm cache entry unreadable, calling the endpoint", "key", p.key, "error", err)
		return ChatResponse{}, false
	}
	c.recordHits(ctx, "chat", p.stage, 1)
	return ChatResponse{Content: cc.Content, PromptTokens: cc.PromptTokens, CompletionTokens: cc.CompletionTokens,
		Cached: true, Model: cc.Model, FinishReason: cc.FinishReason}, true
}

func (c *Client) storeChat(ctx context.Context, key string, r ChatResponse) {
	b, err := json.Marshal(cachedChat{Content: r.Content, PromptTokens: r.PromptTokens,
		CompletionTokens: r.CompletionTokens, Model: r.Model, FinishReason: r.FinishReason})
	if err != nil {
		return // a struct of strings and ints always encodes
	}
	c.cachePut(ctx, key, b)
}

// cacheMode says how a chat call uses the cache.
type cacheMode struct{ read, write bool }

// Chat sends one chat completion, or answers from the cache.
func (c *Client) Chat(ctx context.Context, r ChatRequest) (ChatResponse, error) {
	resp, _, err := c.chat(ctx, r, cacheMode{read: true, write: true})
	return resp, err
}

// chat sends one chat completion in its span (SpanChat), or answers from the cache.
func (c *Client) chat(ctx context.Context, r ChatRequest, mode cacheMode) (ChatResponse, string, error) {
	ctx, ct := startTrace(ctx, SpanChat, "chat", c.cfg.ChatModel, stageOf(ctx, r.Stage))
	resp, key, err := c.chatOnce(ctx, r, mode)
	ct.end(err)
	return resp, key, err
}

func (c *Client) chatOnce(ctx context.Context, r ChatRequest, mode cacheMode) (ChatResponse, string, error) {
	p, err := c.prepareChat(ctx, r)
	if err != nil {
		return ChatResponse{}, "", err
	}
	if mode.read {
		if resp, ok := c.lookupChat(ctx, p); ok {
			return resp, p.key, nil
		}
	}
	est := estimateTokens(p.chars)
	start := time.Now()
	var out openai.ChatCompletionResponse
	res, err := c.do(ctx, callSpec{kind: "chat", stage: p.stage, estTokens: est, maxTokens: p.req.MaxTokens}, func(actx context.Context) error { //nolint:staticcheck // SA1019: max_tokens on purpose (prepareChat)
		resp, err := c.api.CreateChatCompletion(actx, p.req)
		if err != nil {
			return err
		}
		if len(resp.Choices) == 0 {
			return badResponse{"chat completion has no choices"}
		}
		out = resp
		return nil
	})
	c.recordCall(ctx, "chat", p.stage, start, out.Usage.PromptTokens, out.Usage.CompletionTokens, err)
	c.reconcileTokens(est, out.Usage.TotalTokens)
	if err != nil {
		return ChatResponse{}, p.key, err
	}
	c.budget.observe(res.took, out.Usage.CompletionTokens)
	resp := ChatResponse{
		Content:          out.Choices[0].Message.Content,
		PromptTokens:     out.Usage.PromptTokens,
		CompletionTokens: out.Usage.CompletionTokens,
		Model:            out.Model,
		FinishReason:     string(out.Choices[0].FinishReason),
	}
	if mode.write {
		c.storeChat(ctx, p.key, resp)
	}
	return resp, p.key, nil
}

// ChatStream sends a streaming chat completion and calls onDelta with each
// piece of content as it arrives (for server-sent answers). The full answer
// is returned at the end. A cached answer is delivered as one delta. Retries
// happen only before the first delta; an error from onDelta stops the stream
// and is returned as is.
func (c *Client) ChatStream(ctx context.Context, r ChatRequest, onDelta func(delta string) error) (ChatResponse, error) {
	ctx, ct := startTrace(ctx, SpanChat, "chat", c.cfg.ChatModel, stageOf(ctx, r.Stage), AttrStream.Bool(true))
	resp, err := c.chatStream(ctx, r, onDelta)
	ct.end(err)
	return resp, err
}

func (c *Client) chatStream(ctx context.Context, r ChatRequest, onDelta func(delta string) error) (ChatResponse, error) {
	p, err := c.prepareChat(ctx, r)
	if err != nil {
		return ChatResponse{}, err
	}
	if resp, ok := c.lookupChat(ctx, p); ok {
		if err := onDelta(resp.Content); err != nil {
			return resp, err
		}
		return resp, nil
	}
	req := p.req
	req.Stream = true
	req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	est := estimateTokens(p.chars)
	start := time.Now()

	var (
		sb        strings.Builder
		delivered bool
		resp      ChatResponse
		usage     openai.Usage
	)
	res, err := c.do(ctx, callSpec{kind: "chat", stage: p.stage, estTokens: est, maxTokens: req.MaxTokens, //nolint:staticcheck // SA1019: max_tokens on purpose (prepareChat)
		canRetry: func() bool { return !delivered }}, func(actx context.Context) error {
		sb.Reset()
		resp, usage = ChatResponse{}, openai.Usage{}
		stream, err := c.api.CreateChatCompletionStream(actx, req)
		if err != nil {
			return err
		}
		defer stream.Close()
		for {
			chunk, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("reading chat stream: %w", err)
			}
			if chunk.Usage != nil {
				usage = *chunk.Usage
			}
			if chunk.Model != "" {
				resp.Model = chunk.Model
			}
			for _, ch := range chunk.Choices {
				if ch.FinishReason != "" {
					resp.FinishReason = string(ch.FinishReason)
				}
				if ch.Delta.Content == "" {
					continue
				}
				delivered = true
				sb.WriteString(ch.Delta.Content)
				if err := onDelta(ch.Delta.Content); err != nil {
					return stopError{fmt.Errorf("delivering chat stream delta: %w", err)}
				}
			}
		}
		// go-openai reports a cut connection as a clean EOF; only a finish
		// reason proves the answer is complete.
		if resp.FinishReason == "" {
			return badResponse{"chat stream ended without a finish reason"}
		}
		return nil
	})
	c.recordCall(ctx, "chat", p.stage, start, usage.PromptTokens, usage.CompletionTokens, err)
	c.reconcileTokens(est, usage.TotalTokens)
	resp.Content = sb.String()
	resp.PromptTokens, resp.CompletionTokens = usage.PromptTokens, usage.CompletionTokens
	if err != nil {
		return resp, err
	}
	c.budget.observe(res.took, usage.CompletionTokens)
	c.storeChat(ctx, p.key, resp)
	return resp, nil
}
