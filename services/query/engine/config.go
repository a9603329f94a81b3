package engine

import (
	"flag"
	"log/slog"

	"github.com/graphrag/graphrag/pkg/llm"
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

// Config tunes retrieval and answering. Defaults are documented in docs/configuration.md.
type Config struct {
	TopK         int     // chunks returned
	Pool         int     // candidates taken from each list before fusion
	Depth        int     // graph traversal hops
	MaxNeighbors int     // entities reached by traversal
	RRFK         float64 // RRF constant
	Weights      Weights // per-list RRF weights
	GraphRanking string  // RankPPR or RankPath
	EntityTopK   int     // entities linked by embedding similarity
	EntityMinSim float64 // minimum cosine similarity for an embedding link
	// EntityMargin keeps only embedding links within this much of the best one: models
	// spread similarities differently (E5's unrelated pairs score 0.7), so an absolute
	// minimum alone does not carry from one model to the next.
	EntityMargin   float64
	CommunityTopK  int // community reports in local context
	MapTopK        int // communities mapped in global search (0 = all at the level, pruned)
	MapConcurrency int // parallel map calls
	MapMaxTokens   int
	// GlobalTokenBudget bounds the prompt tokens one global question sends to the model
	// (its map calls and its reduce call); negative: no bound.
	GlobalTokenBudget int
	ReduceTokens      int
	AnswerTokens      int
	Damping           float64 // personalized PageRank damping
	// PassageSeeds is how many of the best dense/lexical passages seed the graph walk
	// through their document entity, with weight PassageSeedWeight / rank.
	PassageSeeds      int
	PassageSeedWeight float64
	// SubjectPassages is how many of the best dense/lexical passages contribute the
	// entities they mention to the subject list.
	SubjectPassages int
	// ReverseHops adds to the subject list, after the forward hops, the passage that
	// mentions a first-hop passage's subject and best matches what the first hop left
	// unexplained in the question.
	ReverseHops bool
}

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
// similarity ≥ 0.3, 3 communities, 5 for map-reduce, 300/500 map/reduce tokens).
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
		MapConcurrency: 4,
		MapMaxTokens:   300,
		// Mapping every report of a level of a 1,000-passage corpus sent 66k
		// tokens per question; docs/benchmarks.md (globalcost) has what the bound keeps.
		GlobalTokenBudget: 50_000,
		ReduceTokens:      500,
		AnswerTokens:      600,
		Damping:           0.5,

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
	LLM             *llm.Client // nil: extractive answers, heuristic classification
	Logger          *slog.Logger
}

func (c Config) withDefaults(offline bool) Config {
	d := DefaultConfig()
	if c.TopK <= 0 {
		c.TopK = d.TopK
	}
	if c.Pool <= 0 {
		c.Pool = d.Pool
	}
	if c.Depth <= 0 {
		c.Depth = d.Depth
	}
	if c.MaxNeighbors <= 0 {
		c.MaxNeighbors = d.MaxNeighbors
	}
	if c.RRFK <= 0 {
		c.RRFK = d.RRFK
	}
	if c.Weights == (Weights{}) {
		c.Weights = d.Weights
	}
	if c.Weights.Dense == Auto {
		c.Weights.Dense = 1
		if offline {
			c.Weights.Dense = 0
		}
	}
	if c.GraphRanking == "" {
		c.GraphRanking = d.GraphRanking
	}
	if c.EntityTopK <= 0 {
		c.EntityTopK = d.EntityTopK
	}
	if c.EntityMinSim == 0 || c.EntityMinSim == Auto {
		c.EntityMinSim = 0.3
		if offline {
			c.EntityMinSim = NoEmbeddingLinks
		}
	}
	if c.EntityMargin <= 0 {
		c.EntityMargin = d.EntityMargin
	}
	if c.CommunityTopK <= 0 {
		c.CommunityTopK = d.CommunityTopK
	}
	if c.MapTopK < 0 {
		c.MapTopK = d.MapTopK
	}
	if c.MapConcurrency <= 0 {
		c.MapConcurrency = d.MapConcurrency
	}
	if c.MapMaxTokens <= 0 {
		c.MapMaxTokens = d.MapMaxTokens
	}
	if c.ReduceTokens <= 0 {
		c.ReduceTokens = d.ReduceTokens
	}
	if c.GlobalTokenBudget == 0 {
		c.GlobalTokenBudget = d.GlobalTokenBudget
	}
	if c.AnswerTokens <= 0 {
		c.AnswerTokens = d.AnswerTokens
	}
	if c.PassageSeeds < 0 {
		c.PassageSeeds = 0
	}
	if c.SubjectPassages < 0 {
		c.SubjectPassages = 0
	}
	if c.PassageSeedWeight <= 0 {
		c.PassageSeedWeight = d.PassageSeedWeight
	}
	if c.Damping <= 0 || c.Damping >= 1 {
		c.Damping = d.Damping
	}
	return c
}

// RegisterFlags adds the query engine's flags with the current values as defaults.
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
	fs.StringVar(&c.GraphRanking, "graph-ranking", c.GraphRanking, "graph list ranking: ppr (personalized PageRank) or path (hops, then PageRank)")
	fs.IntVar(&c.EntityTopK, "entity-top-k", c.EntityTopK, "entities linked by embedding similarity")
	fs.Float64Var(&c.EntityMargin, "entity-margin", c.EntityMargin, "embedding links kept only within this cosine of the best one (1 = no margin)")
	fs.Float64Var(&c.EntityMinSim, "entity-min-similarity", c.EntityMinSim, "minimum cosine similarity of an embedding link (-1 = 0.3 with an embedding model, 1 = none with the offline embedder: names only)")
	fs.IntVar(&c.CommunityTopK, "community-top-k", c.CommunityTopK, "community reports in the local context")
	fs.IntVar(&c.MapTopK, "map-top-k", c.MapTopK, "communities in a global search's map phase (0 = all at the level, pruned)")
	fs.IntVar(&c.GlobalTokenBudget, "global-token-budget", c.GlobalTokenBudget, "prompt tokens a global question may send to the model, map and reduce calls together: the best-ranked communities that fit are mapped (-1 = no bound)")
	fs.IntVar(&c.MapConcurrency, "map-concurrency", c.MapConcurrency, "parallel map calls")
	fs.IntVar(&c.PassageSeeds, "passage-seeds", c.PassageSeeds, "best dense/lexical passages whose document entity also seeds the graph walk (0 = off)")
	fs.Float64Var(&c.PassageSeedWeight, "passage-seed-weight", c.PassageSeedWeight, "walk seed weight of the best passage's document entity (divided by rank)")
	fs.Float64Var(&c.Damping, "ppr-damping", c.Damping, "personalized PageRank damping of the graph walk")
}
