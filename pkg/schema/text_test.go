package schema

import (
	"encoding/json"
	"testing"
)

// The chunk texts below are the bytes the extractor has stored since its first
// version: the format is persistent, and both writing and reading must keep them.
func TestChunkText(t *testing.T) {
	tests := []struct {
		name, title, section, body string
		stored, heading            string
	}{
		{"title and section", "Doc", "Doc > Intro", "Body.", "Doc › Doc > Intro\n\nBody.", "Doc › Doc > Intro"},
		{"section repeats title", "Doc", "Doc", "Body.", "Doc\n\nBody.", "Doc"},
		{"no heading", "", "", "Body.", "Body.", ""},
		{"no heading, blank lines", "", "", "Short.\n\nMore.", "Short.\n\nMore.", ""},
		{"title only", "Doc", "", "Body.", "Doc\n\nBody.", "Doc"},
		{"untitled with section", "", "Guide > Install", "Run it.", "Guide > Install\n\nRun it.", "Guide > Install"},
		{"body with blank lines", "Doc", "Doc > A", "One.\n\nTwo.\n\n\nThree.", "Doc › Doc > A\n\nOne.\n\nTwo.\n\n\nThree.", "Doc › Doc > A"},
		{"heading holding the separator", "A › B", "C › D", "Body.", "A › B › C › D\n\nBody.", "A › B › C › D"},
		{"title holding a blank line", "Part\n\nOne", "", "Body.", "Part\n\nOne\n\nBody.", "Part\n\nOne"},
		{"empty body", "Doc", "", "", "Doc\n\n", "Doc"},
		{"long heading", "Doc", "Doc > " + longLine, "Body.", "Doc › Doc > " + longLine + "\n\nBody.", "Doc › Doc > " + longLine},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ChunkText(tc.title, tc.section, tc.body); got != tc.stored {
				t.Errorf("ChunkText(%q, %q, %q) = %q, want %q", tc.title, tc.section, tc.body, got, tc.stored)
			}
			h, b := SplitChunkText(tc.title, tc.section, tc.stored)
			if h != tc.heading || b != tc.body {
				t.Errorf("SplitChunkText(%q, %q, %q) = %q, %q; want %q, %q", tc.title, tc.section, tc.stored, h, b, tc.heading, tc.body)
			}
		})
	}
}

// HeadingOf reads back the heading and title ChunkText writes, from the text alone.
func TestHeadingOf(t *testing.T) {
	for _, tc := range []struct {
		text, heading, title string
		ok                   bool
	}{
		{ChunkText("Doc", "Doc > Intro", "Body.\n\nMore."), "Doc › Doc > Intro", "Doc", true},
		{ChunkText("Doc", "", "Body."), "Doc", "Doc", true},
		{ChunkText("", "Guide > Install", "Run it."), "Guide > Install", "Guide > Install", true},
		{ChunkText("", "", "Body."), "", "", false},
		{Report{Title: "Lighthouse", Summary: "The keeper."}.Text(), "Lighthouse", "Lighthouse", true},
		{"\n\nBody.", "", "", true},
	} {
		if h, title, ok := HeadingOf(tc.text); h != tc.heading || title != tc.title || ok != tc.ok {
			t.Errorf("HeadingOf(%q) = %q, %q, %v; want %q, %q, %v", tc.text, h, title, ok, tc.heading, tc.title, tc.ok)
		}
	}
}

// longLine is longer than any bound a reader could guess for a heading.
var longLine = func() string {
	b := make([]byte, 600)
	for i := range b {
		b[i] = 'x'
	}
	return string(b)
}()

// A record whose text does not begin with the heading its attributes give was not
// written by ChunkText (a fixture, a record of another tool): it is all body, and
// no paragraph of it is taken for a heading.
func TestSplitChunkTextWithoutItsHeading(t *testing.T) {
	for _, tc := range []struct{ title, section, text string }{
		{"Doc", "", "Other\n\nBody."},
		{"Doc", "Doc > A", "Doc\n\nBody."},
		{"Doc", "", "Doc › A\n\nBody."},
		{"Doc", "", "Doc"},
		{"", "", "First paragraph.\n\nSecond."},
	} {
		if h, b := SplitChunkText(tc.title, tc.section, tc.text); h != "" || b != tc.text {
			t.Errorf("SplitChunkText(%q, %q, %q) = %q, %q; want all body", tc.title, tc.section, tc.text, h, b)
		}
	}
}

func FuzzChunkText(f *testing.F) {
	f.Add("Doc", "Doc > Intro", "Body.\n\nMore.")
	f.Add("", "", "a\n\nb")
	f.Add("A › B", "", "\n\n")
	f.Fuzz(func(t *testing.T, title, section, body string) {
		text := ChunkText(title, section, body)
		h, b := SplitChunkText(title, section, text)
		if h != ChunkHeading(title, section) || b != body {
			t.Fatalf("SplitChunkText(%q, %q, ChunkText(...)) = %q, %q; want %q, %q", title, section, h, b, ChunkHeading(title, section), body)
		}
	})
}

// The report's JSON and texts are persistent too: these are the bytes the
// summarizer has stored since its first version.
func TestReportFormat(t *testing.T) {
	rep := Report{Title: "Ada Lovelace", Summary: "She wrote the first algorithm.", Rating: 8, RatingExplanation: "central",
		Findings: []Finding{{Summary: "Notes", Explanation: "on the Engine"}, {Summary: "Bernoulli numbers"}}}
	const (
		stored      = `{"title":"Ada Lovelace","summary":"She wrote the first algorithm.","findings":[{"summary":"Notes","explanation":"on the Engine"},{"summary":"Bernoulli numbers","explanation":""}],"rating":8,"rating_explanation":"central"}`
		text        = "Ada Lovelace\n\nShe wrote the first algorithm.\n- Notes: on the Engine\n- Bernoulli numbers"
		summaryText = "Ada Lovelace\n\nShe wrote the first algorithm."
	)
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if string(js) != stored {
		t.Errorf("JSON = %s\nwant   %s", js, stored)
	}
	var back Report
	if err := json.Unmarshal([]byte(stored), &back); err != nil {
		t.Fatal(err)
	}
	if back.Title != rep.Title || back.Summary != rep.Summary || back.Rating != rep.Rating ||
		back.RatingExplanation != rep.RatingExplanation || len(back.Findings) != 2 || back.Findings[0] != rep.Findings[0] || back.Findings[1] != rep.Findings[1] {
		t.Errorf("decoded %+v, want %+v", back, rep)
	}
	if got := rep.Text(); got != text {
		t.Errorf("Text() = %q, want %q", got, text)
	}
	if got := rep.SummaryText(); got != summaryText {
		t.Errorf("SummaryText() = %q, want %q", got, summaryText)
	}
	for _, tc := range []struct{ title, text, wantTitle, wantSummary string }{
		{rep.Title, text, rep.Title, "She wrote the first algorithm.\n- Notes: on the Engine\n- Bernoulli numbers"},
		{rep.Title, summaryText, rep.Title, rep.Summary},
		{"", summaryText, rep.Title, rep.Summary},
	} {
		if title, summary := SplitReportText(tc.title, tc.text); title != tc.wantTitle || summary != tc.wantSummary {
			t.Errorf("SplitReportText(%q, %q) = %q, %q; want %q, %q", tc.title, tc.text, title, summary, tc.wantTitle, tc.wantSummary)
		}
	}
}

func TestSplitReportText(t *testing.T) {
	tests := []struct {
		name, title, text      string
		wantTitle, wantSummary string
	}{
		{"summary with blank lines", "T", "T\n\nOne.\n\nTwo.", "T", "One.\n\nTwo."},
		{"title holding a blank line", "Part\n\nOne", "Part\n\nOne\n\nSummary.", "Part\n\nOne", "Summary."},
		{"title unknown", "", "T\n\nSummary.", "T", "Summary."},
		{"another title", "other", "T\n\nSummary.", "T", "Summary."},
		{"empty summary", "T", "T\n\n", "T", ""},
		{"empty title", "", "\n\nSummary.", "", "Summary."},
		{"no blank line", "T", "Just text.", "", "Just text."},
		{"title without its blank line", "T", "T is the summary.", "", "T is the summary."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if title, summary := SplitReportText(tc.title, tc.text); title != tc.wantTitle || summary != tc.wantSummary {
				t.Errorf("SplitReportText(%q, %q) = %q, %q; want %q, %q", tc.title, tc.text, title, summary, tc.wantTitle, tc.wantSummary)
			}
		})
	}
}

func FuzzReportText(f *testing.F) {
	f.Add("Title", "Summary.\n\nMore.", "finding", "why")
	f.Add("A\n\nB", "", "", "")
	f.Fuzz(func(t *testing.T, title, summary, finding, explanation string) {
		rep := Report{Title: title, Summary: summary}
		if title, summary := SplitReportText(rep.Title, rep.SummaryText()); title != rep.Title || summary != rep.Summary {
			t.Fatalf("SplitReportText(SummaryText of %+v) = %q, %q", rep, title, summary)
		}
		rep.Findings = []Finding{{Summary: finding, Explanation: explanation}}
		text := rep.Text()
		if title, rest := SplitReportText(rep.Title, text); title != rep.Title || rest != rep.Summary+text[len(rep.SummaryText()):] {
			t.Fatalf("SplitReportText(Text of %+v) = %q, %q", rep, title, rest)
		}
	})
}
