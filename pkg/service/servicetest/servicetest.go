// Package servicetest holds checks every service binary's tests share.
package servicetest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SettingsFile checks that a binary's run reads the settings file (-config, and
// GRAPHRAG_CONFIG): ownKey: ownValue, a setting of the binary's own component that
// Validate refuses with ownError, and a bad common value are both reported, each naming
// the file, line, key and value; a key of a component the binary does not run is
// skipped; a key no binary knows is refused with its line. Nothing starts.
func SettingsFile(t *testing.T, run func(ctx context.Context, args []string) error, ownKey, ownValue, ownError string) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "graphrag.yaml")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("log-format: xml\n" + ownKey + ": " + ownValue + "\nnats-port: 5000\n")
	err := run(context.Background(), []string{"-config", file, "-data-dir", dir})
	want := file + `:1: log-format "xml": must be json or text, got "xml"` + "\n" + file + `:2: ` + ownKey + ` "` + ownValue + `": ` + ownError
	if err == nil || err.Error() != want {
		t.Errorf("run -config = %v, want exactly\n%s", err, want)
	}

	write("nats-port: 5000\nlog-formatt: text\n")
	t.Setenv("GRAPHRAG_CONFIG", file)
	err = run(context.Background(), []string{"-data-dir", dir})
	if err == nil || !strings.Contains(err.Error(), file+`:2: unknown key "log-formatt"`) {
		t.Errorf("run with GRAPHRAG_CONFIG = %v, want the unknown key named with its line", err)
	}
}
