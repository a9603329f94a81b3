package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/graphrag/graphrag/pkg/llm/llmtest"
)

// The kinds of chat request, in the order they are printed.
const (
	kindExtraction  = "extraction"
	kindGleaning    = "gleaning"
	kindDescription = "description"
	kindReport      = "report"
	kindQuery       = "query"
)

var kinds = []string{kindExtraction, kindGleaning, kindDescription, kindReport, kindQuery}

// kindOf says what a chat request is for. Extraction and reports ask for their schemas
// by name ("extraction", "community_report"); a gleaning pass is an extraction request
// that carries an earlier answer; the grapher's description summaries have no schema and
// a prompt that opens with "Entity: ". Everything else is asked at query time.
func kindOf(req *openai.ChatCompletionRequest) string {
	schema := ""
	if rf := req.ResponseFormat; rf != nil && rf.JSONSchema != nil {
		schema = rf.JSONSchema.Name
	}
	switch {
	case schema == "extraction":
		for _, m := range req.Messages {
			if m.Role == openai.ChatMessageRoleAssistant {
				return kindGleaning
			}
		}
		return kindExtraction
	case schema == "community_report":
		return kindReport
	case schema == "" && strings.HasPrefix(lastMessage(req), "Entity: "):
		return kindDescription
	}
	return kindQuery
}

func lastMessage(req *openai.ChatCompletionRequest) string {
	if len(req.Messages) == 0 {
		return ""
	}
	return req.Messages[len(req.Messages)-1].Content
}

// tokens is the count rule: one per 4 bytes, at least one.
func tokens(s string) int { return len(s)/4 + 1 }

// promptTokens counts a request's messages and the schema of its response format.
func promptTokens(req *openai.ChatCompletionRequest) int {
	n := 0
	for _, m := range req.Messages {
		n += tokens(m.Content)
	}
	if rf := req.ResponseFormat; rf != nil && rf.JSONSchema != nil && rf.JSONSchema.Schema != nil {
		if b, err := json.Marshal(rf.JSONSchema.Schema); err == nil {
			n += tokens(string(b))
		}
	}
	return n
}

type tally struct {
	calls, prompt, completion, maxTokens int
	// text counts the tokens of the chunk text in extraction prompts, full the
	// extractions answered with as many entities and relationships as the prompt allows.
	text, full int
}

// counter answers chat requests and tallies them by kind.
type counter struct {
	mu     sync.Mutex
	byKind map[string]*tally
}

func newCounter() *counter {
	c := &counter{byKind: map[string]*tally{}}
	for _, k := range kinds {
		c.byKind[k] = &tally{}
	}
	return c
}

// serve is the llmtest.Script: it answers every chat request itself and leaves
// embeddings to the server's default.
func (c *counter) serve(r llmtest.Request) llmtest.Reply {
	if r.Chat == nil {
		return llmtest.Reply{}
	}
	k := kindOf(r.Chat)
	a := reply(k, r.Chat)
	content := a.content
	c.add(k, r.Chat, a)
	resp := openai.ChatCompletionResponse{
		ID: "chatcmpl-chatcount", Object: "chat.completion", Model: r.Chat.Model,
		Choices: []openai.ChatCompletionChoice{{FinishReason: openai.FinishReasonStop,
			Message: openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: content}}},
		Usage: openai.Usage{PromptTokens: promptTokens(r.Chat), CompletionTokens: tokens(content)},
	}
	resp.Usage.TotalTokens = resp.Usage.PromptTokens + resp.Usage.CompletionTokens
	b, err := json.Marshal(resp)
	if err != nil {
		return llmtest.Reply{Status: 500, Body: `{"error":{"message":"encoding the answer"}}`}
	}
	return llmtest.Reply{Status: 200, Body: string(b)}
}

func (c *counter) add(kind string, req *openai.ChatCompletionRequest, a answer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.byKind[kind]
	t.calls++
	t.prompt += promptTokens(req)
	t.completion += tokens(a.content)
	t.maxTokens += req.MaxTokens //nolint:staticcheck // SA1019: the services send max_tokens
	if a.text != "" {
		t.text += tokens(a.text)
	}
	if a.full {
		t.full++
	}
}

func (c *counter) print(w io.Writer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(w, "%-12s %7s %11s %11s %11s %9s %9s\n", "kind", "calls", "prompt", "completion", "max_tokens", "prompt/c", "compl/c")
	var total tally
	row := func(name string, t tally) {
		per := func(n int) float64 {
			if t.calls == 0 {
				return 0
			}
			return float64(n) / float64(t.calls)
		}
		fmt.Fprintf(w, "%-12s %7d %11d %11d %11d %9.0f %9.0f\n", name, t.calls, t.prompt, t.completion, t.maxTokens, per(t.prompt), per(t.completion))
	}
	for _, k := range kinds {
		t := *c.byKind[k]
		if k == kindQuery {
			row("indexing", total)
		}
		row(k, t)
		if k != kindQuery {
			total.calls += t.calls
			total.prompt += t.prompt
			total.completion += t.completion
			total.maxTokens += t.maxTokens
		}
	}
	ex := c.byKind[kindExtraction]
	if ex.calls == 0 {
		return
	}
	chunks := float64(ex.calls)
	fmt.Fprintf(w, "chunks extracted: %d (%d answered at both caps), chunk text tokens: %d\n", ex.calls, ex.full, ex.text)
	fmt.Fprintf(w, "per chunk extracted: %.2f calls, %.0f prompt tokens, %.0f completion tokens\n",
		float64(total.calls)/chunks, float64(total.prompt)/chunks, float64(total.completion)/chunks)
	if ex.text > 0 {
		fmt.Fprintf(w, "indexing tokens ÷ chunk text tokens: %.2f\n", float64(total.prompt+total.completion)/float64(ex.text))
	}
}
