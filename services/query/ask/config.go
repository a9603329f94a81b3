package ask

import (
	"flag"

	"github.com/graphrag/graphrag/pkg/service"
)

// Config bounds what the model is asked for when it answers: the tokens of each answer
// and the map-reduce of a global question; engine.Config tunes retrieval. The flags'
// defaults are documented in docs/configuration.md. New gives a zero field its
// DefaultConfig value; Validate rejects what New would not run with.
type Config struct {
	AnswerTokens   int // completion tokens of a local answer
	MapMaxTokens   int // completion tokens of a global search's partial answer
	MapConcurrency int // parallel map calls
	// GlobalTokenBudget bounds the prompt tokens one global question sends to the model
	// (its map calls and its reduce call); NoTokenBudget: no bound.
	GlobalTokenBudget int
	ReduceTokens      int // completion tokens of a global answer
}

// NoTokenBudget as GlobalTokenBudget leaves global questions unbounded.
const NoTokenBudget = -1

// DefaultConfig holds the seeds' limits: 600 tokens a local answer, 300/500 map/reduce
// tokens, 4 parallel map calls, and a global question bounded at 50,000 prompt tokens.
func DefaultConfig() Config {
	return Config{
		AnswerTokens:   600,
		MapMaxTokens:   300,
		MapConcurrency: 4,
		// Mapping every report of a level of a 1,000-passage corpus sent 66k
		// tokens per question; docs/benchmarks.md (globalcost) has what the bound keeps.
		GlobalTokenBudget: 50_000,
		ReduceTokens:      500,
	}
}

// withDefaults gives the zero fields their DefaultConfig value.
func (c Config) withDefaults() Config {
	service.FillZeros(&c, DefaultConfig(), "AnswerTokens", "MapMaxTokens", "MapConcurrency",
		"GlobalTokenBudget", "ReduceTokens")
	return c
}

// Validate names the flag of every invalid answering value (a field without a flag by
// its Go name).
func (c Config) Validate() error {
	var p service.Problems
	service.AtLeast(&p, "-map-concurrency", c.MapConcurrency, 1)
	if c.GlobalTokenBudget != NoTokenBudget && c.GlobalTokenBudget < 1 {
		p.Add("-global-token-budget", "must be positive or -1 (no bound), got %d", c.GlobalTokenBudget)
	}
	service.AtLeast(&p, "MapMaxTokens", c.MapMaxTokens, 1)
	service.AtLeast(&p, "ReduceTokens", c.ReduceTokens, 1)
	service.AtLeast(&p, "AnswerTokens", c.AnswerTokens, 1)
	return p.Err()
}

// RegisterFlags adds the answering flags with the current values as defaults. They
// belong to the query engine's group of the settings file and docs/configuration.md.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.IntVar(&c.GlobalTokenBudget, "global-token-budget", c.GlobalTokenBudget, "prompt tokens a global question may send to the model, map and reduce calls together: the best-ranked communities that fit are mapped (-1 = no bound)")
	fs.IntVar(&c.MapConcurrency, "map-concurrency", c.MapConcurrency, "parallel map calls")
}
