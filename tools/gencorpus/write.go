package gencorpus

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Write writes corpus.jsonl, questions.jsonl and SOURCE.md into dir.
func (ds *Dataset) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	docs := func(yield func(any) bool) {
		for _, d := range ds.Docs {
			if !yield(d) {
				return
			}
		}
	}
	if err := writeJSONL(filepath.Join(dir, "corpus.jsonl"), docs); err != nil {
		return err
	}
	qs := func(yield func(any) bool) {
		for _, q := range ds.Questions {
			if !yield(q) {
				return
			}
		}
	}
	if err := writeJSONL(filepath.Join(dir, "questions.jsonl"), qs); err != nil {
		return err
	}
	path := filepath.Join(dir, "SOURCE.md")
	if err := os.WriteFile(path, []byte(ds.Source()), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
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
	enc.SetEscapeHTML(false)
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
