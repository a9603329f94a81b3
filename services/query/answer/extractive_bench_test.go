package answer

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/graphrag/graphrag/services/query/evidence"
)

// hotpotQA reads the benchmark's HotpotQA sample (tools/bench/testdata):
// passages as "title\n\nbody" chunk texts, and the questions.
func hotpotQA(b *testing.B) (passages, questions []string) {
	b.Helper()
	dir := filepath.Join("..", "..", "..", "tools", "bench", "testdata", "hotpotqa")
	read := func(name string, each func(line []byte) error) {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(zr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if err := each(sc.Bytes()); err != nil {
				b.Fatalf("%s: %v", name, err)
			}
		}
		if err := sc.Err(); err != nil {
			b.Fatal(err)
		}
	}
	read("corpus.jsonl.gz", func(line []byte) error {
		var p struct{ Title, Text string }
		err := json.Unmarshal(line, &p)
		passages = append(passages, p.Title+"\n\n"+p.Text)
		return err
	})
	read("questions.jsonl.gz", func(line []byte) error {
		var q struct{ Question string }
		err := json.Unmarshal(line, &q)
		questions = append(questions, q.Question)
		return err
	})
	return passages, questions
}

// BenchmarkExtractiveAnswer measures the offline answer (make run's default) of each
// HotpotQA sample question over ten passages, as a local search hands them over.
func BenchmarkExtractiveAnswer(b *testing.B) {
	passages, questions := hotpotQA(b)
	if len(passages) < answerPassages || len(questions) == 0 {
		b.Fatalf("%d passages, %d questions", len(passages), len(questions))
	}
	contexts := make([]evidence.Retrieved, len(questions))
	for i := range questions {
		var texts []string
		for j := range answerPassages {
			texts = append(texts, passages[(i*answerPassages+j)%len(passages)])
		}
		contexts[i] = chunksOf(texts...)
	}
	i := 0
	for b.Loop() {
		if extractiveAnswer(questions[i%len(questions)], contexts[i%len(questions)]) == "" {
			b.Fatal("empty answer")
		}
		i++
	}
}
