package gencorpus

import (
	"bufio"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
)

// Write writes corpus.jsonl, questions.jsonl and SOURCE.md into dir.
func (ds *Dataset) Write(dir string) error { return writeSet(dir, ds.Docs, ds.Questions, ds.Source()) }

// writeSet writes a dataset in the format of `graphrag eval`: corpus.jsonl,
// questions.jsonl and the SOURCE.md text source, into dir.
func writeSet(dir string, docs []Doc, questions []Question, source string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	if err := writeJSONL(filepath.Join(dir, "corpus.jsonl"), slices.Values(docs)); err != nil {
		return err
	}
	if err := writeJSONL(filepath.Join(dir, "questions.jsonl"), slices.Values(questions)); err != nil {
		return err
	}
	path := filepath.Join(dir, "SOURCE.md")
	if err := os.WriteFile(path, []byte(source), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func writeJSONL[T any](path string, items iter.Seq[T]) (err error) {
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
