package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/graphrag/graphrag/services/query/engine"
)

func openAIClient(srvURL, token string) *openai.Client {
	cfg := openai.DefaultConfig(token)
	cfg.BaseURL = srvURL + "/v1"
	return openai.NewClientWithConfig(cfg)
}

// TestChatCompletionsGoOpenAI uses a corpus as a model through go-openai, a real
// OpenAI client: the answer, its sources list, streamed and not.
func TestChatCompletionsGoOpenAI(t *testing.T) {
	srv := newTestAPI(t, DefaultConfig(), newFakes().options()...)
	c := openAIClient(srv.URL, "unused")
	req := openai.ChatCompletionRequest{Model: "demo", Messages: []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "You are helpful."},
		{Role: openai.ChatMessageRoleUser, Content: "Who designed the Analytical Engine?"},
	}}
	resp, err := c.CreateChatCompletion(t.Context(), req)
	if err != nil {
		t.Fatalf("chat completion: %v", err)
	}
	if len(resp.Choices) != 1 || resp.Choices[0].FinishReason != openai.FinishReasonStop || resp.Object != "chat.completion" || resp.Model != "demo" {
		t.Fatalf("response %+v", resp)
	}
	answer := resp.Choices[0].Message.Content
	if u := resp.Usage; u.PromptTokens < 10 || u.CompletionTokens < 10 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage %+v: want the tokens of the messages and of the answer", u)
	}
	if !strings.Contains(answer, "Babbage") || !strings.Contains(answer, "\n\nSources:\n[1] ") || !strings.Contains(answer, "(document d2)") {
		t.Errorf("answer %q: want the answer naming Babbage, then its sources with the cited document", answer)
	}

	req.Stream = true
	req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	st, err := c.CreateChatCompletionStream(t.Context(), req)
	if err != nil {
		t.Fatalf("streaming: %v", err)
	}
	defer st.Close()
	var streamed strings.Builder
	var finish openai.FinishReason
	var usage *openai.Usage
	chunks := 0
	for {
		ch, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("receiving: %v", err)
		}
		if len(ch.Choices) == 0 { // the usage chunk
			usage = ch.Usage
			continue
		}
		chunks++
		if ch.Object != "chat.completion.chunk" || ch.ID != "" && !strings.HasPrefix(ch.ID, "chatcmpl-") {
			t.Errorf("chunk %+v", ch)
		}
		streamed.WriteString(ch.Choices[0].Delta.Content)
		if ch.Choices[0].FinishReason != "" {
			finish = ch.Choices[0].FinishReason
		}
	}
	if streamed.String() != answer || finish != openai.FinishReasonStop || chunks < 3 {
		t.Errorf("stream of %d chunks gave %q (finish %q), want the same answer %q", chunks, streamed.String(), finish, answer)
	}
	if usage == nil || *usage != resp.Usage {
		t.Errorf("streamed usage %+v, want the usage of the same answer %+v", usage, resp.Usage)
	}

	global := req
	global.Stream, global.Model = false, "demo:global"
	if resp, err := c.CreateChatCompletion(t.Context(), global); err != nil || resp.Choices[0].Message.Content == "" {
		t.Errorf("global mode: %+v, %v", resp, err)
	}

	for name, tc := range map[string]struct {
		req  openai.ChatCompletionRequest
		want int
	}{
		"unknown corpus":           {openai.ChatCompletionRequest{Model: "nope", Messages: req.Messages}, 404},
		"unknown corpus, streamed": {openai.ChatCompletionRequest{Model: "nope", Messages: req.Messages, Stream: true}, 404},
		"OpenAI model name":        {openai.ChatCompletionRequest{Model: "gpt-4o", Messages: req.Messages}, 404},
		"OpenAI model, streamed":   {openai.ChatCompletionRequest{Model: "gpt-4o", Messages: req.Messages, Stream: true}, 404},
		"bad model":                {openai.ChatCompletionRequest{Model: "Not A Corpus", Messages: req.Messages}, 404},
		"bad mode":                 {openai.ChatCompletionRequest{Model: "demo:deep", Messages: req.Messages}, 404},
		"no user text":             {openai.ChatCompletionRequest{Model: "demo", Messages: req.Messages[:1]}, 400},
		"two choices":              {openai.ChatCompletionRequest{Model: "demo", Messages: req.Messages, N: 2}, 400},
	} {
		t.Run(name, func(t *testing.T) {
			var err error
			if tc.req.Stream {
				var st *openai.ChatCompletionStream
				if st, err = c.CreateChatCompletionStream(t.Context(), tc.req); err == nil {
					st.Close()
				}
			} else {
				_, err = c.CreateChatCompletion(t.Context(), tc.req)
			}
			var apiErr *openai.APIError
			if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != tc.want || apiErr.Message == "" {
				t.Fatalf("error %v, want an API error %d with a message", err, tc.want)
			}
			if tc.want == 404 && (apiErr.Code != "model_not_found" || apiErr.Type != "invalid_request_error" || apiErr.Param == nil || *apiErr.Param != "model") {
				t.Errorf("error %+v: want OpenAI's model_not_found", apiErr)
			}
		})
	}

	models, err := c.ListModels(t.Context())
	if err != nil || len(models.Models) != 2 || models.Models[0].ID != "demo" || models.Models[0].CreatedAt != fakeCreated.Unix() {
		t.Errorf("models %+v, %v: want demo first, created when the corpus began", models, err)
	}
	for _, id := range []string{"demo", "demo:global"} {
		if m, err := c.GetModel(t.Context(), id); err != nil || m.ID != id || m.Object != "model" || m.CreatedAt != fakeCreated.Unix() {
			t.Errorf("model %s: %+v, %v", id, m, err)
		}
	}
	for _, id := range []string{"nope", "gpt-4o", "demo:deep"} {
		_, err := c.GetModel(t.Context(), id)
		var apiErr *openai.APIError
		if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 404 || apiErr.Code != "model_not_found" {
			t.Errorf("model %s: %v, want 404 model_not_found", id, err)
		}
	}
}

// TestChatCompletionsParts: content given as an array of parts is read.
func TestChatCompletionsParts(t *testing.T) {
	srv := newTestAPI(t, DefaultConfig())
	resp, body := call(t, srv, http.MethodPost, "/v1/chat/completions", "",
		`{"model":"demo","messages":[{"role":"user","content":[{"type":"text","text":"Who designed the Analytical Engine?"}]}],"temperature":0.2}`)
	var cc chatCompletion
	decodeOK(t, resp, body, &cc)
	if len(cc.Choices) != 1 || !strings.Contains(cc.Choices[0].Message.Content, "Babbage") || len(cc.Citations) == 0 {
		t.Errorf("completion %+v", cc)
	}
}

// TestChatQueryHistory: a follow-up is asked with the user messages before it, so
// that what its pronouns stand for is retrieved with it; the assistant's messages are
// left out, and so are the oldest turns beyond the limits.
func TestChatQueryHistory(t *testing.T) {
	msg := func(role, text string) chatMessage {
		b, _ := json.Marshal(text)
		return chatMessage{Role: role, Content: b}
	}
	long := strings.Repeat("word ", engine.MaxQueryBytes/5)
	for _, tc := range []struct {
		name string
		msgs []chatMessage
		want string
	}{
		{"one question", []chatMessage{msg("system", "Be brief."), msg("user", "Who is Ada Quillane?")}, "Who is Ada Quillane?"},
		{"a follow-up", []chatMessage{msg("user", "Who is Ada Quillane?"), msg("assistant", "A keeper in Marrow Bay."), msg("user", "Where does she work?")},
			"Who is Ada Quillane?\nWhere does she work?"},
		{"at most two turns before", []chatMessage{msg("user", "one"), msg("user", "two"), msg("assistant", "x"), msg("user", "three"), msg("user", "four")},
			"two\nthree\nfour"},
		{"an empty turn skipped", []chatMessage{msg("user", "one"), msg("user", " "), msg("user", "two")}, "one\ntwo"},
		{"too long a history left out", []chatMessage{msg("user", long), msg("user", "Where does she work?")}, "Where does she work?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := chatQuery(chatRequest{Model: "demo", Messages: tc.msgs})
			if err != nil {
				t.Fatal(err)
			}
			if req.Query != tc.want {
				t.Errorf("query %q, want %q", req.Query, tc.want)
			}
		})
	}
}
