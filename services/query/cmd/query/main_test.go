package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The query reads -config: a value of its own component and a common one are checked
// as flags are, each error naming the file, line, key and value; a key of a component it
// does not run is skipped; a key no binary knows is refused. Nothing starts.
func TestSettingsFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "graphrag.yaml")
	if err := os.WriteFile(file, []byte("log-format: xml\ntop-k: 0\nnats-port: 5000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), []string{"-config", file, "-data-dir", dir})
	want := file + `:1: log-format "xml": must be json or text, got "xml"` + "\n" + file + `:2: top-k "0": must be at least 1, got 0`
	if err == nil || err.Error() != want {
		t.Errorf("run -config = %v, want exactly\n%s", err, want)
	}

	if err := os.WriteFile(file, []byte("nats-port: 5000\nlog-formatt: text\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GRAPHRAG_CONFIG", file)
	err = run(context.Background(), []string{"-data-dir", dir})
	if err == nil || !strings.Contains(err.Error(), file+`:2: unknown key "log-formatt"`) {
		t.Errorf("run with GRAPHRAG_CONFIG = %v, want the unknown key named with its line", err)
	}
}
