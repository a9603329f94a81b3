package question

import (
	"regexp"
	"slices"
	"strings"

	"github.com/graphrag/graphrag/pkg/words"
)

// globalCue matches questions about the corpus as a whole.
var globalCue = regexp.MustCompile(`(?i)\b(main|major|key|overall|common|recurring|central|dominant)\s+(themes?|topics?|ideas?|trends?|patterns?|issues?|points?)\b|` +
	`\b(across|throughout)\s+(the|all|these|this)\s+(corpus|documents?|collection|texts?|sources?|books?|articles?|dataset)\b|` +
	`\b(summari[sz]e|overview of|big picture|high[- ]level)\b|\bwhat (is|are) (this|the) (corpus|collection|dataset|documents?) about\b`)

// HasGlobalCue reports whether a question asks about the corpus as a whole ("the main
// themes", "across the documents", "summarize"): the heuristic classifier, which needs
// no model.
func HasGlobalCue(q string) bool { return globalCue.MatchString(q) }

// Topic is what a global question is about: the question without its global cue
// ("the main themes", "across the corpus") and generic words; the question itself when
// nothing else is left ("what are the main themes?" is about everything). Reports are
// selected by it, not by how the question asks for a survey: "what are the main themes"
// matches every report alike.
func Topic(q string) string {
	ws := strings.Fields(globalCue.ReplaceAllString(q, " "))
	kept := ws[:0]
	for _, w := range ws {
		if !slices.Contains(genericWords, strings.ToLower(strings.Trim(w, ".,;:?!'\"()"))) {
			kept = append(kept, w)
		}
	}
	if len(words.Terms(strings.Join(kept, " "))) == 0 {
		return q
	}
	return strings.Join(kept, " ")
}

// TopicTerms are the weighted words of a global question's Topic, without generic
// words: what a report's title and summary are matched with (words.Overlap).
func TopicTerms(q string) map[string]float64 {
	return withoutGeneric(words.Terms(Topic(q)))
}

// Terms are the weighted words of a question without its global cue and generic words:
// none for a question about everything ("what are the main themes?"), where TopicTerms
// falls back to the question's own words.
func Terms(q string) map[string]float64 {
	return withoutGeneric(words.Terms(globalCue.ReplaceAllString(q, " ")))
}

func withoutGeneric(terms map[string]float64) map[string]float64 {
	for _, w := range genericWords {
		delete(terms, w)
	}
	return terms
}

// genericWords say that a question is about the corpus, not what it is about.
var genericWords = strings.Fields("theme themes topic topics corpus documents document collection overall main major key across all")
