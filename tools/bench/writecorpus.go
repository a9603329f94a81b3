package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// writeRealCorpus writes the first n documents of the scaled corpus and nq questions
// spread over its copies to dir as corpus.jsonl and questions.jsonl, the dataset
// format of `graphrag eval`, so that the whole offline pipeline (indexing throughput,
// peak RSS, retrieval latency and recall) can be measured at realistic entity density.
func writeRealCorpus(rc *realCorpus, dir string, n, nq int) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	docs := func(yield func(any) bool) {
		for i := range n {
			if !yield(rc.doc(i)) {
				return
			}
		}
	}
	if err := writeJSONL(filepath.Join(dir, "corpus.jsonl"), docs); err != nil {
		return err
	}
	qs := func(yield func(any) bool) {
		for _, q := range rc.sampleQuestions(n, nq) {
			if !yield(q) {
				return
			}
		}
	}
	return writeJSONL(filepath.Join(dir, "questions.jsonl"), qs)
}

func writeJSONL(path string, items func(func(any) bool)) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("closing %s: %w", path, cerr)
		}
	}()
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for it := range items {
		if err := enc.Encode(it); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
