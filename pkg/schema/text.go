package schema

import "strings"

// headingSep joins the parts of a chunk's heading.
const headingSep = " › "

// blankLine ends the heading of a chunk's text and the title of a report's.
const blankLine = "\n\n"

// ChunkHeading is the heading of a chunk's text: the document's title, then its
// section path (ChunkSection) joined by " › "; the title alone when the section is
// empty or repeats it, the section alone for an untitled document, "" when both are
// empty.
func ChunkHeading(title, section string) string {
	switch {
	case title == "":
		return section
	case section == "" || section == title:
		return title
	}
	return title + headingSep + section
}

// ChunkText is what is embedded, indexed and stored (vectorstore.Record.Text) for a
// chunk: its ChunkHeading, a blank line, then the body; the body alone when the
// heading is empty. The heading puts the chunk's subject into both the dense and
// the lexical index (contextual chunk headers).
func ChunkText(title, section, body string) string {
	h := ChunkHeading(title, section)
	if h == "" {
		return body
	}
	return h + blankLine + body
}

// SplitChunkText reads a chunk's text back from its record: the heading and the
// body, given the record's title and section attributes (ChunkTitle,
// ChunkSection). The heading is the one ChunkText writes for them, so a heading or
// a title holding " › " or a blank line reads back whole, and a body's blank lines
// stay in the body. A text that does not begin with that heading (a chunk without
// one, or a record written other than by ChunkText) is all body, with heading "".
func SplitChunkText(title, section, text string) (heading, body string) {
	h := ChunkHeading(title, section)
	if h == "" {
		return "", text
	}
	if body, ok := strings.CutPrefix(text, h+blankLine); ok {
		return h, body
	}
	return "", text
}

// HeadingOf reads the heading of a chunk's text without its record's attributes, for a
// reader that sees only the text (what was embedded): the heading is what precedes the
// first blank line, the title what precedes the heading's first " › " (ChunkHeading). ok
// is false for a text without a blank line, which has no heading. A title or section
// holding " › " or a blank line reads back cut short; SplitChunkText, given the
// attributes, reads it whole.
func HeadingOf(text string) (heading, title string, ok bool) {
	heading, _, ok = strings.Cut(text, blankLine)
	if !ok {
		return "", "", false
	}
	title, _, _ = strings.Cut(heading, headingSep)
	return heading, title, true
}

// Finding is one insight of a community report.
type Finding struct {
	Summary     string `json:"summary"`
	Explanation string `json:"explanation"`
}

// Report is a community report, as the summarizer writes it and every reader
// decodes it: its JSON is the record attribute ReportJSON, its Text the record's
// text.
type Report struct {
	Title             string    `json:"title"`
	Summary           string    `json:"summary"`
	Findings          []Finding `json:"findings"`
	Rating            float64   `json:"rating"` // importance 0..10
	RatingExplanation string    `json:"rating_explanation"`
}

// Text is what is stored and lexically indexed for a report (and embedded, unless
// only its SummaryText is): the title, a blank line, the summary, then a line
// "- summary: explanation" per finding (": explanation" only when there is one).
func (r Report) Text() string {
	var b strings.Builder
	b.WriteString(r.SummaryText())
	for _, f := range r.Findings {
		b.WriteString("\n- ")
		b.WriteString(f.Summary)
		if f.Explanation != "" {
			b.WriteString(": ")
			b.WriteString(f.Explanation)
		}
	}
	return b.String()
}

// SummaryText is the title, a blank line and the summary: the beginning of Text,
// and what is embedded for a report when the findings are left out.
func (r Report) SummaryText() string {
	return r.Title + blankLine + r.Summary
}

// SplitReportText reads a report's text (Text or SummaryText) back: the title and
// what follows the blank line after it, the summary (with the findings' lines when
// the text is a Text). title is the record's ReportTitle attribute: when the text
// begins with it and a blank line, the title reads back whole even if it holds a
// blank line itself. Otherwise (title "" or another one) the title is what precedes
// the text's first blank line, and a text without one is all summary.
func SplitReportText(title, text string) (gotTitle, summary string) {
	if title != "" {
		if rest, ok := strings.CutPrefix(text, title+blankLine); ok {
			return title, rest
		}
	}
	if before, after, ok := strings.Cut(text, blankLine); ok {
		return before, after
	}
	return "", text
}
