package extractor

import (
	"context"

	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// VectorStore is what the extractor needs of a vector store: it writes chunk
// records and retires those of replaced document versions. A vectorstore.Store
// has these methods (see it for their contracts).
type VectorStore interface {
	EnsureCollection(ctx context.Context, spec vectorstore.CollectionSpec) error
	Upsert(ctx context.Context, coll string, recs []vectorstore.Record) error
	Delete(ctx context.Context, coll string, ids []string) error
}

var _ VectorStore = vectorstore.Store(nil)
