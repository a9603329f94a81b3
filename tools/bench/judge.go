package bench

import (
	"slices"
	"sort"
	"strings"
	"unicode"
)

// The map model of the global question benchmarks is a judge, not a model: it reads a
// community report and the question and answers with the report's sentences that hold
// the question's content words. Being deterministic, it gives every report the same
// points whichever configuration mapped it, so the points of a configuration can be
// compared with the reference answer points: those of every report of the level.

// judgeStopWords are question words that say nothing about what is asked: function
// words and the words that ask for a survey ("main themes", "overview").
var judgeStopWords = map[string]bool{}

func init() {
	for w := range strings.FieldsSeq(`what which where when whom whose about across over from into with
		that this these those there their they them have does were been being give gives tell
		main major common recurring overall general key theme themes topic topics idea ideas
		overview corpus collection document documents summary summarize describe list`) {
		judgeStopWords[w] = true
	}
}

// judgeMaxPoints is how many points a partial answer holds (the map prompt asks for at most 5).
const judgeMaxPoints = 5

// judgeTerms are the content words of a question, folded (lower case, plural folded).
func judgeTerms(q string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len(w) < 4 || judgeStopWords[w] {
			continue
		}
		if f := foldPlural(w); !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// foldPlural maps "cities" to "city", "films" to "film", leaves "glass" as it is.
func foldPlural(w string) string {
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && len(w) > 4:
		return w[:len(w)-1]
	}
	return w
}

// judgeWords is the set of folded words of a text.
func judgeWords(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) }) {
		out[foldPlural(w)] = true
	}
	return out
}

// judgeReport returns the points of a report for a question and how helpful it is
// (0–100). With content words, the score is the share of them the report holds and the
// points are its sentences holding the most of them; without any (a question on "the
// main themes"), every report is relevant and its points are its first sentences.
// A report holding none of the words scores 0 and has no points.
func judgeReport(q, title, summary string) (points []string, score float64) {
	terms := judgeTerms(q)
	sents := judgeSentences(summary)
	if len(terms) == 0 {
		return sents[:min(2, len(sents))], 50
	}
	all := judgeWords(title + " " + summary)
	found := 0
	for _, t := range terms {
		if all[t] {
			found++
		}
	}
	if found == 0 {
		return nil, 0
	}
	type scored struct {
		s    string
		hits int
		i    int
	}
	var ranked []scored
	for i, s := range sents {
		ws, hits := judgeWords(s), 0
		for _, t := range terms {
			if ws[t] {
				hits++
			}
		}
		if hits > 0 {
			ranked = append(ranked, scored{s, hits, i})
		}
	}
	sort.SliceStable(ranked, func(a, b int) bool { return ranked[a].hits > ranked[b].hits })
	for _, r := range ranked[:min(judgeMaxPoints, len(ranked))] {
		points = append(points, r.s)
	}
	if len(points) == 0 {
		points = []string{title} // only the title names the subject
	}
	return points, float64(100 * found / len(terms))
}

// judgeSentences splits a summary into trimmed sentences (at ". ", "! ", "? " and line
// ends).
func judgeSentences(s string) []string {
	var out []string
	emit := func(t string) {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	start := 0
	for i := range len(s) {
		stop := s[i] == '.' || s[i] == '!' || s[i] == '?'
		if s[i] == '\n' || stop && (i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\n') {
			emit(s[start : i+1])
			start = i + 1
		}
	}
	emit(s[start:])
	return out
}

// judgeAnswer renders points as the map schema's answer: one "- " line per point.
func judgeAnswer(points []string) string {
	if len(points) == 0 {
		return "Not relevant"
	}
	return "- " + strings.Join(points, "\n- ")
}

// answerPoints parses judgeAnswer's lines back into points.
func answerPoints(answer string) []string {
	var out []string
	for line := range strings.SplitSeq(answer, "\n") {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "- "); ok {
			out = append(out, p)
		}
	}
	return out
}
