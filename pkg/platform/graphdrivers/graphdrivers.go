package graphdrivers

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/graphstore/neo4jgraph"
	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/platform/filelock"
)

// All returns every graph store driver.
func All() []platform.GraphDriver {
	return []platform.GraphDriver{
		{Name: platform.Embedded, Open: openEmbedded},
		{Name: platform.Neo4j, Open: openNeo4j},
	}
}

func openEmbedded(_ context.Context, dataDir string, _ platform.BackendFlags) (platform.Graph, error) {
	path := filepath.Join(dataDir, "graph.db")
	// bbolt would wait for the lock, then say only "timeout": name the holder at once.
	if h, ok := filelock.HolderOf(path); ok {
		return platform.Graph{}, fmt.Errorf("opening the graph store: %w", filelock.InUse(path, h))
	}
	g, err := boltgraph.Open(path)
	if err != nil {
		return platform.Graph{}, fmt.Errorf("opening the graph store: %w", err)
	}
	// The file lock admits one process: no second grapher can write the same graph.
	return platform.Graph{Store: g, Exclusive: true}, nil
}

func openNeo4j(ctx context.Context, _ string, b platform.BackendFlags) (platform.Graph, error) {
	var opts []neo4jgraph.Option
	if b.Neo4jPassword.Value() != "" {
		opts = append(opts, neo4jgraph.WithBasicAuth(b.Neo4jUser, b.Neo4jPassword.Value()))
	}
	if b.Neo4jDatabase != "" {
		opts = append(opts, neo4jgraph.WithDatabase(b.Neo4jDatabase))
	}
	g, err := neo4jgraph.Open(ctx, b.Neo4jURI, opts...)
	if err != nil {
		return platform.Graph{}, fmt.Errorf("opening the Neo4j graph store: %w", err)
	}
	return platform.Graph{Store: g, Algorithms: g.Algorithms()}, nil
}
