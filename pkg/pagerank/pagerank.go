package pagerank

import (
	"fmt"
	"math"

	"github.com/graphrag/graphrag/pkg/errkind"
	"github.com/graphrag/graphrag/pkg/wgraph"
)

var (
	// ErrInvalidOption reports an option value out of its valid range.
	ErrInvalidOption = errkind.New(errkind.Invalid, "pagerank: invalid option")
	// ErrInvalidSeeds reports a seed vector naming unknown nodes, holding
	// negative or non-finite weights, or summing to zero.
	ErrInvalidSeeds = errkind.New(errkind.Invalid, "pagerank: invalid seeds")
)

// Defaults of the options.
const (
	DefaultDamping       = 0.85
	DefaultMaxIterations = 20
	DefaultTolerance     = 1e-6
)

type config struct {
	damping       float64
	maxIterations int
	tolerance     float64
}

// Option configures Run and Personalized.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithDamping sets the probability of following an edge (default 0.85), in [0, 1).
func WithDamping(d float64) Option { return optionFunc(func(c *config) { c.damping = d }) }

// WithMaxIterations caps the power iterations (default 20), at least 1.
func WithMaxIterations(n int) Option { return optionFunc(func(c *config) { c.maxIterations = n }) }

// WithTolerance sets the L1 change under which iteration stops (default 1e-6).
func WithTolerance(tol float64) Option { return optionFunc(func(c *config) { c.tolerance = tol }) }

func newConfig(opts []Option) (config, error) {
	c := config{damping: DefaultDamping, maxIterations: DefaultMaxIterations, tolerance: DefaultTolerance}
	for _, o := range opts {
		o.apply(&c)
	}
	switch {
	case !(c.damping >= 0 && c.damping < 1):
		return c, fmt.Errorf("damping %v must be in [0,1): %w", c.damping, ErrInvalidOption)
	case c.maxIterations < 1:
		return c, fmt.Errorf("max iterations %d must be >= 1: %w", c.maxIterations, ErrInvalidOption)
	case !(c.tolerance >= 0) || math.IsInf(c.tolerance, 0):
		return c, fmt.Errorf("tolerance %v must be finite and >= 0: %w", c.tolerance, ErrInvalidOption)
	}
	return c, nil
}

// Result holds the scores and how the iteration ended.
type Result struct {
	// Scores holds one score per node; they sum to 1.
	Scores []float64
	// Iterations is the number of power iterations run.
	Iterations int
	// Converged reports whether the last L1 change fell below the tolerance.
	Converged bool
	// Delta is the L1 change of the last iteration.
	Delta float64
}

// Run computes weighted PageRank with uniform teleportation.
func Run(g *wgraph.Graph, opts ...Option) (Result, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return Result{}, fmt.Errorf("computing pagerank: %w", err)
	}
	n := g.N()
	teleport := make([]float64, n)
	for i := range teleport {
		teleport[i] = 1 / float64(n)
	}
	return iterate(g, teleport, cfg), nil
}

// Personalized computes Personalized PageRank: the walker teleports to the
// seed nodes in proportion to their weights, so mass concentrates near them.
func Personalized(g *wgraph.Graph, seeds map[int]float64, opts ...Option) (Result, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return Result{}, fmt.Errorf("computing personalized pagerank: %w", err)
	}
	n := g.N()
	teleport := make([]float64, n)
	var sum float64
	for u, w := range seeds {
		if u < 0 || u >= n {
			return Result{}, fmt.Errorf("seed node %d outside 0..%d: %w", u, n-1, ErrInvalidSeeds)
		}
		if !(w >= 0) || math.IsInf(w, 0) {
			return Result{}, fmt.Errorf("seed node %d has weight %v: %w", u, w, ErrInvalidSeeds)
		}
		teleport[u] = w
	}
	// Sum in node order: map order is random and float addition is not associative.
	for _, w := range teleport {
		sum += w
	}
	if sum == 0 {
		return Result{}, fmt.Errorf("seed weights sum to zero: %w", ErrInvalidSeeds)
	}
	for u := range teleport {
		teleport[u] /= sum
	}
	return iterate(g, teleport, cfg), nil
}

// iterate runs the power iteration x ← d·(Wx + dangling·p) + (1−d)·p from x = p.
func iterate(g *wgraph.Graph, p []float64, cfg config) Result {
	n := g.N()
	if n == 0 {
		return Result{Scores: []float64{}, Converged: true}
	}
	outW := make([]float64, n) // weight of the ways out of each node
	for u := range n {
		_, wt := g.Neighbors(u)
		s := g.SelfLoop(u)
		for _, w := range wt {
			s += w
		}
		outW[u] = s
	}
	x := make([]float64, n)
	copy(x, p)
	next := make([]float64, n)
	share := make([]float64, n)
	d := cfg.damping
	res := Result{}
	for res.Iterations < cfg.maxIterations {
		res.Iterations++
		var dangling float64
		for u := range n {
			if outW[u] == 0 {
				dangling += x[u]
				share[u] = 0
				continue
			}
			share[u] = x[u] / outW[u]
		}
		var delta float64
		for v := range n {
			nb, wt := g.Neighbors(v)
			// float64() forbids FMA fusion, keeping scores bit-identical across platforms.
			in := share[v] * g.SelfLoop(v)
			for k, u := range nb {
				in += float64(share[u] * wt[k])
			}
			next[v] = float64(d*(in+float64(dangling*p[v]))) + float64((1-d)*p[v])
			delta += math.Abs(next[v] - x[v])
		}
		x, next = next, x
		res.Delta = delta
		if delta < cfg.tolerance {
			res.Converged = true
			break
		}
	}
	// Renormalise against rounding drift so that scores sum to 1 exactly enough.
	var sum float64
	for _, v := range x {
		sum += v
	}
	for u := range x {
		x[u] /= sum
	}
	res.Scores = x
	return res
}
