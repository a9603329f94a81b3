package answer

import (
	"strings"
	"testing"

	"github.com/graphrag/graphrag/services/query/evidence"
)

// Regression for defect 6: community context reaches the generation prompt.
func TestCommunityContextInPrompt(t *testing.T) {
	c := evidence.Retrieved{
		Chunks:        []evidence.Chunk{{ID: "c1", Text: "Passage one."}},
		Communities:   []evidence.Community{{ID: "k1", Title: "Computing pioneers", Summary: "Lovelace and Babbage built the foundations."}},
		Relationships: []evidence.Relationship{{Source: "ada lovelace", Target: "charles babbage", Type: "WORKED_WITH", Description: "They corresponded."}},
	}
	p := localPrompt("Who worked with Babbage?", c, Style{})
	for _, want := range []string{"## Themes", "Computing pioneers", "Lovelace and Babbage built the foundations.",
		"## Relationships", "WORKED_WITH", "## Passages", "[1] (c1) Passage one.", "## Question", "Who worked with Babbage?"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
}
