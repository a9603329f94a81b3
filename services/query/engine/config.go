package engine

import (
	"context"
	"flag"
	"fmt"
	"log/slog"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/service"
)

// Graph rankings for the graph result list.
const (
	// RankPPR ranks chunks by personalized PageRank from the linked entities over the
	// local entity–chunk graph (HippoRAG-style).
	RankPPR = "ppr"
	// RankPath ranks chunks by the hop distance of the entity that names them, then by
	// that entity's PageRank (the seeds' traversal ranking).
	RankPath = "path"
)

// Weights scale each list's contribution to RRF.
type Weights struct {
	Dense   float64 `json:"dense"`
	Lexical float64 `json:"lexical"`
	Graph   float64 `json:"graph"`
	// Subject weighs the list of passages about the entities the question names or the
	// best passages mention (see subjectList).
	Subject float64 `json:"subject"`
}

// Config tunes retrieval (package ask's Config bounds answering).
// Defaults are documented in docs/configuration.md.
// New gives a zero field its DefaultConfig value (a zero Weights: all four), except
// MapTopK, PassageSeeds and SubjectPassages, whose 0 is a value, and ReverseHops;
// EntityMinSim 0 is Auto. Validate rejects what New would not run with.
type Config struct {
	TopK         int     // chunks returned
	Pool         int     // candidates taken from each list before fusion
	Depth        int     // graph traversal hops
	MaxNeighbors int     // entities reached by traversal
	RRFK         float64 // RRF constant
	Weights      Weights // per-list RRF weights, each ≥ 0 (Dense may be Auto)
	GraphRanking string  // RankPPR or RankPath
	EntityTopK   int     // entities linked by embedding similarity
	// EntityMinSim is the minimum cosine similarity for an embedding link, in (0, 1], or
	// Auto; NoEmbeddingLinks (1) links by name only.
	EntityMinSim float64
	// EntityMargin, in (0, 1], keeps only embedding links within this much of the best
	// one: models spread similarities differently (E5's unrelated pairs score 0.7), so an
	// absolute minimum alone does not carry from one model to the next.
	EntityMargin  float64
	CommunityTopK int     // community reports in local context
	MapTopK       int     // communities mapped in global search (0 = all at the level, pruned)
	Damping       float64 // personalized PageRank damping, in (0, 1)
	// PassageSeeds is how many of the best dense/lexical passages seed the graph walk
	// through their document entity, with weight PassageSeedWeight / rank (0: none).
	PassageSeeds      int
	PassageSeedWeight float64
	// SubjectPassages is how many of the best dense/lexical passages contribute the
	// entities they mention to the subject list (0: none).
	SubjectPassages int
	// DriftFollowUps bounds the follow-up questions of a drift search, each a local
	// search of its own.
	DriftFollowUps int
	// WalkCarriesText, with two text lists (an embedding model and BM25), seeds the walk
	// with every text passage at a softmax of its combined standard score and with the
	// entity nearest the question, and fuses by FuseWalk: the passages both text lists
	// are confident of, then the walk and subject lists by RRF, the text lists not voting
	// again (ADR 0074). Off: the text lists vote with the walk and subject lists
	// (FuseText), the walk seeded by the best PassageSeeds passages.
	WalkCarriesText bool
	// ReverseHops adds to the subject list, after the forward hops, the passage that
	// mentions a first-hop passage's subject and best matches what the first hop left
	// unexplained in the question.
	ReverseHops bool
	// MentionHops adds to the subject list, after the reverse hops, for each entity a
	// first-hop passage mentions, the other passage that mentions it and best matches
	// what the first hop left unexplained (ADR 0075). Off by default: it gains on
	// composed multi-hop questions and costs lookups.
	MentionHops bool
}

// MaxDriftFollowUps bounds DriftFollowUps: a drift question runs one local search per
// follow-up after its own.
const MaxDriftFollowUps = 10

// Auto marks a parameter whose default depends on the embedder. With a semantic embedding
// model the dense list weighs 1 and entities link at cosine ≥ 0.3 (the seeds' values).
// With the offline hashing embedder, whose vectors restate the words, the dense list
// weighs 0 and entities link by name only (NoEmbeddingLinks): on the HotpotQA development
// set its dense list lowered fused recall@5 at every weight tried (docs/evaluation.md).
const Auto = -1

// NoEmbeddingLinks as EntityMinSim links entities by their names only. It is the offline
// default: the hashing embedder's similarity counts shared words, so an "embedding link"
// restates the lexical match and links the entities whose descriptions repeat the
// question's words (a document named "Audit: X for Y in adolescents" for a question about
// X, Y and adolescents), which the subject list then ranks above the passage that answers
// (docs/evaluation.md, guidelines set).
const NoEmbeddingLinks = 1

// DefaultConfig holds the seeds' parameters (RRF k 60, 2 hops, 10 query entities with
// similarity ≥ 0.3, 3 communities, 5 for map-reduce).
func DefaultConfig() Config {
	return Config{
		TopK:           10,
		Pool:           50,
		Depth:          2,
		MaxNeighbors:   200,
		RRFK:           60,
		Weights:        Weights{Dense: Auto, Lexical: 1, Graph: 1, Subject: 1},
		GraphRanking:   RankPPR,
		EntityTopK:     10,
		EntityMinSim:   Auto,
		EntityMargin:   0.02,
		CommunityTopK:  3,
		MapTopK:        5,
		DriftFollowUps: 3,
		Damping:        0.5,

		PassageSeeds:      5,
		PassageSeedWeight: 0.5,
		SubjectPassages:   2,
		ReverseHops:       true,
	}
}

// Deps are the backends the engine reads.
type Deps struct {
	Graph   GraphReader
	Vectors VectorReader
	// Embedder turns texts into vectors: the same embedder the pipeline
	// indexed with.
	Embedder llm.Embedder
	// OfflineEmbedder says the embedder is the offline hashing embedder: its vectors are
	// lexical, not semantic, which changes the automatic defaults (see Config).
	OfflineEmbedder bool
	// Entities names a question's entities when neither its exact names nor the
	// embeddings link any: ModelEntities with a model; nil: ProperNounEntities.
	Entities EntityLister
	Logger   *slog.Logger
	// Aliases, when set, gives a corpus's curated aliases (names merged into other
	// entities, normalized, to the key of the entity they are now part of): question
	// words naming a merged entity link to the entity it was merged into.
	Aliases func(ctx context.Context, corpus string) (map[string]string, error)
}

// withDefaults gives the zero fields that stand for a default (see Config) their
// DefaultConfig value, and resolves Auto for the embedder.
func (c Config) withDefaults(offline bool) Config {
	service.FillZeros(&c, DefaultConfig(), "TopK", "Pool", "Depth", "MaxNeighbors", "RRFK", "Weights",
		"GraphRanking", "EntityTopK", "EntityMargin", "CommunityTopK", "PassageSeedWeight", "Damping", "DriftFollowUps")
	if c.Weights.Dense == Auto {
		c.Weights.Dense = 1
		if offline {
			c.Weights.Dense = 0
		}
	}
	if c.EntityMinSim == 0 || c.EntityMinSim == Auto {
		c.EntityMinSim = 0.3
		if offline {
			c.EntityMinSim = NoEmbeddingLinks
		}
	}
	return c
}

// Validate names the flag of every invalid retrieval value.
func (c Config) Validate() error {
	var p service.Problems
	service.AtLeast(&p, "-top-k", c.TopK, 1)
	service.AtLeast(&p, "-pool", c.Pool, 1)
	service.AtLeast(&p, "-traverse-depth", c.Depth, 1)
	service.AtLeast(&p, "-max-neighbors", c.MaxNeighbors, 1)
	service.Positive(&p, "-rrf-k", c.RRFK)
	if c.Weights.Dense != Auto {
		service.AtLeast(&p, "-weight-dense", c.Weights.Dense, 0)
	}
	service.AtLeast(&p, "-weight-lexical", c.Weights.Lexical, 0)
	service.AtLeast(&p, "-weight-graph", c.Weights.Graph, 0)
	service.AtLeast(&p, "-weight-subject", c.Weights.Subject, 0)
	if c.Weights == (Weights{}) {
		p.Add("-weight-lexical", "every list weighs 0 (-weight-dense, -weight-lexical, -weight-graph, -weight-subject): at least one must be positive")
	}
	service.OneOf(&p, "-graph-ranking", c.GraphRanking, RankPPR, RankPath)
	service.AtLeast(&p, "-entity-top-k", c.EntityTopK, 1)
	if c.EntityMinSim != Auto && (c.EntityMinSim <= 0 || c.EntityMinSim > 1) {
		p.Add("-entity-min-similarity", "must be -1 (automatic) or in (0, 1], got %v", c.EntityMinSim)
	}
	if c.EntityMargin <= 0 || c.EntityMargin > 1 {
		p.Add("-entity-margin", "must be in (0, 1], got %v", c.EntityMargin)
	}
	service.AtLeast(&p, "-community-top-k", c.CommunityTopK, 1)
	service.AtLeast(&p, "-map-top-k", c.MapTopK, 0)
	service.WithinOpen(&p, "-ppr-damping", c.Damping, 0, 1)
	service.AtLeast(&p, "-passage-seeds", c.PassageSeeds, 0)
	service.Positive(&p, "-passage-seed-weight", c.PassageSeedWeight)
	service.AtLeast(&p, "-subject-passages", c.SubjectPassages, 0)
	if c.DriftFollowUps < 1 || c.DriftFollowUps > MaxDriftFollowUps {
		p.Add("-drift-follow-ups", "must be in 1..%d, got %d", MaxDriftFollowUps, c.DriftFollowUps)
	}
	return p.Err()
}

// RegisterFlags adds the query engine's retrieval flags with the current values as
// defaults (ask.Config adds the answering ones).
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.IntVar(&c.TopK, "top-k", c.TopK, "chunks returned by local search")
	fs.IntVar(&c.Pool, "pool", c.Pool, "candidates taken from each ranked list before fusion")
	fs.IntVar(&c.Depth, "traverse-depth", c.Depth, "graph traversal hops")
	fs.IntVar(&c.MaxNeighbors, "max-neighbors", c.MaxNeighbors, "entities reached by traversal")
	fs.Float64Var(&c.RRFK, "rrf-k", c.RRFK, "Reciprocal Rank Fusion constant k")
	fs.Float64Var(&c.Weights.Dense, "weight-dense", c.Weights.Dense, "RRF weight of the dense list (-1 = 1 with an embedding model, 0 with the offline embedder)")
	fs.Float64Var(&c.Weights.Lexical, "weight-lexical", c.Weights.Lexical, "RRF weight of the BM25 list")
	fs.Float64Var(&c.Weights.Graph, "weight-graph", c.Weights.Graph, "RRF weight of the graph list")
	fs.Float64Var(&c.Weights.Subject, "weight-subject", c.Weights.Subject, "RRF weight of the subject list (passages about the entities the question names or the best passages mention)")
	fs.IntVar(&c.SubjectPassages, "subject-passages", c.SubjectPassages, "best dense/lexical passages whose mentioned entities' own passages join the subject list (0 = only the question's entities)")
	fs.BoolVar(&c.ReverseHops, "reverse-hops", c.ReverseHops, "subject list: also hop to the passage that mentions a best passage's subject and matches the rest of the question")
	fs.BoolVar(&c.MentionHops, "mention-hops", c.MentionHops, "subject list: also hop from each entity a best passage mentions to the other passage that mentions it and matches the rest of the question (multi-hop corpora; ADR 0075)")
	fs.BoolVar(&c.WalkCarriesText, "walk-carries-text", c.WalkCarriesText, "with an embedding model: seed the graph walk with every dense/lexical passage by its score and the entity nearest the question, and let the walk and subject lists rank what the text lists are not confident of (ADR 0074)")
	fs.StringVar(&c.GraphRanking, "graph-ranking", c.GraphRanking, "graph list ranking: ppr (personalized PageRank) or path (hops, then PageRank)")
	fs.IntVar(&c.EntityTopK, "entity-top-k", c.EntityTopK, "entities linked by embedding similarity")
	fs.Float64Var(&c.EntityMargin, "entity-margin", c.EntityMargin, "embedding links kept only within this cosine of the best one (1 = no margin)")
	fs.Float64Var(&c.EntityMinSim, "entity-min-similarity", c.EntityMinSim, "minimum cosine similarity of an embedding link (-1 = 0.3 with an embedding model, 1 = none with the offline embedder: names only)")
	fs.IntVar(&c.CommunityTopK, "community-top-k", c.CommunityTopK, "community reports in the local context")
	fs.IntVar(&c.MapTopK, "map-top-k", c.MapTopK, "communities in a global search's map phase (0 = all at the level, pruned)")
	fs.IntVar(&c.PassageSeeds, "passage-seeds", c.PassageSeeds, "best dense/lexical passages whose document entity also seeds the graph walk (0 = off)")
	fs.Float64Var(&c.PassageSeedWeight, "passage-seed-weight", c.PassageSeedWeight, "walk seed weight of the best passage's document entity (divided by rank)")
	fs.IntVar(&c.DriftFollowUps, "drift-follow-ups", c.DriftFollowUps, fmt.Sprintf("follow-up questions of a drift search, each a local search of its own (1..%d)", MaxDriftFollowUps))
	fs.Float64Var(&c.Damping, "ppr-damping", c.Damping, "personalized PageRank damping of the graph walk")
}
