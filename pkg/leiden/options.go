package leiden

import (
	"errors"
	"fmt"
	"math"

	"github.com/graphrag/graphrag/pkg/errkind"
)

// ErrInvalidOption reports an option value out of its valid range.
var ErrInvalidOption = errkind.New(errkind.Invalid, "leiden: invalid option")

// Quality selects the quality function that is optimised.
type Quality int

const (
	// Modularity is Newman–Girvan modularity with a resolution γ.
	Modularity Quality = iota
	// CPM is the constant Potts model Σ_c [e_c − γ·n_c²/2], e_c the weight inside c and n_c
	// its size (sum of wgraph node weights). Its γ acts as a density threshold.
	CPM
)

func (q Quality) String() string {
	switch q {
	case Modularity:
		return "modularity"
	case CPM:
		return "cpm"
	default:
		return fmt.Sprintf("Quality(%d)", int(q))
	}
}

// Defaults of the options.
const (
	DefaultResolution = 1.0
	DefaultSeed       = 42
	DefaultMaxLevels  = 3
	// DefaultMaxIterations is 2, as in igraph and leidenalg: on the benchmark
	// graphs a third iteration adds at most 0.00025 of modularity (0.00014 on
	// 1M edges) for 25–35% more time (docs/adr/0018-leiden-defaults.md).
	DefaultMaxIterations = 2
	DefaultRandomness    = 0.01
	DefaultTolerance     = 0 // any improvement earns another iteration, up to the cap
	// iterationCap bounds "until stable" so that float noise can never loop forever.
	iterationCap = 64
)

type config struct {
	quality       Quality
	resolution    float64
	seed          uint64
	maxLevels     int
	maxIterations int
	randomness    float64
	tolerance     float64
	initial       []int // warm start; nil: singletons
}

func defaultConfig() config {
	return config{
		quality:       Modularity,
		resolution:    DefaultResolution,
		seed:          DefaultSeed,
		maxLevels:     DefaultMaxLevels,
		maxIterations: DefaultMaxIterations,
		randomness:    DefaultRandomness,
	}
}

func (c config) validate() error {
	switch {
	case c.quality != Modularity && c.quality != CPM:
		return fmt.Errorf("quality %v: %w", c.quality, ErrInvalidOption)
	case c.resolution < 0 || math.IsNaN(c.resolution) || math.IsInf(c.resolution, 0):
		return fmt.Errorf("resolution %v must be finite and >= 0: %w", c.resolution, ErrInvalidOption)
	case c.maxLevels < 1:
		return fmt.Errorf("max levels %d must be >= 1: %w", c.maxLevels, ErrInvalidOption)
	case c.maxIterations < 0:
		return fmt.Errorf("max iterations %d must be >= 0: %w", c.maxIterations, ErrInvalidOption)
	case c.randomness < 0 || math.IsNaN(c.randomness) || math.IsInf(c.randomness, 0):
		return fmt.Errorf("randomness %v must be finite and >= 0: %w", c.randomness, ErrInvalidOption)
	case c.tolerance < 0 || math.IsNaN(c.tolerance) || math.IsInf(c.tolerance, 0):
		return fmt.Errorf("tolerance %v must be finite and >= 0: %w", c.tolerance, ErrInvalidOption)
	}
	return nil
}

// Option configures Run.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithQuality selects the quality function (default Modularity).
func WithQuality(q Quality) Option { return optionFunc(func(c *config) { c.quality = q }) }

// WithResolution sets γ (default 1). Higher values give smaller communities.
func WithResolution(gamma float64) Option {
	return optionFunc(func(c *config) { c.resolution = gamma })
}

// WithSeed seeds the PCG generator (default 42); equal seeds give equal results.
func WithSeed(seed uint64) Option { return optionFunc(func(c *config) { c.seed = seed }) }

// WithMaxLevels caps the number of hierarchy levels returned (default 3). When
// the algorithm produces more, the finest and the coarsest are always kept and
// the others are picked evenly in between.
func WithMaxLevels(n int) Option { return optionFunc(func(c *config) { c.maxLevels = n }) }

// WithMaxIterations caps the number of full Leiden iterations (default 2);
// 0 iterates until one changes nothing (at most 64). Iterations also end
// early once one changes nothing.
func WithMaxIterations(n int) Option { return optionFunc(func(c *config) { c.maxIterations = n }) }

// WithRandomness sets θ of the refinement (default 0.01): a singleton joins a
// neighbouring subset with probability ∝ exp(ΔH/θ), ΔH in edge-weight units as
// in the authors' reference implementation. 0 makes the refinement greedy.
func WithRandomness(theta float64) Option {
	return optionFunc(func(c *config) { c.randomness = theta })
}

// errNotNested signals a broken internal invariant (levels must nest).
var errNotNested = errors.New("leiden: levels are not nested")

// WithTolerance ends the iterations once one raises quality by less than tol,
// measured as the summed gain of its moves divided by the total edge weight
// (for modularity exactly the rise in Q). The default 0 lets every
// iteration up to the cap run while any node moves; with WithMaxIterations(0),
// 1e-4 (as in Neo4j GDS) saves most iterations on large graphs.
func WithTolerance(tol float64) Option { return optionFunc(func(c *config) { c.tolerance = tol }) }

// WithInitialMembership starts the first iteration from the partition m (as
// leidenalg's initial_membership) instead of singletons: m[u] is the community of
// node u, any non-negative id, or a negative value for a node of its own (a node
// new since m was found). Regions where m is already locally optimal keep their
// communities, so re-running on a grown graph moves little of what did not
// change; the result's quality is never below m's. len(m) must equal the number
// of nodes; Run does not keep or modify m. The levels below the final partition
// are refinements found anew.
func WithInitialMembership(m []int) Option {
	return optionFunc(func(c *config) { c.initial = m })
}
