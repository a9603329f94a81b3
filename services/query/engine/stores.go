package engine

import (
	"context"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// GraphReader is what the engine reads from a graph store; it never writes.
// A graphstore.Store has these methods (see it for their contracts).
type GraphReader interface {
	Entity(ctx context.Context, corpus, key string) (graphstore.Entity, error)
	Entities(ctx context.Context, corpus string, keys []string, opts ...graphstore.ReadOption) ([]graphstore.Entity, error)
	RelationshipsOf(ctx context.Context, corpus string, keys []string, limit int) ([]graphstore.Relationship, error)
	RelationshipsAmong(ctx context.Context, corpus string, keys []string, opts ...graphstore.ReadOption) ([]graphstore.Relationship, error)
	ChunkEntities(ctx context.Context, corpus string, chunkIDs []string) (map[string][]string, error)
	Neighborhood(ctx context.Context, corpus string, start []string, depth, limit int) ([]graphstore.Neighbor, error)
	Communities(ctx context.Context, corpus string, level int) ([]graphstore.Community, error)
	Stats(ctx context.Context, corpus string) (graphstore.Stats, error)
	Levels(ctx context.Context, corpus string) (int, error)
}

// VectorReader is what the engine reads from a vector store; it never writes.
// A vectorstore.Store has these methods.
type VectorReader interface {
	Search(ctx context.Context, coll string, vec []float32, k int, f vectorstore.Filter) ([]vectorstore.Hit, error)
	SearchText(ctx context.Context, coll string, query string, k int, f vectorstore.Filter) ([]vectorstore.Hit, error)
	Get(ctx context.Context, coll string, ids []string) ([]vectorstore.Record, error)
	Count(ctx context.Context, coll string) (int, error)
}

var (
	_ GraphReader  = graphstore.Store(nil)
	_ VectorReader = vectorstore.Store(nil)
)
