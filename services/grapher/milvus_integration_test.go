//go:build integration

package grapher

import (
	"context"
	"os"
	"testing"

	"github.com/graphrag/graphrag/pkg/vectorstore/milvusstore"
)

// TestStaleEntitiesOnMilvus: with more entity records than a Milvus search returns
// (milvusstore.MaxK, 16,384) and some of them stale, detection deletes exactly the
// stale ones. Enumerating by search made every such detection run fail, and retry
// forever.
func TestStaleEntitiesOnMilvus(t *testing.T) {
	addr := os.Getenv("GRAPHRAG_TEST_MILVUS_ADDR")
	if addr == "" {
		t.Skip("GRAPHRAG_TEST_MILVUS_ADDR is not set: start a server with scripts/integration/milvus/start.sh (make test-integration does)")
	}
	vs, err := milvusstore.Open(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = vs.Close() })
	const n = milvusstore.MaxK + 1116 // 17,500
	checkStaleEntities(t, vs, n, 500)
}
