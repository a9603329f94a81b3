package engine

import (
	"fmt"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"testing"

	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// CommunityOf reads the summary of a report record as the summarizer writes it
// (schema.Report), whatever blank lines its title and summary hold, and reads the
// records of fixtures whose text does not begin with their title attribute by the
// text's first blank line.
func TestCommunityOfReadsTheSummary(t *testing.T) {
	tests := []struct {
		name  string
		rep   schema.Report
		text  string // the record's text; rep.Text() when empty
		title string // the title attribute; rep.Title when empty
		want  string
	}{
		{name: "report", rep: schema.Report{Title: "Lighthouse", Summary: "The keeper kept the light.", Rating: 5},
			want: "The keeper kept the light."},
		{name: "findings follow the summary", rep: schema.Report{Title: "T", Summary: "S.", Findings: []schema.Finding{{Summary: "F", Explanation: "E"}}},
			want: "S.\n- F: E"},
		{name: "summary with paragraphs", rep: schema.Report{Title: "T", Summary: "One.\n\nTwo."}, want: "One.\n\nTwo."},
		{name: "title with a blank line", rep: schema.Report{Title: "Part\n\nOne", Summary: "The summary."}, want: "The summary."},
		{name: "another title attribute", text: "Lighthouse\n\nThe keeper kept the light.", title: "current", want: "The keeper kept the light."},
		{name: "no blank line", text: "Only text.", title: "t", want: "Only text."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text, title := tc.text, tc.title
			if text == "" {
				text = tc.rep.Text()
			}
			if title == "" {
				title = tc.rep.Title
			}
			c := CommunityOf(vectorstore.Record{ID: "c1", Text: text, Attrs: map[string]string{
				schema.ReportLevel: "1", schema.ReportTitle: title, schema.ReportRating: "5.0"}}, 0.5)
			if c.Summary != tc.want || c.Title != title || c.Level != 1 || c.Rating != 5 || c.Score != 0.5 {
				t.Errorf("CommunityOf = %+v, want summary %q under title %q", c, tc.want, title)
			}
		})
	}
}

// A retrieved chunk carries its record's section, which the reader of its text
// (schema.SplitChunkText) needs with its title.
func TestRetrievedChunksCarryTheirSection(t *testing.T) {
	st := querytest.Open(t)
	title, section, body := "Keeper's log", "Keeper's log > 1871", "The lighthouse was first lit in 1871."
	st.WriteChunks(t, "demo", []querytest.Passage{{ID: "c1", Doc: "d1", Title: title, Section: section, Text: schema.ChunkText(title, section, body)}})
	e, err := New(Config{}, Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, Logger: querytest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := contextOf(e.Retrieve(t.Context(), Request{Corpus: "demo", Query: "When was the lighthouse first lit?"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Chunks) != 1 {
		t.Fatalf("retrieved %d chunks, want 1", len(r.Chunks))
	}
	c := r.Chunks[0]
	if h, b := schema.SplitChunkText(c.Title, c.Section, c.Text); c.Section != section || h != schema.ChunkHeading(title, section) || b != body {
		t.Errorf("chunk %+v reads as heading %q, body %q; want section %q and body %q", c, h, b, section, body)
	}
}

// Local search reads only the memberships of the entities nearest the question
// (nearestCommunities), not the whole hierarchy, and must pick the same reports as
// scoring every community by its members (memberScores) does: at every level and at
// any, for few and for many reports, with more entities than one batch reads.
func TestNearestCommunitiesPickTheReportsMemberScoresPick(t *testing.T) {
	st := querytest.Open(t)
	ctx := t.Context()
	words := []string{"harbour", "lighthouse", "keeper", "ferry", "storm", "museum", "school", "market", "railway", "mill"}
	var mentions []graphstore.EntityMention
	var reports []querytest.Report
	for i := range 200 { // 200 entities: 20 level-0 communities of 10, 5 level-1 ones of 40
		name := fmt.Sprintf("%s %s %d", words[i%len(words)], words[(i/7)%len(words)], i)
		mentions = append(mentions, querytest.Mention(name, "PLACE", name))
		if i%10 == 0 {
			reports = append(reports, querytest.Report{ID: fmt.Sprintf("a%02d", i/10), Level: 0, Rating: float64(i % 7), Title: name, Summary: name + "."})
		}
		if i%40 == 0 {
			reports = append(reports, querytest.Report{ID: fmt.Sprintf("b%d", i/40), Level: 1, Rating: 5, Title: name, Summary: name + "."})
		}
		for j := range reports {
			r := &reports[j]
			if (r.Level == 0 && r.ID == fmt.Sprintf("a%02d", i/10)) || (r.Level == 1 && r.ID == fmt.Sprintf("b%d", i/40)) {
				r.Members = append(r.Members, name)
			}
		}
	}
	if err := st.Graph.Merge(ctx, "demo", []graphstore.ChunkExtraction{{ChunkID: "c1", DocumentID: "d1", Entities: mentions}}); err != nil {
		t.Fatal(err)
	}
	st.WriteEntities(t, "demo", mentions)
	st.WriteReports(t, "demo", reports)
	e, err := New(Config{}, Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, Logger: querytest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"the lighthouse keeper in the storm", "ferry market", "railway mill school"} {
		qvec, err := e.embedQuery(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, level := range []int{-1, 0, 1} {
			cs, err := st.Graph.Communities(ctx, "demo", level)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []int{1, 3, 10} {
				want, err := e.rankedReports(ctx, "demo", qvec, cs, k, false)
				if err != nil {
					t.Fatal(err)
				}
				var lv *int
				if level >= 0 {
					lv = &level
				}
				got, err := e.communities(ctx, "demo", qvec, lv, k)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) || len(want) == 0 {
					t.Fatalf("%q level %d k %d: %d reports, want %d (non-zero)", q, level, k, len(got), len(want))
				}
				for i := range want {
					if got[i].ID != want[i].ID || got[i].Score != want[i].Score {
						t.Fatalf("%q level %d k %d: report %d is %s (%v), want %s (%v)", q, level, k, i, got[i].ID, got[i].Score, want[i].ID, want[i].Score)
					}
				}
			}
		}
	}
}
