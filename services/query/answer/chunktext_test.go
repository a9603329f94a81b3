package answer

import (
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/services/query/evidence"
)

// The answer reads a passage's body as the extractor wrote it (schema.ChunkText): the
// heading, however long, is not a sentence of the passage, and a passage without a
// heading keeps its first paragraph, however short.
func TestExtractiveAnswerReadsThePassageBody(t *testing.T) {
	long := strings.Repeat("Annals of the keepers of the museum and who runs it ", 8) // over 300 bytes
	tests := []struct {
		name, title, section, body string
		question, want, notWant    string
	}{
		{name: "no heading, short first paragraph", body: "Maren Fenwick runs the museum.\n\nThe cottage became a museum in 2003.",
			question: "Who runs the museum?", want: "Maren Fenwick"},
		{name: "untitled, with a section", section: "Museum > Who runs the museum", body: "Maren Fenwick runs the museum.\n\nIt opened in 2003.",
			question: "Who runs the museum?", want: "Maren Fenwick runs the museum. [1]", notWant: "Museum >"},
		{name: "long heading", title: long, section: long + "> Staff", body: "Maren Fenwick runs the museum.",
			question: "Who runs the museum?", want: "Maren Fenwick runs the museum. [1]", notWant: "Annals"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := evidence.Retrieved{Chunks: []evidence.Chunk{{ID: "a", Title: tc.title, Section: tc.section,
				Text: schema.ChunkText(tc.title, tc.section, tc.body)}}}
			got := extractiveAnswer(tc.question, c)
			if !strings.Contains(got, tc.want) || (tc.notWant != "" && strings.Contains(got, tc.notWant)) {
				t.Errorf("answer %q, want it to hold %q and not %q", got, tc.want, tc.notWant)
			}
		})
	}
}
