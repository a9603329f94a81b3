package summarizer

import (
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/schema"
)

func TestExtractiveReport(t *testing.T) {
	cc := CommunityContext{
		Community: graphstore.Community{ID: "c0-x", Members: []string{"ada quillane", "marine institute", "storm inquiry", "marrow bay"}},
		Members: []graphstore.Entity{
			{Key: "ada quillane", Name: "Ada Quillane", Description: "Ada Quillane is a marine biologist. She chairs a committee."},
			{Key: "marine institute", Name: "Two Scientists, One Estuary", Description: "A collaboration."},
			{Key: "storm inquiry", Name: "Storm Inquiry", Description: "The 1999 inquiry into the storm."},
			{Key: "marrow bay", Name: "Marrow Bay", Description: ""},
		},
		Relationships: []graphstore.Relationship{
			{SourceKey: "ada quillane", TargetKey: "storm inquiry", Description: "Quillane chaired the inquiry. It reported in 1999.", Weight: 3},
			{SourceKey: "ada quillane", TargetKey: "marine institute", Description: "Quillane chaired the inquiry. It reported in 1999.", Weight: 2},
		},
	}
	r := Extractive(cc)
	if r.Title != "Ada Quillane; Two Scientists, One Estuary; Storm Inquiry and 1 more" {
		t.Errorf("title %q", r.Title)
	}
	for _, want := range []string{"This community of 4 entities centers on", "Ada Quillane is a marine biologist.", "The 1999 inquiry into the storm."} {
		if !strings.Contains(r.Summary, want) {
			t.Errorf("summary lacks %q: %s", want, r.Summary)
		}
	}
	if strings.Contains(r.Summary, "She chairs a committee.") {
		t.Errorf("summary takes more than the first sentence of a description: %s", r.Summary)
	}
	if len(r.Findings) != 1 || r.Findings[0].Explanation != "Quillane chaired the inquiry." {
		t.Errorf("findings %+v (duplicate evidence collapses)", r.Findings)
	}
	if r.Rating <= 0 || r.Rating > 10 {
		t.Errorf("rating %v", r.Rating)
	}
	// Larger and denser communities rate higher.
	small := Extractive(CommunityContext{Members: cc.Members[:2]})
	if small.Rating >= r.Rating {
		t.Errorf("rating of 2 members without relationships %v >= %v", small.Rating, r.Rating)
	}
	text := r.Text()
	if !strings.HasPrefix(text, r.Title+"\n\n"+r.Summary) || !strings.Contains(text, "- ada quillane — storm inquiry: Quillane chaired the inquiry.") {
		t.Errorf("report text %q", text)
	}
}

func TestRenderRespectsBudget(t *testing.T) {
	cc := CommunityContext{SubReports: []schema.Report{{Title: "Sub", Summary: strings.Repeat("word ", 50)}}}
	for range 200 {
		cc.Members = append(cc.Members, graphstore.Entity{Key: "k", Name: "Entity", Type: "T", Description: strings.Repeat("x", 200)})
	}
	out := render(cc, 500)
	if approxTokens(out) > 520 {
		t.Fatalf("context of ~%d tokens exceeds the 500-token budget", approxTokens(out))
	}
	if !strings.Contains(out, "## Sub-community reports") || !strings.Contains(out, "## Entities") {
		t.Fatalf("sections missing:\n%s", out[:200])
	}
}
