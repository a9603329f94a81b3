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
	if r.Title != "Ada Quillane and Storm Inquiry" {
		t.Errorf("title %q, want the lead and its strongest relation", r.Title)
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
	if !strings.HasPrefix(text, r.Title+"\n\n"+r.Summary) || !strings.Contains(text, "- Ada Quillane — Storm Inquiry: Quillane chaired the inquiry.") {
		t.Errorf("report text %q", text)
	}
}

// An extractive title names the lead member and the member most strongly related to it,
// never a list of names.
func TestExtractiveTitle(t *testing.T) {
	ent := func(key, name string) graphstore.Entity { return graphstore.Entity{Key: key, Name: name} }
	rel := func(a, b string, w float64) graphstore.Relationship {
		return graphstore.Relationship{SourceKey: a, TargetKey: b, Weight: w}
	}
	storm, inquiry, wall, boat := ent("storm", "Storm Hester"), ent("inquiry", "The Storm Hester Inquiry"), ent("wall", "harbour wall"), ent("boat", "Kittiwake")
	long := ent("long", "Mayor Helena Dunmore and the Town Council of Marrow Bay")
	for _, tc := range []struct {
		name string
		cc   CommunityContext
		want string
	}{
		{"strongest relation of the lead", CommunityContext{Members: []graphstore.Entity{storm, wall, boat},
			Relationships: []graphstore.Relationship{rel("storm", "wall", 1), rel("boat", "storm", 4), rel("wall", "boat", 9)}}, "Storm Hester and Kittiwake"},
		{"a partner holding the lead's name is passed over", CommunityContext{Members: []graphstore.Entity{storm, inquiry, wall},
			Relationships: []graphstore.Relationship{rel("storm", "inquiry", 9), rel("storm", "wall", 1)}}, "Storm Hester and harbour wall"},
		{"no relationship: the next central member", CommunityContext{Members: []graphstore.Entity{storm, inquiry, boat, wall}}, "Storm Hester and Kittiwake"},
		{"too long to read at a glance", CommunityContext{Members: []graphstore.Entity{storm, long},
			Relationships: []graphstore.Relationship{rel("storm", "long", 2)}}, "Storm Hester"},
		{"names holding \"and\" are joined by \"with\"", CommunityContext{Members: []graphstore.Entity{ent("mayor", "Mayor Dunmore and the Council"), wall}}, "Mayor Dunmore and the Council with harbour wall"},
		{"one member", CommunityContext{Members: []graphstore.Entity{boat}}, "Kittiwake"},
		{"no member", CommunityContext{}, "Empty community"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Extractive(tc.cc).Title; got != tc.want {
				t.Errorf("title %q, want %q", got, tc.want)
			}
		})
	}
}

// The sub-communities' titles are one sentence at the end of the summary, after the
// members' descriptions, so that the summary opens with what the community is about.
func TestExtractiveSummarySubReports(t *testing.T) {
	cc := CommunityContext{
		Members:    []graphstore.Entity{{Key: "a", Name: "Storm Hester", Description: "Storm Hester struck in 1998."}, {Key: "b", Name: "Kittiwake"}},
		SubReports: []schema.Report{{Title: "Storm Hester and Kittiwake"}, {Title: "The inquiry and the harbour wall"}},
	}
	want := "This community of 2 entities centers on Storm Hester and Kittiwake. Storm Hester struck in 1998. " +
		"It brings together 2 smaller communities: Storm Hester and Kittiwake; The inquiry and the harbour wall."
	if got := Extractive(cc).Summary; got != want {
		t.Errorf("summary\n%s\nwant\n%s", got, want)
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
