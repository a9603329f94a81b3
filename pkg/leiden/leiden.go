package leiden

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/graphrag/graphrag/pkg/wgraph"
)

// Level is one partition of the hierarchy.
type Level struct {
	// Membership maps every original node to its community id at this level.
	// Ids run 0..Count-1, numbered by the smallest member node.
	Membership []int
	// Parent maps a community id at this level to its community id one level
	// up; it is all -1 at the top level.
	Parent []int
	// Count is the number of communities.
	Count int
}

// Result is the hierarchy found by Run, finest level first.
type Result struct {
	// Levels holds at least one level; Levels[len-1] is the final partition.
	Levels []Level
	// Modularity of each level on the input graph, at the configured
	// resolution for the Modularity quality and at resolution 1 for CPM.
	Modularity []float64
	// Iterations is the number of full Leiden iterations run.
	Iterations int
}

// pcgStream is the fixed second PCG word; only Seed varies the stream.
const pcgStream = 0x9e3779b97f4a7c15

// Run partitions g into communities and returns their hierarchy, finest level
// first; the last level is the partition that maximises the quality. Errors
// are ErrInvalidOption for bad options and ctx.Err() (wrapped) if ctx ends
// first; the context is checked between aggregation passes.
func Run(ctx context.Context, g *wgraph.Graph, opts ...Option) (Result, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o.apply(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return Result{}, fmt.Errorf("running leiden: %w", err)
	}
	n := g.N()
	if n == 0 {
		return Result{
			Levels:     []Level{{Membership: []int{}, Parent: []int{}, Count: 0}},
			Modularity: []float64{0},
		}, nil
	}

	s := &solver{
		cfg: cfg,
		rng: rand.New(rand.NewPCG(cfg.seed, pcgStream)),
	}
	// Both qualities are handled as H = Σ_ij (A_ij − r·w_i·w_j) δ(c_i,c_j):
	// modularity with w = degree and r = γ/2m, CPM with w = node size and r = γ.
	weights := make([]float64, n)
	r := cfg.resolution
	for u := range n {
		if cfg.quality == Modularity {
			weights[u] = g.Degree(u)
		} else {
			weights[u] = g.NodeWeight(u)
		}
	}
	if cfg.quality == Modularity {
		if m := g.TotalWeight(); m > 0 {
			r = cfg.resolution / (2 * m)
		}
	}

	g0 := fromWGraph(g)
	part, err := initialPartition(cfg.initial, n)
	if err != nil {
		return Result{}, fmt.Errorf("running leiden: %w", err)
	}
	maxIter := cfg.maxIterations
	if maxIter == 0 {
		maxIter = iterationCap
	}
	var chain [][]int32
	iterations := 0
	for iterations < maxIter {
		if err := ctx.Err(); err != nil {
			return Result{}, fmt.Errorf("running leiden iteration %d: %w", iterations+1, err)
		}
		var gain float64
		chain, part, gain, err = s.iterate(ctx, g0, weights, r, part)
		if err != nil {
			return Result{}, err
		}
		iterations++
		// gain is 0 exactly when no node moved; gain/m is the rise in modularity.
		if gain <= 0 || (g.TotalWeight() > 0 && gain/g.TotalWeight() < cfg.tolerance) {
			break
		}
	}

	levels, err := s.buildLevels(g0, chain, cfg.maxLevels)
	if err != nil {
		return Result{}, fmt.Errorf("building leiden hierarchy: %w", err)
	}
	res := Result{Levels: levels, Iterations: iterations}
	gamma := cfg.resolution
	if cfg.quality == CPM {
		gamma = 1
	}
	for _, l := range levels {
		res.Modularity = append(res.Modularity, wgraph.Modularity(g, l.Membership, gamma))
	}
	return res, nil
}

// initialPartition is the partition the first iteration starts from: singletons,
// or the initial membership with its ids renumbered below n (iterate compacts them
// further) and a community of its own for every node with a negative id.
func initialPartition(initial []int, n int) ([]int32, error) {
	part := make([]int32, n)
	if initial == nil {
		for u := range part {
			part[u] = int32(u)
		}
		return part, nil
	}
	if len(initial) != n {
		return nil, fmt.Errorf("initial membership has %d nodes, the graph %d: %w", len(initial), n, ErrInvalidOption)
	}
	ids := make(map[int]int32, n)
	for u, c := range initial {
		if c < 0 {
			c = -1 - u // distinct from every other node's, seeded or not
		}
		id, ok := ids[c]
		if !ok {
			id = int32(len(ids))
			ids[c] = id
		}
		part[u] = id
	}
	return part, nil
}

type solver struct {
	cfg    config
	rng    *rand.Rand
	buf    buffers
	levels [2]aggLevel // aggregate graphs, built into each in turn
	chain  [][]int32   // reused by every iteration; the last one's is returned
}

// aggLevel is one aggregate graph with its node weights and partition.
type aggLevel struct {
	g    graph
	w    []float64
	part []int32
}

// buffers are scratch slices reused by every pass and iteration; aggregate
// graphs are never larger than the input, so the first allocation serves all.
type buffers struct {
	clusterW, edgeW, ext, commW, gains        []float64
	clusterN, unused, order, refined, next    []int32
	neigh, cands, members, stack, part, toAgg []int32
	final                                     []int32
	start, fill                               []int
	flag                                      []bool
}

// iterate runs one full Leiden iteration from the partition part0 of g0. It
// returns the chain of nested refined partitions (on original nodes, finest
// first, ending with the final partition), the final partition, and the sum of
// the gains of all moves (0 if no node moved). The slices returned are
// buffers that the next call overwrites.
func (s *solver) iterate(ctx context.Context, g0 *graph, w0 []float64, r float64, part0 []int32) ([][]int32, []int32, float64, error) {
	n := g0.n()
	g, w := g0, w0
	part := scratch(&s.buf.part, n)
	copy(part, part0)
	s.compact(part, n)
	toAgg := scratch(&s.buf.toAgg, n) // original node -> node of the current aggregate graph
	for u := range toAgg {
		toAgg[u] = int32(u)
	}
	chain := s.chain[:0]
	var total float64
	for pass := 0; ; pass++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, 0, fmt.Errorf("running leiden pass %d: %w", pass+1, err)
		}
		total += s.moveNodes(g, w, r, part)
		if k := s.compact(part, g.n()); k == g.n() {
			break // every aggregate node is its own community: done
		}
		refined, rk := s.refine(g, w, r, part)
		if rk == g.n() {
			// The refinement merged nothing; aggregate on the connected pieces of
			// the partition instead so that the next pass works on a smaller graph.
			if rk = s.split(g, part, refined); rk == g.n() {
				break // cannot happen with positive node weights; stop rather than spin
			}
		}
		for u := range toAgg {
			toAgg[u] = refined[toAgg[u]]
		}
		chain = appendCopy(chain, toAgg)
		next := &s.levels[pass%2] // g is the input or the other level
		s.aggregate(g, refined, rk, &next.g)
		next.w = scratch(&next.w, rk)
		next.part = scratch(&next.part, rk)
		for v, c := range refined {
			next.w[c] += w[v]
			next.part[c] = part[v] // refined subsets lie inside one community
		}
		g, w, part = &next.g, next.w, next.part
	}
	final := scratch(&s.buf.final, n)
	for u := range final {
		final[u] = part[toAgg[u]]
	}
	k := s.compact(final, n)
	if len(chain) == 0 || countOf(chain[len(chain)-1]) != k {
		chain = appendCopy(chain, final)
	}
	s.chain = chain
	return chain, final, total, nil
}

// appendCopy appends a copy of m to chain, reusing the slice beyond its end.
func appendCopy(chain [][]int32, m []int32) [][]int32 {
	if len(chain) < cap(chain) {
		chain = chain[:len(chain)+1]
		chain[len(chain)-1] = append(chain[len(chain)-1][:0], m...)
		return chain
	}
	return append(chain, slices.Clone(m))
}

// buildLevels turns the nested chain into levels: it drops repeated levels,
// caps the count at maxLevels, splits any disconnected community (the check
// that the algorithm's guarantee holds; it also numbers ids by smallest node)
// and links every community to its parent.
func (s *solver) buildLevels(g *graph, chain [][]int32, maxLevels int) ([]Level, error) {
	// Nested partitions with equal counts are equal: keep the first of each.
	var kept [][]int32
	for _, m := range chain {
		if len(kept) == 0 || countOf(kept[len(kept)-1]) != countOf(m) {
			kept = append(kept, m)
		}
	}
	kept = capLevels(kept, maxLevels)
	levels := make([]Level, 0, len(kept))
	pieces := make([]int32, g.n())
	for _, m := range kept {
		k := s.split(g, m, pieces)
		if k != countOf(m) {
			// A community was disconnected, so the counts that chose the levels
			// were wrong: choose again from the repaired chain.
			return s.buildLevels(g, s.splitAll(g, chain), maxLevels)
		}
		membership := make([]int, len(pieces))
		for u, c := range pieces {
			membership[u] = int(c)
		}
		levels = append(levels, Level{Membership: membership, Count: k})
	}
	return levels, linkParents(levels)
}

// splitAll replaces every level of chain by its connected pieces.
func (s *solver) splitAll(g *graph, chain [][]int32) [][]int32 {
	out := make([][]int32, len(chain))
	for i, m := range chain {
		out[i] = make([]int32, len(m))
		s.split(g, m, out[i])
	}
	return out
}

// capLevels keeps at most maxLevels of levels: the finest, the coarsest and
// others picked evenly in between.
func capLevels[T any](levels []T, maxLevels int) []T {
	if len(levels) <= maxLevels {
		return levels
	}
	kept := make([]T, 0, maxLevels)
	last := len(levels) - 1
	for i := range maxLevels {
		idx := last
		if maxLevels > 1 {
			idx = int(math.Round(float64(i) * float64(last) / float64(maxLevels-1)))
		}
		kept = append(kept, levels[idx])
	}
	return kept
}

// linkParents sets every level's Parent from the level above.
func linkParents(levels []Level) error {
	for l := range levels {
		parent := make([]int, levels[l].Count)
		for i := range parent {
			parent[i] = -1
		}
		if l+1 < len(levels) {
			up := levels[l+1].Membership
			for u, c := range levels[l].Membership {
				if parent[c] < 0 {
					parent[c] = up[u]
				} else if parent[c] != up[u] {
					return fmt.Errorf("community %d at level %d spans parents %d and %d: %w",
						c, l, parent[c], up[u], errNotNested)
				}
			}
		}
		levels[l].Parent = parent
	}
	return nil
}
