package embedded_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
	"github.com/graphrag/graphrag/pkg/vectorstore/vectorstoretest"
)

func TestMain(m *testing.M) {
	if crashChild() {
		return
	}
	// bleve starts one process-wide analysis worker pool on first use and
	// never stops it; it is not tied to any index this package opens.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/blevesearch/bleve_index_api.AnalysisWorker"))
}

func openTemp(t *testing.T, opts ...embedded.Option) *embedded.Store {
	t.Helper()
	s, err := embedded.Open(t.TempDir(), opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func reopen(t *testing.T, old vectorstore.Store, opts ...embedded.Option) vectorstore.Store {
	t.Helper()
	dir := old.(*embedded.Store).Dir()
	if err := old.Close(); err != nil {
		t.Fatalf("Close before reopen: %v", err)
	}
	if err := embedded.CheckOpenIndex(dir); err != nil {
		t.Fatalf("before reopen: %v", err)
	}
	s, err := embedded.Open(dir, opts...)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	// Both search paths must conform: exact scans (the default for small
	// collections) and the HNSW graph (forced with threshold 0).
	for _, tc := range []struct {
		name      string
		opts      []embedded.Option
		skipLarge bool
	}{
		{"exact", nil, false},
		{"hnsw", []embedded.Option{embedded.WithExactThreshold(0)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vectorstoretest.Run(t, vectorstoretest.Features{
				Persistent: true,
				Lexical:    true,
				SkipLarge:  tc.skipLarge,
				Reopen: func(t *testing.T, old vectorstore.Store) vectorstore.Store {
					return reopen(t, old, tc.opts...)
				},
			}, func(t *testing.T) vectorstore.Store { return openTemp(t, tc.opts...) })
		})
	}
}
