package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/bus/bustest"
)

// TestPublishNothing: a publish that publishes nothing (no file it can read) fails and
// says so, instead of exiting 0; one whose documents are all unchanged succeeds.
func TestPublishNothing(t *testing.T) {
	url := bustest.StartServer(t).ClientURL()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "report.docx"), []byte("PK..."), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := dispatch(t.Context(), []string{"publish", "-nats-url", url, "-corpus", "notes", dir}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "nothing published") {
		t.Errorf("publishing a directory of unreadable files: %v, want an error\n%s", err, out.String())
	}
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("# A\n\nSome text."), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 2 { // published, then unchanged
		if err := dispatch(t.Context(), []string{"publish", "-nats-url", url, "-corpus", "notes", dir}, &out, &out); err != nil {
			t.Errorf("publishing a readable file: %v\n%s", err, out.String())
		}
	}
}
