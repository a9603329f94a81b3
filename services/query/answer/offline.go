package answer

import (
	"context"
	"regexp"
	"strings"

	"github.com/graphrag/graphrag/services/query/evidence"
	"github.com/graphrag/graphrag/services/query/question"
)

// extractive answers without a model: a local answer is made of the passages' own
// sentences (extractiveAnswer), a partial answer of a report's (extractiveMap), a
// global answer is prose that names the best reports by their titles (extractiveReduce),
// and a question is global when it has a global cue.
type extractive struct{}

var _ Answerer = extractive{}

func (extractive) Global(_ context.Context, q string, _ bool) bool { return question.HasGlobalCue(q) }

func (extractive) Local(_ context.Context, q string, found evidence.Retrieved, style Style, onDelta func(string) error) (Answer, error) {
	a := Answer{Prompt: localPrompt(q, found, style)}
	text := extractiveAnswer(q, found)
	if style.Bullets() {
		text = asBullets(text)
	}
	var err error
	a.Text, a.Cited, err = cite(text, len(found.Chunks), onDelta)
	return a, err
}

// PaysPerReport is false: offline the map phase is free, so every candidate report is
// mapped and the scores choose.
func (extractive) PaysPerReport() bool { return false }

func (extractive) Map(_ context.Context, q string, reports []evidence.Community, _ Style) ([]evidence.PartialAnswer, []evidence.Community, error) {
	terms := question.Terms(q)
	out := make([]evidence.PartialAnswer, 0, len(reports))
	for _, c := range reports {
		out = append(out, extractiveMap(terms, c))
	}
	return keepRelevant(out, nil), reports, nil
}

func (extractive) Reduce(_ context.Context, q string, partials []evidence.PartialAnswer, style Style, onDelta func(string) error) (Answer, error) {
	a := Answer{Prompt: reducePrompt(q, partials, style)}
	text := extractiveReduce(partials, style)
	var err error
	a.Text, a.Cited, err = cite(text, len(partials), onDelta)
	return a, err
}

// FollowUps are the top report's key entities: a local search for each finds the
// passages about what the report is about.
func (extractive) FollowUps(_ context.Context, q string, _ []evidence.Community, keyEntities []string, n int) []string {
	return EntityFollowUps(q, keyEntities, n)
}

// EntityFollowUps are the follow-ups of a drift search made without a model: at most n
// of the key entities, each a search of its own.
func EntityFollowUps(question string, keyEntities []string, n int) []string {
	return followUps(keyEntities, n, question)
}

// citedPart is one cited statement of an extractive answer: its text and its marker(s).
var citedPart = regexp.MustCompile(`(\[\d+\](?:\[\d+\])*)\s+`)

// asBullets writes an extractive answer (cited statements, each followed by its
// marker) as a list, one statement a line.
func asBullets(text string) string {
	text = strings.TrimSpace(text)
	if text == "" {
		return text
	}
	return "- " + citedPart.ReplaceAllString(text, "$1\n- ")
}
