package main

import (
	"encoding/json"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/graphrag/graphrag/pkg/llm/llmtest"
)

func chatRequest(schema string, msgs ...openai.ChatCompletionMessage) *openai.ChatCompletionRequest {
	r := &openai.ChatCompletionRequest{Model: "fake", Messages: msgs, MaxTokens: 100} //nolint:staticcheck // SA1019: as the services send it
	if schema != "" {
		r.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: schema, Schema: json.RawMessage(`{"type":"object"}`)}}
	}
	return r
}

func msg(role, content string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: role, Content: content}
}

const extractionUser = "Extract at most 3 entities and 1 relationships.\nThe text comes from the document titled \"Ada Lovelace\".\n\nText:\n" +
	"Ada Lovelace worked with Charles Babbage in London on the Analytical Engine. Lovelace met Mary Somerville at the Royal Society."

func TestKindOf(t *testing.T) {
	sys, user, asst := openai.ChatMessageRoleSystem, openai.ChatMessageRoleUser, openai.ChatMessageRoleAssistant
	for _, tc := range []struct {
		name string
		req  *openai.ChatCompletionRequest
		want string
	}{
		{"extraction", chatRequest("extraction", msg(sys, "s"), msg(user, extractionUser)), kindExtraction},
		{"gleaning", chatRequest("extraction", msg(sys, "s"), msg(user, extractionUser), msg(asst, "{}"), msg(user, "more?")), kindGleaning},
		{"description", chatRequest("", msg(sys, "s"), msg(user, "Entity: Ada\nDescriptions:\n- a\n- b")), kindDescription},
		{"report", chatRequest("community_report", msg(sys, "s"), msg(user, "## Entities\n")), kindReport},
		{"answer", chatRequest("", msg(user, "Who?")), kindQuery},
		{"query schema", chatRequest("query_entities", msg(user, "Who?")), kindQuery},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := kindOf(tc.req); got != tc.want {
				t.Errorf("kindOf = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestExtractionAnswerKeepsThePromptsCaps(t *testing.T) {
	content, text, full := extraction(extractionUser)
	var out struct {
		Entities      []entityJSON
		Relationships []relationshipJSON
	}
	if err := json.Unmarshal([]byte(content), &out); err != nil {
		t.Fatalf("answer %q: %v", content, err)
	}
	if !strings.HasPrefix(text, "Ada Lovelace worked") {
		t.Errorf("text = %q", text)
	}
	if len(out.Entities) == 0 || len(out.Entities) > 3 || len(out.Relationships) > 1 {
		t.Fatalf("%d entities and %d relationships, want 1..3 and at most 1: %s", len(out.Entities), len(out.Relationships), content)
	}
	if full != (len(out.Entities) == 3 && len(out.Relationships) == 1) {
		t.Errorf("full = %v with %d entities and %d relationships", full, len(out.Entities), len(out.Relationships))
	}
	for _, r := range out.Relationships {
		if r.Strength < 1 || r.Strength > 10 {
			t.Errorf("strength %d outside 1..10", r.Strength)
		}
	}
	for _, e := range out.Entities {
		if strings.Contains(strings.TrimSuffix(e.Description, "."), ". ") {
			t.Errorf("description of %s is more than one sentence: %q", e.Name, e.Description)
		}
	}
}

func TestReportAnswerFromThePrompt(t *testing.T) {
	prompt := "## Entities\n- Ada Lovelace (PERSON) [PR:0.3000] - A mathematician. She wrote notes.\n- London (GEO) [PR:0.2000] - A city.\n" +
		"## Relationships\n- Ada Lovelace --[LIVED_IN]--> London: She lived in London.\n"
	var rep struct {
		Title    string
		Summary  string
		Findings []struct{ Summary, Explanation string }
	}
	if err := json.Unmarshal([]byte(report(prompt)), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Title != "Ada Lovelace, London" || rep.Summary != "A mathematician. A city." || len(rep.Findings) != 1 ||
		rep.Findings[0].Explanation != "She lived in London." {
		t.Errorf("report %+v", rep)
	}
}

func TestCounterTalliesByKind(t *testing.T) {
	c := newCounter()
	sys, user := openai.ChatMessageRoleSystem, openai.ChatMessageRoleUser
	req := chatRequest("extraction", msg(sys, "system prompt"), msg(user, extractionUser))
	rep := c.serve(llmtest.Request{Path: "/v1/chat/completions", Chat: req})
	var resp openai.ChatCompletionResponse
	if err := json.Unmarshal([]byte(rep.Body), &resp); err != nil || rep.Status != 200 || len(resp.Choices) != 1 {
		t.Fatalf("reply %d %s: %v", rep.Status, rep.Body, err)
	}
	c.serve(llmtest.Request{Path: "/v1/chat/completions", Chat: chatRequest("", msg(user, "Who?"))})
	if r := c.serve(llmtest.Request{Path: "/v1/embeddings", Embed: &openai.EmbeddingRequest{Input: "x"}}); r.Status != 0 {
		t.Errorf("an embedding request was answered by the script: %+v", r)
	}
	ex := c.byKind[kindExtraction]
	// Messages and the schema: "system prompt" (13 bytes), the user prompt, `{"type":"object"}` (17).
	wantPrompt := tokens("system prompt") + tokens(extractionUser) + tokens(`{"type":"object"}`)
	if ex.calls != 1 || ex.prompt != wantPrompt || ex.completion != tokens(resp.Choices[0].Message.Content) || ex.maxTokens != 100 {
		t.Errorf("extraction tally %+v, want 1 call, %d prompt tokens", *ex, wantPrompt)
	}
	if resp.Usage.PromptTokens != wantPrompt {
		t.Errorf("usage says %d prompt tokens, want %d", resp.Usage.PromptTokens, wantPrompt)
	}
	if q := c.byKind[kindQuery]; q.calls != 1 {
		t.Errorf("query tally %+v", *q)
	}
	var out strings.Builder
	c.print(&out)
	for _, want := range []string{"indexing", "chunks extracted: 1", "indexing tokens ÷ chunk text tokens"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("printout lacks %q:\n%s", want, out.String())
		}
	}
}
