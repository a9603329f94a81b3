package bench

import (
	"path/filepath"
	"testing"
)

// TestWriteRealCorpus checks that a written dataset is what `graphrag eval` reads: n
// distinct passages spanning the copies, and questions whose gold passages are all in it.
func TestWriteRealCorpus(t *testing.T) {
	rc, err := loadRealCorpus("")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	n := 2*len(rc.docs) + 100 // two copies and part of a third
	if err := writeRealCorpus(rc, dir, n, 300); err != nil {
		t.Fatal(err)
	}
	docs, err := readJSONLFile[realDoc](filepath.Join(dir, "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	qs, err := readJSONLFile[realQuestion](filepath.Join(dir, "questions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != n || len(qs) != 300 {
		t.Fatalf("%d passages and %d questions, want %d and 300", len(docs), len(qs), n)
	}
	ids := map[string]bool{}
	for _, d := range docs {
		if ids[d.ID] || d.Text == "" {
			t.Fatalf("passage %q repeated or empty", d.ID)
		}
		ids[d.ID] = true
	}
	copies := map[string]bool{}
	for _, q := range qs {
		for _, g := range q.Gold {
			if !ids[g] {
				t.Fatalf("question %s: gold passage %s not in the corpus", q.ID, g)
			}
		}
		copies[q.ID[len(q.ID)-3:]] = true
	}
	if !copies["-k1"] || !copies["-k2"] {
		t.Errorf("questions are not spread over the copies: suffixes %v", copies)
	}
}
