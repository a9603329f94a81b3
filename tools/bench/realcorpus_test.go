package bench

import (
	"strconv"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/normalize"
	"github.com/graphrag/graphrag/pkg/offlinextract"
)

// extractKeys runs the offline extractor on docs as the extractor service does and
// returns the entity keys found, the mentions per document and the text bytes.
func extractKeys(docs []realDoc) (keys map[string]bool, mentions int, bytes int) {
	keys = map[string]bool{}
	for _, d := range docs {
		subj := offlinextract.Subject(d.Title, d.Text)
		ents, _ := offlinextract.Extract(subj.Name, d.Text, offlinextract.WithAliases(subj.Aliases...))
		for _, e := range ents {
			keys[normalize.Name(e.Name)] = true
		}
		mentions += len(ents)
		bytes += len(d.Text)
	}
	return keys, mentions, bytes
}

// TestRealCorpusCopies checks the generator's promises on copies of the embedded
// sample: copies share no entity, and keep the entity density and the text length.
func TestRealCorpusCopies(t *testing.T) {
	rc, err := loadRealCorpus("")
	if err != nil {
		t.Fatal(err)
	}
	n := len(rc.docs)
	if n != 994 || len(rc.questions) != 100 {
		t.Fatalf("%d passages, %d questions", n, len(rc.questions))
	}
	sample := 150 // passages per copy: enough for the statistics, fast under -race
	if testing.Short() {
		sample = 60
	}
	copyDocs := func(k int) []realDoc {
		out := make([]realDoc, sample)
		for i := range out {
			out[i] = rc.doc(k*n + i*(n/sample))
		}
		return out
	}
	baseKeys, baseMentions, baseBytes := extractKeys(copyDocs(0))
	seen := map[string]int{}
	for k := range baseKeys {
		seen[k] = 0
	}
	for _, k := range []int{1, 2, 77, maxCopies - 1} {
		docs := copyDocs(k)
		if docs[0].ID != rc.docs[0].ID+"-k"+strconv.Itoa(k) {
			t.Fatalf("copy %d: first id %s", k, docs[0].ID)
		}
		keys, mentions, bytes := extractKeys(docs)
		var shared []string
		for key := range keys {
			if c, ok := seen[key]; ok {
				shared = append(shared, key+" (copy "+strconv.Itoa(c)+")")
			}
			seen[key] = k
		}
		// A few keys are made of words no name owns (a title that is one common word, a
		// noun phrase such as "guest appearance"): allow 1.5% of them. The line-aware
		// extraction finds fewer junk names, so the same 16 common keys weigh 1.04% of
		// 1,544 where they weighed under 1% before.
		if len(shared) > len(keys)*3/200 {
			t.Errorf("copy %d shares %d of %d entity keys with earlier copies: %s", k, len(shared), len(keys), strings.Join(shared[:min(10, len(shared))], ", "))
		}
		// Rewritten words read as names a little more often than the originals (a
		// sentence-initial pseudo-word is not a common word): 6% more mentions.
		if r := float64(mentions) / float64(baseMentions); r < 0.95 || r > 1.08 {
			t.Errorf("copy %d: %d entity mentions against %d in the base (ratio %.3f)", k, mentions, baseMentions, r)
		}
		if r := float64(len(keys)) / float64(len(baseKeys)); r < 0.95 || r > 1.05 {
			t.Errorf("copy %d: %d distinct entities against %d in the base (ratio %.3f)", k, len(keys), len(baseKeys), r)
		}
		if r := float64(bytes) / float64(baseBytes); r < 0.95 || r > 1.1 {
			t.Errorf("copy %d: %d text bytes against %d in the base (ratio %.3f)", k, bytes, baseBytes, r)
		}
	}
}

func TestRealCorpusQuestions(t *testing.T) {
	rc, err := loadRealCorpus("")
	if err != nil {
		t.Fatal(err)
	}
	q0, q3 := rc.question(0, 0), rc.question(3, 0)
	if q0.Question == q3.Question || q3.Gold[0] != q0.Gold[0]+"-k3" {
		t.Fatalf("copy 3 of %+v is %+v", q0, q3)
	}
	// Every gold passage of a sampled question is in the corpus.
	docs := len(rc.docs)*2 + 500
	ids := map[string]bool{}
	for i := range docs {
		ids[rc.doc(i).ID] = true
	}
	for _, q := range rc.sampleQuestions(docs, 200) {
		for _, g := range q.Gold {
			if !ids[g] {
				t.Fatalf("question %s: gold %s is not among the %d documents", q.ID, g, docs)
			}
		}
	}
}

func TestPseudoWordsAreDistinct(t *testing.T) {
	rc := &realCorpus{vocab: map[string]bool{}, acronyms: map[string]int{"NASA": 0, "BBC": 1}}
	seen := map[string]bool{}
	for _, k := range []int{1, 2, 70, 71, maxCopies - 1} {
		for _, idx := range []int{0, 1, 69, 70, 71, 4969, 4970, 4971, 100_000} {
			w := rc.pseudoWord(k, idx)
			if seen[w] {
				t.Fatalf("copy %d word %d: %q given twice", k, idx, w)
			}
			seen[w] = true
		}
		for idx := range 2 {
			a := rc.pseudoAcronym(k, idx)
			if seen[a] || !isAcronym(a) {
				t.Fatalf("copy %d acronym %d: %q", k, idx, a)
			}
			seen[a] = true
		}
	}
}
