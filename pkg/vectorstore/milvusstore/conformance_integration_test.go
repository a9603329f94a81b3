//go:build integration

package milvusstore_test

import (
	"context"
	"os"
	"testing"

	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/vectorstore/milvusstore"
	"github.com/graphrag/graphrag/pkg/vectorstore/vectorstoretest"
)

// envAddr names the variable scripts/integration/milvus/start.sh exports.
const envAddr = "GRAPHRAG_TEST_MILVUS_ADDR"

// serverAddr returns the test server's address or skips the test.
func serverAddr(t testing.TB) string {
	t.Helper()
	addr := os.Getenv(envAddr)
	if addr == "" {
		t.Skipf("%s is not set: start a server with scripts/integration/milvus/start.sh (make test-integration does)", envAddr)
	}
	return addr
}

func open(t testing.TB, addr string, opts ...milvusstore.Option) *milvusstore.Store {
	t.Helper()
	s, err := milvusstore.Open(context.Background(), addr, opts...)
	if err != nil {
		t.Fatalf("Open(%s): %v", addr, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	addr := serverAddr(t)
	vectorstoretest.Run(t, vectorstoretest.Features{
		// Data lives in the server: closing the client and connecting again
		// finds it (TestRestart covers a server restart).
		Persistent: true,
		Lexical:    true,
		Reopen: func(t *testing.T, old vectorstore.Store) vectorstore.Store {
			if err := old.Close(); err != nil {
				t.Fatalf("Close before reopen: %v", err)
			}
			return open(t, addr)
		},
	}, func(t *testing.T) vectorstore.Store { return open(t, addr) })
}
