package grapher

import (
	"context"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// GraphStore is what the grapher needs of a graph store: it merges
// extractions, removes the contributions of retired chunks, reads the graph for
// detection and writes back PageRank, communities and summarized descriptions; it
// reads the communities back to count those without a report after a restart. A
// graphstore.Store has these
// methods (see it for their contracts).
type GraphStore interface {
	Merge(ctx context.Context, corpus string, batch []graphstore.ChunkExtraction) error
	RemoveChunks(ctx context.Context, corpus string, chunkIDs []string) error
	Contributions(ctx context.Context, corpus string, chunkIDs []string) (map[string]graphstore.Contribution, error)
	Corpora(ctx context.Context) ([]string, error)
	Snapshot(ctx context.Context, corpus string) (graphstore.Snapshot, error)
	Entities(ctx context.Context, corpus string, keys []string, opts ...graphstore.ReadOption) ([]graphstore.Entity, error)
	SetDescriptions(ctx context.Context, corpus string, descs map[string]string) error
	SetPageRank(ctx context.Context, corpus string, scores map[string]float64) error
	ReplaceCommunities(ctx context.Context, corpus string, cs []graphstore.Community) error
	Communities(ctx context.Context, corpus string, level int) ([]graphstore.Community, error)
}

// VectorStore is what the grapher needs of a vector store: it writes entity
// records, checks which community reports exist, and deletes the records of
// entities and communities that are gone. A vectorstore.Store has these
// methods.
type VectorStore interface {
	EnsureCollection(ctx context.Context, spec vectorstore.CollectionSpec) error
	Upsert(ctx context.Context, coll string, recs []vectorstore.Record) error
	Attrs(ctx context.Context, coll string, ids []string) (map[string]map[string]string, error)
	Count(ctx context.Context, coll string) (int, error)
	List(ctx context.Context, coll, after string, limit int) ([]string, string, error)
	Delete(ctx context.Context, coll string, ids []string) error
}

var (
	_ GraphStore  = graphstore.Store(nil)
	_ VectorStore = vectorstore.Store(nil)
)
