//go:build integration

package milvusstore_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// scriptsDir is scripts/integration/milvus relative to this package.
var scriptsDir = filepath.Join("..", "..", "..", "scripts", "integration", "milvus")

// startServer runs start.sh on runDir and returns the address it exports.
func startServer(t *testing.T, runDir string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(scriptsDir, "start.sh"), runDir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("start.sh: %v\n%s", err, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "export "+envAddr+"="); ok {
			return v
		}
	}
	t.Fatalf("start.sh printed no %s: %q", envAddr, out)
	return ""
}

func stopServer(t *testing.T, runDir string) {
	t.Helper()
	if out, err := exec.Command(filepath.Join(scriptsDir, "stop.sh"), runDir).CombinedOutput(); err != nil {
		t.Fatalf("stop.sh: %v\n%s", err, out)
	}
}

// killServer ends the server with SIGKILL, as a crash would.
func killServer(t *testing.T, runDir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(runDir, "milvus.pid"))
	if err != nil {
		t.Fatalf("reading pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file: %v", err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill: %v", err)
	}
	stopServer(t, runDir) // waits for the exit and removes the pid file
}

// TestRestart writes through one server process, stops it (cleanly, or
// with SIGKILL after the writes were acknowledged), starts a new one on the
// same data directory and checks that everything is still there.
func TestRestart(t *testing.T) {
	serverAddr(t) // the harness is installed only when the shared server runs
	for _, tc := range []struct {
		name string
		stop func(t *testing.T, runDir string)
	}{
		{"clean stop", stopServer},
		{"kill -9", killServer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			runDir := t.TempDir()
			s := open(t, startServer(t, runDir))
			t.Cleanup(func() { stopServer(t, runDir) })

			dense, lex := "restart_dense", "restart_lex"
			for _, spec := range []vectorstore.CollectionSpec{{Name: dense, Dim: 4}, {Name: lex, Dim: 4, Lexical: true}} {
				if err := s.EnsureCollection(ctx, spec); err != nil {
					t.Fatalf("EnsureCollection: %v", err)
				}
			}
			recs := []vectorstore.Record{
				{ID: "a", Vector: []float32{1, 0, 0, 0}, Text: "dopamine and reward", Attrs: map[string]string{"kind": "x"}},
				{ID: "b", Vector: []float32{0, 1, 0, 0}, Text: "sleep and memory"},
				{ID: "c", Vector: []float32{0, 0, 1, 0}, Text: "gone after delete"},
			}
			for _, coll := range []string{dense, lex} {
				if err := s.Upsert(ctx, coll, recs); err != nil {
					t.Fatalf("Upsert: %v", err)
				}
				if err := s.Delete(ctx, coll, []string{"c"}); err != nil {
					t.Fatalf("Delete: %v", err)
				}
			}
			if err := s.Upsert(ctx, dense, []vectorstore.Record{{ID: "b", Vector: []float32{0, 0, 0, 1}, Text: "replaced"}}); err != nil {
				t.Fatalf("Upsert: %v", err)
			}
			_ = s.Close()

			tc.stop(t, runDir)
			s = open(t, startServer(t, runDir))

			names, err := s.Collections(ctx)
			if err != nil || !slices.Contains(names, dense) || !slices.Contains(names, lex) {
				t.Fatalf("Collections after restart = %v, %v", names, err)
			}
			if err := s.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: dense, Dim: 5}); !errors.Is(err, vectorstore.ErrDimensionMismatch) {
				t.Fatalf("EnsureCollection with another dim after restart = %v", err)
			}
			if n, err := s.Count(ctx, dense); err != nil || n != 2 {
				t.Fatalf("Count after restart = %d, %v; want 2", n, err)
			}
			got, err := s.Get(ctx, dense, []string{"a", "b", "c"})
			if err != nil || len(got) != 2 || got[0].Attrs["kind"] != "x" || got[1].Text != "replaced" {
				t.Fatalf("Get after restart = %+v, %v", got, err)
			}
			hits, err := s.Search(ctx, dense, []float32{0, 0, 0, 1}, 1, vectorstore.Filter{})
			if err != nil || len(hits) != 1 || hits[0].ID != "b" {
				t.Fatalf("Search after restart = %+v, %v", hits, err)
			}
			hits, err = s.SearchText(ctx, lex, "dopamine", 5, vectorstore.Filter{})
			if err != nil || len(hits) != 1 || hits[0].ID != "a" {
				t.Fatalf("SearchText after restart = %+v, %v", hits, err)
			}
			if err := s.Upsert(ctx, dense, []vectorstore.Record{{ID: "d", Vector: []float32{1, 1, 0, 0}}}); err != nil {
				t.Fatalf("Upsert after restart: %v", err)
			}
			if n, err := s.Count(ctx, dense); err != nil || n != 3 {
				t.Fatalf("Count after a write after restart = %d, %v; want 3", n, err)
			}
		})
	}
}
