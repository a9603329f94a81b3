package engine

import (
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
