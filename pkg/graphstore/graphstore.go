package graphstore

import (
	"context"
	"errors"
	"slices"

	"github.com/graphrag/graphrag/pkg/errkind"
)

const (
	// MaxDescriptions caps Entity.Descriptions and Relationship.Descriptions.
	MaxDescriptions = 32
	// MaxKeyLen bounds entity keys, chunk ids and corpus names in bytes, so that
	// every driver can index them (bbolt keys, Neo4j index entries).
	MaxKeyLen = 1024
	// MaxStrength bounds RelationMention.Strength, so that weights summed over
	// any number of chunks stay finite.
	MaxStrength = 1e9
)

// TypeOther is the type an extractor gives a name it cannot type. It wins an
// entity's or relationship's Type only when no chunk gives another (see the package
// documentation).
const TypeOther = "OTHER"

// Dependency names the graph store in an error of a driver that finds its server
// unavailable (errkind.Down): what the HTTP API and status may say is down.
const Dependency = "graph store"

// Sentinel errors. Drivers wrap them, so test with errors.Is.
var (
	// ErrNotFound is returned when an entity, community or corpus does not exist.
	ErrNotFound = errkind.New(errkind.NotFound, "graphstore: not found")
	// ErrClosed is returned by every method called after Close.
	ErrClosed = errors.New("graphstore: store closed")
	// ErrInvalid is returned for input that breaks the contract (empty or over-long
	// chunk id or key, text that is not UTF-8, negative strength, inconsistent
	// community hierarchy, ...).
	ErrInvalid = errkind.New(errkind.Invalid, "graphstore: invalid input")
)

// EntityMention is one mention of an entity in a chunk. Key is the normalized name
// (normalized by the caller), Name the surface form.
type EntityMention struct {
	Key, Name, Type, Description string
}

// RelationMention is one mention of a directed relationship in a chunk. Strength
// must be in [0, MaxStrength]; 0 means unspecified and counts as 1.
type RelationMention struct {
	SourceKey, TargetKey, Type, Description string
	Strength                                float64
}

// ChunkExtraction is what one chunk contributed. See the package documentation for
// how Merge folds it into the graph.
type ChunkExtraction struct {
	ChunkID, DocumentID string
	Entities            []EntityMention
	Relations           []RelationMention
}

// Entity is the aggregated view of one entity.
type Entity struct {
	Key, Name, Type, Description string
	Descriptions                 []string
	ChunkIDs                     []string
	MentionCount                 int
	PageRank                     float64
	// Communities holds the community id per level (index = stored level; outputs
	// reorder it with ShownCommunities) from the last ReplaceCommunities; "" where the
	// entity is in no community at that level.
	Communities []string
}

// Relationship is the aggregated view of one directed relationship.
type Relationship struct {
	SourceKey, TargetKey, Type, Description string
	Descriptions                            []string
	Weight                                  float64
	ChunkIDs                                []string
}

// Neighbor is an entity reached by Neighborhood.
type Neighbor struct {
	Entity   Entity
	Distance int
	// Path holds the keys from the start entity to this one, both included.
	Path []string
}

// Edge is an undirected edge of a Snapshot between Keys[Source] and Keys[Target],
// Source < Target.
type Edge struct {
	Source, Target int
	Weight         float64
}

// Snapshot is the whole graph of a corpus in the shape graph algorithms want.
type Snapshot struct {
	// Keys are all entity keys, sorted.
	Keys []string
	// Edges are undirected, one per pair (weights of both directions summed),
	// sorted by (Source, Target).
	Edges []Edge
}

// Community is one node of the community hierarchy. Level 0 is the finest level (C0,
// the smallest communities); a community's parent is at Level+1, one level coarser.
// Users read the levels the other way round (ShownLevel: 0 the coarsest).
type Community struct {
	ID       string
	Level    int
	ParentID string
	// ChildIDs are derived from the ParentID links of the other communities, sorted.
	ChildIDs []string
	// Members are entity keys, sorted.
	Members []string
	// RelationshipCount is the number of relationships with both ends among Members,
	// counted by the store when the hierarchy is stored.
	RelationshipCount int
}

// Stats counts what a corpus holds.
type Stats struct {
	Entities, Relationships, Communities, Levels, Chunks int
}

// ReadOption narrows what Entities and RelationshipsAmong fill in.
type ReadOption uint8

// Brief leaves out the lists of the entities and relationships read:
// Descriptions, ChunkIDs and an entity's Communities. The embedded store reads
// each list with one more lookup per item, which at 100k chunks is a page read
// from disk more often than not. The summarizer and the grapher's entity
// embedding use names, types, descriptions, weights and PageRank only. A store
// may fill the lists in anyway, so a caller passing Brief must not use them.
const Brief ReadOption = 1

// IsBrief reports whether opts holds Brief.
func IsBrief(opts []ReadOption) bool { return slices.Contains(opts, Brief) }

// Store is a knowledge-graph store partitioned by corpus. Implementations are safe
// for concurrent use. Reads of a corpus that does not exist return empty results
// (or ErrNotFound where a single item is asked for).
type Store interface {
	// Merge applies the batch atomically; see the package documentation.
	Merge(ctx context.Context, corpus string, batch []ChunkExtraction) error
	// RemoveChunks removes the contributions of the given chunks; unknown ids are
	// ignored.
	RemoveChunks(ctx context.Context, corpus string, chunkIDs []string) error
	// Entity returns one entity or ErrNotFound.
	Entity(ctx context.Context, corpus, key string) (Entity, error)
	// Entities returns the entities that exist, in the order given, each once.
	Entities(ctx context.Context, corpus string, keys []string, opts ...ReadOption) ([]Entity, error)
	// SetDescriptions stores summarized descriptions by entity key (an empty one
	// clears the summary); keys of entities that do not exist are ignored.
	SetDescriptions(ctx context.Context, corpus string, descs map[string]string) error
	// RelationshipsOf returns the relationships touching any of keys, by Weight
	// descending then (SourceKey, TargetKey); limit <= 0 means no limit.
	RelationshipsOf(ctx context.Context, corpus string, keys []string, limit int) ([]Relationship, error)
	// RelationshipsAmong returns the relationships with both ends in keys, in the
	// order of RelationshipsOf.
	RelationshipsAmong(ctx context.Context, corpus string, keys []string, opts ...ReadOption) ([]Relationship, error)
	// ChunkEntities returns, for each given chunk that has a contribution, the keys
	// of the entities it mentions (including relationship ends), sorted. Chunks
	// without a contribution are absent from the map.
	ChunkEntities(ctx context.Context, corpus string, chunkIDs []string) (map[string][]string, error)
	// Contributions returns the stored contribution of each given chunk that has one
	// (as Contribute made it), keyed by chunk id; chunks without one are absent. The
	// grapher's curation re-merges chunks from them (Extraction).
	Contributions(ctx context.Context, corpus string, chunkIDs []string) (map[string]Contribution, error)
	// Neighborhood walks relationships breadth first, ignoring direction, from the
	// start entities (unknown ones ignored) up to depth hops. Start entities are
	// excluded; each entity appears once at its shortest distance. The result is
	// ordered by Distance ascending, PageRank descending, Key ascending, and cut to
	// limit (<= 0: no limit). Path steps back, at each hop, to the smallest key one
	// hop closer to the start set. Neighbor entities come without Descriptions (the
	// walk's callers rank by chunks and PageRank; Entity reads them): in the
	// embedded store those were a fifth of a local search's time.
	Neighborhood(ctx context.Context, corpus string, start []string, depth, limit int) ([]Neighbor, error)
	// Snapshot returns the whole graph for Leiden and PageRank.
	Snapshot(ctx context.Context, corpus string) (Snapshot, error)
	// SetPageRank stores scores by entity key; entities not in scores keep theirs,
	// keys of entities that do not exist are ignored. Scores must be finite.
	SetPageRank(ctx context.Context, corpus string, scores map[string]float64) error
	// ReplaceCommunities replaces the whole hierarchy and Entity.Communities.
	// IDs must be unique and non-empty, levels >= 0, a ParentID must name a
	// community one level up, and an entity is in at most one community per level.
	ReplaceCommunities(ctx context.Context, corpus string, cs []Community) error
	// Communities returns the communities of one level (-1: all), sorted by
	// (Level, ID).
	Communities(ctx context.Context, corpus string, level int) ([]Community, error)
	// Community returns one community or ErrNotFound.
	Community(ctx context.Context, corpus, id string) (Community, error)
	// Stats counts what a corpus holds; Levels is the highest level + 1.
	Stats(ctx context.Context, corpus string) (Stats, error)
	// Levels is Stats' Levels without counting anything (counting walks every entity
	// and relationship): what a read that renumbers community levels needs.
	Levels(ctx context.Context, corpus string) (int, error)
	// Corpora lists the corpora written to and not dropped since, sorted.
	Corpora(ctx context.Context) ([]string, error)
	// DropCorpus deletes a corpus; dropping one that does not exist is not an error.
	DropCorpus(ctx context.Context, corpus string) error
	// Ping reports whether the store is usable.
	Ping(ctx context.Context) error
	// Close releases the store; it is safe to call twice.
	Close() error
}

// Algorithms is implemented by stores that run community detection and PageRank
// natively (Neo4j with Graph Data Science). Available reports whether they can now.
type Algorithms interface {
	Available(ctx context.Context) (bool, error)
	// Communities runs hierarchical Leiden (level 0 = finest; memberships index the
	// keys of the returned snapshot) and PageRank on the corpus's entity graph.
	Communities(ctx context.Context, corpus string, o AlgorithmOptions) (AlgorithmResult, error)
}

// AlgorithmOptions configures Algorithms.Communities. Zero values pick the
// defaults of the pure Go implementations (packages leiden and pagerank):
// resolution 1, 3 levels, damping 0.85, 20 PageRank iterations.
type AlgorithmOptions struct {
	Resolution float64
	Seed       uint64
	MaxLevels  int
	Damping    float64
	// MaxIterations bounds the PageRank iterations.
	MaxIterations int
}

// AlgorithmResult is the outcome of Algorithms.Communities.
type AlgorithmResult struct {
	// Snapshot is the graph the algorithms ran on.
	Snapshot Snapshot
	// Levels[l][i] is the community of Snapshot.Keys[i] at level l (0 = finest),
	// numbered 0..n-1 by smallest member; the levels nest.
	Levels [][]int
	// PageRank[i] is the score of Snapshot.Keys[i]; the scores sum to 1.
	PageRank []float64
}
