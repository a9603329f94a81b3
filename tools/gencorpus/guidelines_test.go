package gencorpus

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func generateGuidelines(t *testing.T, seed uint64) (*GuidelineSet, string) {
	t.Helper()
	cfg := DefaultGuidelinesConfig()
	cfg.Seed = seed
	gs, err := GenerateGuidelines(cfg)
	if err != nil {
		t.Fatalf("GenerateGuidelines(seed %d): %v", seed, err)
	}
	dir := t.TempDir()
	if err := gs.Write(dir); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return gs, dir
}

func TestGuidelinesDeterministic(t *testing.T) {
	checkDeterministic(t, func(seed uint64) string { _, dir := generateGuidelines(t, seed); return dir })
}

// TestGuidelinesSet reads the files back as `graphrag eval` does and checks what a
// single-fact question needs, apart from the generator's own Check.
func TestGuidelinesSet(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		gs, dir := generateGuidelines(t, seed)
		docs := readJSONL[evalDoc](t, filepath.Join(dir, "corpus.jsonl"))
		qs := readJSONL[evalQuestion](t, filepath.Join(dir, "questions.jsonl"))
		if len(docs) < MinDocs || len(docs) > 700 {
			t.Errorf("seed %d: %d documents, want %d to 700", seed, len(docs), MinDocs)
		}
		if len(qs) != 100 {
			t.Errorf("seed %d: %d questions, want 100", seed, len(qs))
		}
		byID := map[string]evalDoc{}
		for _, d := range docs {
			byID[d.ID] = d
		}
		attrs := map[int]bool{}
		for i, q := range qs {
			if want := fmt.Sprintf("gq%03d", i); q.ID != want {
				t.Errorf("seed %d: question %d has id %s, want %s", seed, i, q.ID, want)
			}
			if q.Question == "" || q.Answer == "" || len(q.AnswerAliases) == 0 && !slices.Contains(gs.g.products, q.Answer) {
				t.Errorf("seed %d: %s has an empty field: %+v", seed, q.ID, q)
			}
			if len(q.Gold) != 1 {
				t.Fatalf("seed %d: %s has %d gold documents", seed, q.ID, len(q.Gold))
			}
			gold, ok := byID[q.Gold[0]]
			if !ok {
				t.Fatalf("seed %d: %s: gold %s not in the corpus", seed, q.ID, q.Gold[0])
			}
			if !containsWord(gold.Text, q.Answer) {
				t.Errorf("seed %d: %s: gold %s does not contain the answer %q", seed, q.ID, gold.ID, q.Answer)
			}
			if strings.Contains(strings.ToLower(q.Question), strings.ToLower(q.Answer)) {
				t.Errorf("seed %d: %s names its answer: %s", seed, q.ID, q.Question)
			}
			attrs[gs.asked[i].attr] = true
		}
		if len(attrs) != len(glAttrs) {
			t.Errorf("seed %d: questions ask %d of the %d attributes", seed, len(attrs), len(glAttrs))
		}
	}
}

// TestGuidelinesCheckCatches breaks a generated set in each way Check guards against
// and expects Check to say so.
func TestGuidelinesCheckCatches(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt func(gs *GuidelineSet, gold int)
		want    string
	}{
		{"answer removed from the gold document", func(gs *GuidelineSet, gold int) {
			q := gs.Questions[0]
			gs.Docs[gold].Text = strings.ReplaceAll(gs.Docs[gold].Text, q.Answer, "as directed")
		}, "has no line"},
		{"topic name removed from the gold document", func(gs *GuidelineSet, gold int) {
			f := gs.g.topics[gs.asked[0].topic].forms[0]
			gs.Docs[gold].Text = strings.ReplaceAll(gs.Docs[gold].Text, f, "the drug")
		}, "does not name"},
		{"a second current copy of the gold document", func(gs *GuidelineSet, gold int) {
			d := gs.Docs[gold]
			d.ID = "g9999"
			gs.Docs = append(gs.Docs, d)
			gs.states = append(gs.states, slices.Clone(gs.states[gold]))
		}, "also states"},
		{"another document states the answer in one line with the topic", func(gs *GuidelineSet, gold int) {
			s := gs.asked[0]
			other := slices.IndexFunc(gs.Docs, func(d Doc) bool {
				return d.ID != gs.Docs[gold].ID && !strings.Contains(d.Text, "superseded by version")
			})
			gs.Docs[other].Text += strings.Join(gs.g.topics[s.topic].forms, ", ") + ": " + s.value + ".\n"
		}, "a line naming the topic and the answer"},
		{"the question names its answer", func(gs *GuidelineSet, _ int) {
			gs.Questions[0].Question += " Is it " + gs.Questions[0].Answer + "?"
		}, "names its answer"},
		{"the question copies the stating sentence", func(gs *GuidelineSet, _ int) {
			gs.Questions[0].Question += " " + gs.asked[0].line
		}, "consecutive words"},
		{"the question names its topic too vaguely", func(gs *GuidelineSet, _ int) {
			gs.named[0] = gs.named[0][:1] // a product or a procedure alone: several topics
		}, "fit another topic"},
		{"two gold documents", func(gs *GuidelineSet, _ int) {
			gs.Questions[0].Gold = append(gs.Questions[0].Gold, gs.Docs[0].ID)
		}, "2 gold documents"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gs, err := GenerateGuidelines(DefaultGuidelinesConfig())
			if err != nil {
				t.Fatal(err)
			}
			gold := slices.IndexFunc(gs.Docs, func(d Doc) bool { return d.ID == gs.Questions[0].Gold[0] })
			tc.corrupt(gs, gold)
			err = gs.Check()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check() = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestSharedRun(t *testing.T) {
	forms := []string{"Zelvarin", "Varnell syndrome"}
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"Start at 40 mg once daily.", "How much Zelvarin is given first?", 0},
		{"Stop Zelvarin if serum level rises above 30.", "When must Zelvarin be stopped if serum level rises?", 4},
		{"For Varnell syndrome in adults", "adults with Varnell syndrome", 1},
	} {
		if got := sharedRun(tc.a, tc.b, forms); got != tc.want {
			t.Errorf("sharedRun(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
