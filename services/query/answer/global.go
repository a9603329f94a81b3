package answer

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/graphrag/graphrag/pkg/words"
	"github.com/graphrag/graphrag/services/query/evidence"
)

// relevant reports whether a partial answer says anything: a positive score and not
// the "Not relevant" the map prompt asks for.
func relevant(p evidence.PartialAnswer) bool {
	return p.Score > 0 && !strings.EqualFold(strings.TrimSpace(p.Answer), "not relevant")
}

// keepRelevant drops failed (errs[i] != nil) and irrelevant partial answers and sorts
// the rest by score, best first.
func keepRelevant(out []evidence.PartialAnswer, errs []error) []evidence.PartialAnswer {
	kept := out[:0]
	for i, p := range out {
		if (errs == nil || errs[i] == nil) && relevant(p) {
			kept = append(kept, p)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].Score > kept[j].Score })
	return kept
}

// extractiveMap scores a report offline. A question with content terms scores a report by
// its similarity to the question and the share of those terms it contains; a question
// without any ("what are the main themes?") scores it by its importance rating, so the
// answer surveys the largest, densest communities. The partial answer is the report's
// title and its most relevant sentences.
func extractiveMap(terms map[string]float64, c evidence.Community) evidence.PartialAnswer {
	if len(terms) == 0 {
		ss := sentences(c.Summary)
		if len(ss) > 2 {
			ss = ss[:2]
		}
		return evidence.PartialAnswer{CommunityID: c.ID, Answer: partialAnswer(c.Title, ss), Score: math.Round(c.Rating*100) / 10}
	}
	ss := sentences(c.Summary)
	type sc struct {
		s string
		v float64
		i int
	}
	var scored []sc
	total := 0.0
	for _, v := range terms {
		total += v
	}
	best := 0.0
	for i, s := range ss {
		v := words.Overlap(terms, s)
		best = max(best, v)
		scored = append(scored, sc{s, v, i})
	}
	sort.SliceStable(scored, func(i, j int) bool { return scored[i].v > scored[j].v })
	var parts []string
	for _, s := range scored {
		if len(parts) >= 2 {
			break
		}
		parts = append(parts, s.s)
	}
	lex := 0.0
	if total > 0 {
		lex = best / total
	}
	score := 100 * (0.6*max(c.Score, 0) + 0.4*lex) * (0.5 + c.Rating/20)
	return evidence.PartialAnswer{CommunityID: c.ID, Answer: partialAnswer(c.Title, parts), Score: float64(int(score*10)) / 10}
}

// partialAnswer is a partial answer of the extractive map: the report's title, ": ",
// and the report's chosen sentences. The reduce names the report by that title, so a
// ": " inside a title is written " – " and the first ": " ends it.
func partialAnswer(title string, ss []string) string {
	title = strings.ReplaceAll(oneLine(title, 200), ": ", " – ")
	return title + ": " + strings.Join(ss, " ")
}

// splitPartial returns the report title and the text of a partial answer written by
// partialAnswer; a partial answer without a title is all text.
func splitPartial(a string) (title, text string) {
	title, text, ok := strings.Cut(a, ": ")
	if !ok {
		return "", strings.TrimSpace(a)
	}
	return strings.TrimRight(strings.TrimSpace(title), "."), strings.TrimSpace(text)
}

// Offline, a global answer tells the most relevant reports' sentences (reduceDetailed of
// them), each under its report's title, and names the next ones up to reduceNamed.
const (
	reduceDetailed = 3
	reduceNamed    = 5
)

// extractiveReduce writes a global answer offline from the partial answers, best first.
// It is prose that names each report by its title: "The most relevant theme is <title>.
// <its sentences> [1]", then "Another is …", "A third is …", one paragraph each (one
// paragraph in all when the style asks for one), and "The reports also cover <title> [4]
// and <title> [5]." A style asking for a list gets one cited line per report.
func extractiveReduce(partials []evidence.PartialAnswer, style Style) string {
	if len(partials) == 0 {
		return "No community report in the corpus is relevant to the question."
	}
	partials = partials[:min(len(partials), reduceNamed)]
	if style.Bullets() {
		var b strings.Builder
		b.WriteString("The corpus covers these themes:")
		for i, p := range partials {
			fmt.Fprintf(&b, "\n- %s [%d]", oneLine(p.Answer, 400), i+1)
		}
		return b.String()
	}
	leads := []string{"The most relevant theme is %s.", "Another is %s.", "A third is %s."}
	var paras, named []string
	for i, p := range partials {
		title, text := splitPartial(p.Answer)
		if title == "" {
			title = "a community of the corpus"
		}
		if i >= reduceDetailed {
			named = append(named, fmt.Sprintf("%s [%d]", title, i+1))
			continue
		}
		para := fmt.Sprintf(leads[i], title)
		if text != "" {
			para += " " + oneLine(text, 400)
		}
		paras = append(paras, fmt.Sprintf("%s [%d]", para, i+1))
	}
	if len(named) > 0 {
		paras = append(paras, "The reports also cover "+joinAnd(named)+".")
	}
	sep := "\n\n"
	if style.Paragraph() {
		sep = " "
	}
	return strings.Join(paras, sep)
}

// joinAnd joins xs as a sentence lists them: "a", "a and b", "a, b and c".
func joinAnd(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}
