package answer

import (
	"context"

	"github.com/graphrag/graphrag/pkg/words"
	"github.com/graphrag/graphrag/services/query/evidence"
)

// extractive answers without a model: a local answer is made of the passages' own
// sentences (extractiveAnswer), a partial answer of a report's (extractiveMap), a
// global answer lists the best partial answers, and a question is global when it has a
// global cue.
type extractive struct{}

var _ Answerer = extractive{}

func (extractive) Global(_ context.Context, q string, _ bool) bool { return isGlobal(q) }

func (extractive) Local(_ context.Context, q string, found evidence.Retrieved, onDelta func(string) error) (Answer, error) {
	a := Answer{Prompt: localPrompt(q, found)}
	var err error
	a.Text, a.Cited, err = cite(extractiveAnswer(q, found), len(found.Chunks), onDelta)
	return a, err
}

// PaysPerReport is false: offline the map phase is free, so every candidate report is
// mapped and the scores choose.
func (extractive) PaysPerReport() bool { return false }

func (extractive) Map(_ context.Context, q string, reports []evidence.Community) ([]evidence.PartialAnswer, []evidence.Community, error) {
	terms := words.Terms(globalCue.ReplaceAllString(q, " "))
	for _, w := range genericWords {
		delete(terms, w)
	}
	out := make([]evidence.PartialAnswer, 0, len(reports))
	for _, c := range reports {
		out = append(out, extractiveMap(terms, c))
	}
	return keepRelevant(out, nil), reports, nil
}

func (extractive) Reduce(_ context.Context, q string, partials []evidence.PartialAnswer, onDelta func(string) error) (Answer, error) {
	a := Answer{Prompt: reducePrompt(q, partials)}
	var err error
	a.Text, a.Cited, err = cite(extractiveReduce(partials), len(partials), onDelta)
	return a, err
}
