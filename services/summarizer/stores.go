package summarizer

import (
	"context"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// GraphReader is what the summarizer reads from a graph store: a community,
// its members and the relationships among them. A graphstore.Store has these
// methods (see it for their contracts).
type GraphReader interface {
	Community(ctx context.Context, corpus, id string) (graphstore.Community, error)
	Entities(ctx context.Context, corpus string, keys []string, opts ...graphstore.ReadOption) ([]graphstore.Entity, error)
	RelationshipsAmong(ctx context.Context, corpus string, keys []string, opts ...graphstore.ReadOption) ([]graphstore.Relationship, error)
}

// VectorStore is what the summarizer needs of a vector store: it reads the
// reports of sub-communities and writes the community's own (and deletes it again
// when the community was replaced meanwhile). A
// vectorstore.Store has these methods.
type VectorStore interface {
	EnsureCollection(ctx context.Context, spec vectorstore.CollectionSpec) error
	Get(ctx context.Context, coll string, ids []string) ([]vectorstore.Record, error)
	Upsert(ctx context.Context, coll string, recs []vectorstore.Record) error
	Delete(ctx context.Context, coll string, ids []string) error
}

var (
	_ GraphReader = graphstore.Store(nil)
	_ VectorStore = vectorstore.Store(nil)
)
