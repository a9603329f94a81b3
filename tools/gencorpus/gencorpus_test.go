package gencorpus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func generate(t *testing.T, seed uint64) (*Dataset, string) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Seed = seed
	ds, err := Generate(cfg)
	if err != nil {
		t.Fatalf("Generate(seed %d): %v", seed, err)
	}
	dir := t.TempDir()
	if err := ds.Write(dir); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return ds, dir
}

func TestDeterministic(t *testing.T) {
	checkDeterministic(t, func(seed uint64) string { _, dir := generate(t, seed); return dir })
}

// checkDeterministic fails unless write (which returns the directory it wrote) writes
// byte-identical files for one seed and other data files for another.
func checkDeterministic(t *testing.T, write func(seed uint64) string) {
	t.Helper()
	a, b, c := write(7), write(7), write(8)
	for _, f := range []string{"corpus.jsonl", "questions.jsonl", "SOURCE.md"} {
		x, errx := os.ReadFile(filepath.Join(a, f))
		y, erry := os.ReadFile(filepath.Join(b, f))
		z, errz := os.ReadFile(filepath.Join(c, f))
		if errx != nil || erry != nil || errz != nil {
			t.Fatalf("reading %s: %v %v %v", f, errx, erry, errz)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs with the same seed", f)
		}
		if f != "SOURCE.md" && bytes.Equal(x, z) {
			t.Errorf("%s is the same for seeds 7 and 8", f)
		}
	}
}

// The files as `graphrag eval` reads them: one JSON object per line.
type evalDoc struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

type evalQuestion struct {
	ID            string   `json:"id"`
	Question      string   `json:"question"`
	Answer        string   `json:"answer"`
	AnswerAliases []string `json:"answer_aliases"`
	Gold          []string `json:"gold"`
}

func readJSONL[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		var v T
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDataset(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		ds, dir := generate(t, seed)
		docs := readJSONL[evalDoc](t, filepath.Join(dir, "corpus.jsonl"))
		qs := readJSONL[evalQuestion](t, filepath.Join(dir, "questions.jsonl"))
		if len(docs) < MinDocs || len(docs) > 700 {
			t.Errorf("seed %d: %d documents, want %d to 700", seed, len(docs), MinDocs)
		}
		if len(qs) != 100 {
			t.Errorf("seed %d: %d questions, want 100", seed, len(qs))
		}
		hops := map[int]int{}
		byID := map[string]evalDoc{}
		for _, d := range docs {
			byID[d.ID] = d
		}
		for i, q := range qs {
			hops[len(q.Gold)]++
			if q.Question == "" || q.Answer == "" || q.ID == "" {
				t.Errorf("seed %d: question %d has an empty field", seed, i)
			}
			if strings.Contains(strings.ToLower(q.Question), strings.ToLower(q.Answer)) {
				t.Errorf("seed %d: %s names its answer: %s", seed, q.ID, q.Question)
			}
			// Each gold document names both entities of its hop, in a form of theirs.
			c := ds.Questions[i].chain
			for h, g := range q.Gold {
				d, ok := byID[g]
				if !ok {
					t.Errorf("seed %d: %s: gold %s not in the corpus", seed, q.ID, g)
					continue
				}
				f := ds.w.facts[c.facts[h]]
				for _, e := range []int{f.src, f.dst} {
					if !namesEntity(d.Title+"\n"+d.Text, ds.w.entities[e].forms) {
						t.Errorf("seed %d: %s: gold %s (hop %d, %s) does not name %q", seed, q.ID, g, h+1, f.rel, ds.w.entities[e].name)
					}
				}
			}
			last := byID[q.Gold[len(q.Gold)-1]]
			if !namesEntity(last.Title+"\n"+last.Text, append([]string{q.Answer}, q.AnswerAliases...)) {
				t.Errorf("seed %d: %s: the last gold document does not name the answer %q", seed, q.ID, q.Answer)
			}
		}
		if want := map[int]int{2: 60, 3: 30, 4: 10}; hops[2] != want[2] || hops[3] != want[3] || hops[4] != want[4] {
			t.Errorf("seed %d: hops %v, want %v", seed, hops, want)
		}
	}
}

func namesEntity(text string, forms []string) bool {
	for _, f := range forms {
		if containsWord(text, f) {
			return true
		}
	}
	return false
}

func TestContainsWord(t *testing.T) {
	for _, tc := range []struct {
		s, f string
		want bool
	}{
		{"owned by Core Platform.", "Core Platform", true},
		{"ledger-api-v2 rollout", "ledger-api", false},
		{"INC-4821 postmortem", "INC-482", false},
		{"Pia, Piax", "Piax", true},
		{"Piaxe", "Piax", false},
	} {
		if got := containsWord(tc.s, tc.f); got != tc.want {
			t.Errorf("containsWord(%q, %q) = %v, want %v", tc.s, tc.f, got, tc.want)
		}
	}
}
