package boltgraph

import (
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/graphstoretest"
)

func TestMain(m *testing.M) {
	if os.Getenv(crashChildEnv) != "" {
		os.Exit(crashChild()) // the child of TestCrashRecovery, killed mid-way
	}
	code := m.Run()
	cleanupBenchGraph()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "graph.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	graphstoretest.Run(t, graphstoretest.Features{
		Persistent: true,
		Reopen: func(t *testing.T, s graphstore.Store) graphstore.Store {
			path := s.(*Store).Path()
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			re, err := Open(path)
			if err != nil {
				t.Fatalf("reopening: %v", err)
			}
			t.Cleanup(func() { _ = re.Close() })
			return re
		},
	}, func(t *testing.T) graphstore.Store { return openTemp(t) })
}
