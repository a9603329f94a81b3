package gencorpus

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Check verifies what the questions rely on: unique document ids, titles and texts
// present, and for every question that its one gold document states the answer for the
// question's topic (the text names the topic with the forms the question uses and holds
// the sentence with the answer), that those forms fit no other topic, that no other document states the same fact as current
// guidance (neither by its record of statements nor by a line naming the topic and the
// answer outside a superseded document), that the question names neither its answer
// nor an alias of it, and that it shares fewer than copyRun consecutive words with the
// sentence it asks about.
func (gs *GuidelineSet) Check() error {
	var errs []error
	if len(gs.Docs) < MinDocs {
		errs = append(errs, fmt.Errorf("%d documents, want at least %d", len(gs.Docs), MinDocs))
	}
	byID := map[string]int{}
	for i, d := range gs.Docs {
		if _, dup := byID[d.ID]; dup {
			errs = append(errs, fmt.Errorf("document id %s twice", d.ID))
		}
		byID[d.ID] = i
		if strings.TrimSpace(d.Title) == "" || strings.TrimSpace(d.Text) == "" {
			errs = append(errs, fmt.Errorf("document %s: empty title or text", d.ID))
		}
	}
	if len(gs.Questions) != gs.Config.Questions || len(gs.asked) != len(gs.Questions) || len(gs.named) != len(gs.Questions) {
		errs = append(errs, fmt.Errorf("%d questions (%d asked facts), want %d", len(gs.Questions), len(gs.asked), gs.Config.Questions))
	}
	qids := map[string]bool{}
	for i, q := range gs.Questions {
		if qids[q.ID] {
			errs = append(errs, fmt.Errorf("question id %s twice", q.ID))
		}
		qids[q.ID] = true
		if i >= len(gs.asked) {
			break
		}
		if err := gs.checkQuestion(q, gs.asked[i], gs.named[i], byID); err != nil {
			errs = append(errs, fmt.Errorf("question %s: %w", q.ID, err))
		}
	}
	return errors.Join(errs...)
}

func (gs *GuidelineSet) checkQuestion(q Question, s statement, named []string, byID map[string]int) error {
	var errs []error
	t := gs.g.topics[s.topic]
	if q.Answer != s.value {
		errs = append(errs, fmt.Errorf("answer %q, but the asked fact's value is %q", q.Answer, s.value))
	}
	if len(q.Gold) != 1 {
		return errors.Join(append(errs, fmt.Errorf("%d gold documents, want 1", len(q.Gold)))...)
	}
	gold, ok := byID[q.Gold[0]]
	if !ok {
		return errors.Join(append(errs, fmt.Errorf("gold %s is not in the corpus", q.Gold[0]))...)
	}
	text := gs.Docs[gold].Text
	if len(named) == 0 {
		errs = append(errs, errors.New("names no topic"))
	}
	for u, o := range gs.g.topics {
		if u != s.topic && !slices.ContainsFunc(named, func(f string) bool { return !slices.Contains(o.forms, f) }) {
			errs = append(errs, fmt.Errorf("its names %q fit another topic too (%q)", named, o.forms))
		}
	}
	for _, f := range named {
		if !slices.Contains(t.forms, f) {
			errs = append(errs, fmt.Errorf("%q is no name of its topic", f))
		}
		if !containsWord(q.Question, f) {
			errs = append(errs, fmt.Errorf("does not name %q", f))
		}
		if !containsWord(text, f) {
			errs = append(errs, fmt.Errorf("gold %s does not name %q", q.Gold[0], f))
		}
	}
	if !slices.Contains(gs.states[gold], s) {
		errs = append(errs, fmt.Errorf("gold %s does not state the %s as current", q.Gold[0], glAttrs[s.attr].name))
	}
	if !slices.ContainsFunc(strings.Split(text, "\n"), func(l string) bool {
		return strings.HasSuffix(l, s.line) && containsWord(l, q.Answer)
	}) {
		errs = append(errs, fmt.Errorf("gold %s has no line %q with the answer %q", q.Gold[0], s.line, q.Answer))
	}
	for di, d := range gs.Docs {
		if di == gold {
			continue
		}
		for _, o := range gs.states[di] {
			if o.topic == s.topic && o.attr == s.attr && o.current {
				errs = append(errs, fmt.Errorf("%s also states the %s as current (%q)", d.ID, glAttrs[s.attr].name, o.value))
			}
		}
		if strings.Contains(d.Text, "superseded by version") {
			continue
		}
		for l := range strings.SplitSeq(d.Text, "\n") {
			if containsWord(l, q.Answer) && !slices.ContainsFunc(named, func(f string) bool { return !containsWord(l, f) }) {
				errs = append(errs, fmt.Errorf("%s has a line naming the topic and the answer: %q", d.ID, l))
			}
		}
	}
	lq := strings.ToLower(q.Question)
	for _, a := range append([]string{q.Answer}, q.AnswerAliases...) {
		if containsWord(lq, strings.ToLower(a)) {
			errs = append(errs, fmt.Errorf("names its answer %q", a))
		}
	}
	if n := sharedRun(q.Question, s.line, gs.g.entityForms(t)); n >= copyRun {
		errs = append(errs, fmt.Errorf("shares %d consecutive words with %q", n, s.line))
	}
	return errors.Join(errs...)
}

// TypeCounts returns the number of documents by type, sorted by type.
func (gs *GuidelineSet) TypeCounts() ([]string, map[string]int) { return typeCounts(gs.Docs) }

// Write writes corpus.jsonl, questions.jsonl and SOURCE.md into dir.
func (gs *GuidelineSet) Write(dir string) error {
	return writeSet(dir, gs.Docs, gs.Questions, gs.Source())
}
