package answer

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/services/query/evidence"
)

// maxFollowUpBytes bounds a follow-up question: a model's are cut, as the engine bounds
// a question.
const maxFollowUpBytes = 300

const followUpSystem = `You plan the searches that answer a question over a knowledge graph. You are given the question and the community reports ranked first for it, which summarize the corpus around its topic.
Write follow-up questions, each about specific entities, facts or events named in the reports, whose answers in the source passages would complete or support the answer to the question. Do not repeat the question. Return JSON {"questions": ["...", ...]}.`

// followUpPrompt is the user message of the follow-up call: the primer reports, then
// the question and how many follow-ups to write.
func followUpPrompt(q string, primer []evidence.Community, n int) string {
	var b strings.Builder
	b.WriteString("## Community reports\n")
	for i, c := range primer {
		fmt.Fprintf(&b, "[%d] %s: %s\n", i+1, c.Title, oneLine(c.Summary, 1200))
	}
	fmt.Fprintf(&b, "\n## Question\n%s\n\nWrite at most %d follow-up questions.", q, n)
	return b.String()
}

// FollowUps asks the model for follow-up questions; a failed call, or one that returns
// none, falls back to the key entities, as the extractive answerer does.
func (m *modelAnswerer) FollowUps(ctx context.Context, q string, primer []evidence.Community, keyEntities []string, n int) []string {
	if n <= 0 {
		return nil
	}
	if len(primer) > 0 {
		out, _, err := llm.ChatJSON[struct {
			Questions []string `json:"questions"`
		}](ctx, m.client, llm.ChatRequest{
			Stage: "query", System: followUpSystem, User: followUpPrompt(q, primer, n), MaxTokens: 60 * n,
			JSONSchema: &llm.Schema{Name: "follow_ups", Strict: true, Schema: map[string]any{
				"type": "object", "properties": map[string]any{"questions": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}},
				"required": []string{"questions"}, "additionalProperties": false}},
		})
		if err != nil {
			m.log.WarnContext(ctx, "asking for follow-up questions failed; searching the key entities", "err", err)
		} else if fu := followUps(out.Questions, n, q); len(fu) > 0 {
			return fu
		}
	}
	return followUps(keyEntities, n, q)
}

// followUps keeps at most n distinct, non-empty candidates other than the question,
// each on one line and cut to maxFollowUpBytes.
func followUps(candidates []string, n int, q string) []string {
	seen := map[string]bool{strings.ToLower(strings.TrimSpace(q)): true}
	var out []string
	for _, c := range candidates {
		if len(out) >= n {
			break
		}
		c = strings.Join(strings.Fields(c), " ")
		if len(c) > maxFollowUpBytes {
			cut := maxFollowUpBytes
			for cut > 0 && !utf8.RuneStart(c[cut]) {
				cut--
			}
			c = c[:cut]
		}
		k := strings.ToLower(c)
		if c == "" || !utf8.ValidString(c) || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, c)
	}
	return out
}
