package vectordrivers

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/platform/filelock"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
	"github.com/graphrag/graphrag/pkg/vectorstore/milvusstore"
)

// All returns every vector store driver.
func All() []platform.VectorDriver {
	return []platform.VectorDriver{
		{Name: platform.Embedded, Open: openEmbedded},
		{Name: platform.Milvus, Open: openMilvus},
	}
}

func openEmbedded(_ context.Context, dataDir string, _ platform.BackendFlags) (vectorstore.Store, error) {
	dir := filepath.Join(dataDir, "vectors")
	// bbolt would wait for the lock, then say only "timeout": name the holder at once.
	if h, ok := filelock.HolderOf(filepath.Join(dir, "vectors.db")); ok {
		return nil, fmt.Errorf("opening the vector store: %w", filelock.InUse(dir, h))
	}
	v, err := embedded.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("opening the vector store: %w", err)
	}
	return v, nil
}

func openMilvus(ctx context.Context, _ string, b platform.BackendFlags) (vectorstore.Store, error) {
	var opts []milvusstore.Option
	if b.MilvusDB != "" {
		opts = append(opts, milvusstore.WithDatabase(b.MilvusDB))
	}
	if b.MilvusUser != "" {
		opts = append(opts, milvusstore.WithCredentials(b.MilvusUser, b.MilvusPass.Value()))
	}
	if b.MilvusToken.Value() != "" {
		opts = append(opts, milvusstore.WithToken(b.MilvusToken.Value()))
	}
	v, err := milvusstore.Open(ctx, b.MilvusAddress, opts...)
	if err != nil {
		return nil, fmt.Errorf("opening the Milvus vector store: %w", err)
	}
	return v, nil
}
