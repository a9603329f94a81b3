package gencorpus

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// MinDocs is the smallest corpus Check accepts.
const MinDocs = 300

// Check verifies what the questions rely on: unique document ids and titles present, the
// hop split, and for every question that its chain is still valid (each gold document
// names both entities of its hop and no other document does, adjacent gold documents name
// the bridge alike), that the gold documents are the chain's, and that the question names
// neither its answer nor an intermediate entity.
func (ds *Dataset) Check() error {
	var errs []error
	if len(ds.Docs) < MinDocs {
		errs = append(errs, fmt.Errorf("%d documents, want at least %d", len(ds.Docs), MinDocs))
	}
	ids := map[string]bool{}
	for _, d := range ds.Docs {
		if ids[d.ID] {
			errs = append(errs, fmt.Errorf("document id %s twice", d.ID))
		}
		ids[d.ID] = true
		if strings.TrimSpace(d.Title) == "" || strings.TrimSpace(d.Text) == "" {
			errs = append(errs, fmt.Errorf("document %s: empty title or text", d.ID))
		}
	}
	if len(ds.Questions) != ds.Config.Questions {
		errs = append(errs, fmt.Errorf("%d questions, want %d", len(ds.Questions), ds.Config.Questions))
	}
	qids := map[string]bool{}
	for _, q := range ds.Questions {
		if qids[q.ID] {
			errs = append(errs, fmt.Errorf("question id %s twice", q.ID))
		}
		qids[q.ID] = true
		if why := ds.valid(q.chain); why != "" {
			errs = append(errs, fmt.Errorf("question %s: %s", q.ID, why))
		}
		if len(q.Gold) != len(q.chain.facts) || len(q.Gold) < 2 || len(q.Gold) > 4 {
			errs = append(errs, fmt.Errorf("question %s: %d gold documents for %d hops", q.ID, len(q.Gold), len(q.chain.facts)))
		}
		for i, g := range q.Gold {
			if !ids[g] || g != ds.Docs[ds.w.facts[q.chain.facts[i]].doc].ID {
				errs = append(errs, fmt.Errorf("question %s: gold %s is not the document of hop %d", q.ID, g, i+1))
			}
		}
		if len(slices.Compact(slices.Sorted(slices.Values(q.Gold)))) != len(q.Gold) {
			errs = append(errs, fmt.Errorf("question %s: a gold document twice", q.ID))
		}
		lq := strings.ToLower(q.Question)
		for _, a := range append([]string{q.Answer}, q.AnswerAliases...) {
			if containsWord(lq, strings.ToLower(a)) {
				errs = append(errs, fmt.Errorf("question %s names its answer %q", q.ID, a))
			}
		}
		if ds.namesInner(q.chain, q.Question) {
			errs = append(errs, fmt.Errorf("question %s names an intermediate entity", q.ID))
		}
	}
	return errors.Join(errs...)
}

// HopCounts returns the number of questions by number of hops.
func (ds *Dataset) HopCounts() map[int]int {
	out := map[int]int{}
	for _, q := range ds.Questions {
		out[len(q.Gold)]++
	}
	return out
}

// TypeCounts returns the number of documents by type, sorted by type.
func (ds *Dataset) TypeCounts() ([]string, map[string]int) { return typeCounts(ds.Docs) }

func typeCounts(docs []Doc) ([]string, map[string]int) {
	out := map[string]int{}
	for _, d := range docs {
		out[d.typ]++
	}
	keys := make([]string, 0, len(out))
	for k := range out {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys, out
}
