package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunKinds(t *testing.T) {
	for _, kind := range []string{"workplace", "guidelines"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			var out bytes.Buffer
			if err := run(t.Context(), []string{"-kind", kind, "-out", dir}, &out); err != nil {
				t.Fatalf("run: %v", err)
			}
			if !strings.Contains(out.String(), kind) {
				t.Errorf("output %q does not name the kind", out.String())
			}
			for _, f := range []string{"corpus.jsonl", "questions.jsonl", "SOURCE.md"} {
				if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
					t.Errorf("%s: missing or empty (%v)", f, err)
				}
			}
		})
	}
	if err := run(t.Context(), []string{"-kind", "encyclopedia", "-out", t.TempDir()}, &bytes.Buffer{}); err == nil {
		t.Error("an unknown -kind was accepted")
	}
}
