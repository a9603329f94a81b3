package answer

import (
	"fmt"
	"strings"

	"github.com/graphrag/graphrag/services/query/evidence"
)

const localSystem = `You answer questions using only the context provided: themes from community reports, relationships from a knowledge graph, and numbered passages.
Cite the passages you use with their numbers in square brackets, like [1] or [2][3]. If the context does not contain the answer, say so. Be concise and specific.`

// localPrompt renders the generation prompt: themes (community reports), relationships,
// numbered passages, the question, then the asker's style (styled).
func localPrompt(question string, c evidence.Retrieved, style Style) string {
	var b strings.Builder
	if len(c.Communities) > 0 {
		b.WriteString("## Themes\n")
		for _, cm := range c.Communities {
			fmt.Fprintf(&b, "- %s: %s\n", cm.Title, oneLine(cm.Summary, 600))
		}
		b.WriteString("\n")
	}
	if len(c.Relationships) > 0 {
		b.WriteString("## Relationships\n")
		for _, r := range c.Relationships {
			fmt.Fprintf(&b, "- %s --[%s]--> %s: %s\n", r.Source, r.Type, r.Target, oneLine(r.Description, 300))
		}
		b.WriteString("\n")
	}
	b.WriteString("## Passages\n")
	for i, ch := range c.Chunks {
		fmt.Fprintf(&b, "[%d] (%s) %s\n\n", i+1, ch.ID, ch.Text)
	}
	b.WriteString("## Question\n")
	b.WriteString(question)
	b.WriteString("\n")
	styled(&b, style)
	return b.String()
}

func (s Style) empty() bool {
	return strings.TrimSpace(s.ResponseType) == "" && strings.TrimSpace(s.UserPrompt) == ""
}

// styled writes the asker's response type and instructions after the question, where
// the model reads them last; nothing when there are none.
func styled(b *strings.Builder, s Style) {
	if t := strings.TrimSpace(s.ResponseType); t != "" {
		fmt.Fprintf(b, "\n## Response type\n%s\n", t)
	}
	if u := strings.TrimSpace(s.UserPrompt); u != "" {
		fmt.Fprintf(b, "\n## Additional instructions\n%s\n", u)
	}
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// mapPrompt is the user message of a community's map call.
func mapPrompt(c evidence.Community, q string) string {
	return "## Community report\n" + c.Title + "\n" + c.Summary + "\n\n## Question\n" + q
}

const mapSystem = `You answer a question using only one community report from a knowledge graph.
Return JSON {"answer": "...", "score": N}: the answer holds the points of the report relevant to the question (at most 5 bullet points); score is 0-100, how helpful the report is for the question; if it is not relevant, return score 0 and answer "Not relevant".`

const reduceSystem = `You synthesize partial answers, each from one community of a knowledge graph and numbered, into one coherent answer to the question. Remove redundancy, organize by theme, keep the most relevant points first, and cite the partial answers you use as [n]. Use only what the partial answers say.`

// reducePrompt renders the reduce prompt.
func reducePrompt(q string, partials []evidence.PartialAnswer, style Style) string {
	var b strings.Builder
	b.WriteString("## Partial answers\n")
	for i, p := range partials {
		fmt.Fprintf(&b, "[%d] (score %.0f) %s\n\n", i+1, p.Score, p.Answer)
	}
	b.WriteString("## Question\n")
	b.WriteString(q)
	if !style.empty() {
		b.WriteString("\n")
		styled(&b, style)
	}
	return b.String()
}

func estimateTokens(s string) int { return len(s)/4 + 1 }
