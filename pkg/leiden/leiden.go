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

	part := make([]int, n)
	for u := range part {
		part[u] = u
	}
	maxIter := cfg.maxIterations
	if maxIter == 0 {
		maxIter = iterationCap
	}
	var chain [][]int
	iterations := 0
	for iterations < maxIter {
		if err := ctx.Err(); err != nil {
			return Result{}, fmt.Errorf("running leiden iteration %d: %w", iterations+1, err)
		}
		var gain float64
		var err error
		chain, part, gain, err = s.iterate(ctx, g, weights, r, part)
		if err != nil {
			return Result{}, err
		}
		iterations++
		// gain is 0 exactly when no node moved; gain/m is the rise in modularity.
		if gain <= 0 || (g.TotalWeight() > 0 && gain/g.TotalWeight() < cfg.tolerance) {
			break
		}
	}

	levels, err := buildLevels(g, chain, cfg.maxLevels)
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

type solver struct {
	cfg config
	rng *rand.Rand
	buf buffers
}

// buffers are scratch slices reused by every pass and iteration; aggregate
// graphs are never larger than the input, so the first allocation serves all.
type buffers struct {
	clusterW, edgeW, ext, commW []float64
	clusterN, unused, order     []int
	refined, next               []int
	flag, seen                  []bool
}

// scratch returns (*buf)[:n] zeroed, growing *buf when it is too small.
func scratch[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n)
	}
	out := (*buf)[:n]
	clear(out)
	return out
}

// perm is rand.Perm(n) into a reused buffer; it draws the same numbers.
func (s *solver) perm(n int) []int {
	p := scratch(&s.buf.order, n)
	for i := range p {
		p[i] = i
	}
	s.rng.Shuffle(n, func(i, j int) { p[i], p[j] = p[j], p[i] })
	return p
}

// iterate runs one full Leiden iteration from the partition part of g. It
// returns the chain of nested refined partitions (on original nodes, finest
// first, ending with the final partition), the final partition, and the sum of
// the gains of all moves (0 if no node moved).
func (s *solver) iterate(ctx context.Context, g0 *wgraph.Graph, w0 []float64, r float64, part0 []int) ([][]int, []int, float64, error) {
	n := g0.N()
	g, w := g0, w0
	part, _ := s.compact(part0, n)
	toAgg := make([]int, n) // original node -> node of the current aggregate graph
	for u := range toAgg {
		toAgg[u] = u
	}
	var chain [][]int
	var total float64
	for pass := 0; ; pass++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, 0, fmt.Errorf("running leiden pass %d: %w", pass+1, err)
		}
		total += s.moveNodes(g, w, r, part)
		var k int
		part, k = s.compact(part, g.N())
		if k == g.N() {
			break // every aggregate node is its own community: done
		}
		refined, rk := s.refine(g, w, r, part)
		if rk == g.N() {
			// The refinement merged nothing; aggregate on the connected pieces of
			// the partition instead so that the next pass works on a smaller graph.
			var err error
			refined, rk, err = wgraph.SplitDisconnected(g, part)
			if err != nil {
				return nil, nil, 0, fmt.Errorf("splitting partition at pass %d: %w", pass+1, err)
			}
			if rk == g.N() {
				break // cannot happen with positive node weights; stop rather than spin
			}
		}
		for u := range toAgg {
			toAgg[u] = refined[toAgg[u]]
		}
		chain = append(chain, slices.Clone(toAgg))

		agg, err := wgraph.Aggregate(g, refined, rk)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("aggregating at pass %d: %w", pass+1, err)
		}
		aggW := make([]float64, rk)
		aggPart := make([]int, rk)
		for v, c := range refined {
			aggW[c] += w[v]
			aggPart[c] = part[v] // refined subsets lie inside one community
		}
		g, w, part = agg, aggW, aggPart
	}
	final := make([]int, n)
	for u := range final {
		final[u] = part[toAgg[u]]
	}
	final, k := s.compact(final, n)
	if len(chain) == 0 || countOf(chain[len(chain)-1]) != k {
		chain = append(chain, final)
	}
	return chain, final, total, nil
}

// moveNodes is the queue-based fast local moving of the paper: every node is
// visited once in random order and moved to the neighbouring community (or an
// empty one) with the largest strictly positive gain; when a node moves, its
// neighbours outside the target community are queued again. part holds ids
// below g.N() and is updated in place. It returns the summed gain of the
// moves, which is positive iff a node moved.
func (s *solver) moveNodes(g *wgraph.Graph, w []float64, r float64, part []int) float64 {
	n := g.N()
	clusterW := scratch(&s.buf.clusterW, n)
	clusterN := scratch(&s.buf.clusterN, n)
	for u, c := range part {
		clusterW[c] += w[u]
		clusterN[c]++
	}
	unused := scratch(&s.buf.unused, n)[:0]
	for c := n - 1; c >= 0; c-- {
		if clusterN[c] == 0 {
			unused = append(unused, c)
		}
	}
	queue := s.perm(n) // a ring buffer holding every unstable node once
	head, size := 0, n
	stable := scratch(&s.buf.flag, n)
	edgeW := scratch(&s.buf.edgeW, n)
	seen := scratch(&s.buf.seen, n)
	neigh := make([]int, 0, 64)
	var gained float64
	for size > 0 {
		j := queue[head]
		head = (head + 1) % n
		size--
		stable[j] = true

		cur := part[j]
		clusterW[cur] -= w[j]
		clusterN[cur]--
		if clusterN[cur] == 0 {
			unused = append(unused, cur)
		}
		// An empty community is always a candidate (staying alone).
		empty := unused[len(unused)-1]
		neigh = append(neigh[:0], empty)
		seen[empty] = true
		nb, wt := g.Neighbors(j)
		for k, v := range nb {
			c := part[v]
			if !seen[c] {
				seen[c] = true
				neigh = append(neigh, c)
			}
			edgeW[c] += wt[k]
		}
		best := cur
		curGain := edgeW[cur] - float64(w[j]*clusterW[cur]*r)
		bestGain := curGain
		for _, c := range neigh {
			if gain := edgeW[c] - float64(w[j]*clusterW[c]*r); gain > bestGain {
				best, bestGain = c, gain
			}
		}
		for _, c := range neigh {
			edgeW[c] = 0
			seen[c] = false
		}
		part[j] = best
		clusterW[best] += w[j]
		clusterN[best]++
		if best == unused[len(unused)-1] && clusterN[best] == 1 {
			unused = unused[:len(unused)-1]
		}
		if best != cur {
			gained += bestGain - curGain
			for _, v := range nb {
				if stable[v] && part[v] != best {
					stable[v] = false
					queue[(head+size)%n] = int(v)
					size++
				}
			}
		}
	}
	return gained
}

// refine splits every community of part into subsets by the randomised merge
// of the paper: starting from singletons, each node that is still a singleton
// and well connected to its community joins a well-connected subset of the
// same community, chosen with probability ∝ exp(gain/θ) among gains ≥ 0.
// Subsets only grow along edges, so each is connected. It returns the refined
// membership (ids numbered by smallest node) and the subset count.
func (s *solver) refine(g *wgraph.Graph, w []float64, r float64, part []int) ([]int, int) {
	n := g.N()
	refined := scratch(&s.buf.refined, n)
	clusterW := scratch(&s.buf.clusterW, n) // weight of each subset
	ext := scratch(&s.buf.ext, n)           // weight from each subset to the rest of its community
	commW := scratch(&s.buf.commW, n)       // weight of each community of part
	for u := range n {
		refined[u] = u
		clusterW[u] = w[u]
		commW[part[u]] += w[u]
		nb, wt := g.Neighbors(u)
		for k, v := range nb {
			if part[v] == part[u] {
				ext[u] += wt[k]
			}
		}
	}
	nonSingleton := scratch(&s.buf.flag, n)
	edgeW := scratch(&s.buf.edgeW, n)
	seen := scratch(&s.buf.seen, n)
	neigh := make([]int, 0, 64)
	gains := make([]float64, 0, 64)
	cands := make([]int, 0, 64)
	theta := s.cfg.randomness
	for _, j := range s.perm(n) {
		c := part[j]
		total := commW[c]
		if nonSingleton[j] || ext[j] < clusterW[j]*(total-clusterW[j])*r {
			continue
		}
		clusterW[j], ext[j] = 0, 0
		neigh = append(neigh[:0], j)
		seen[j] = true
		nb, wt := g.Neighbors(j)
		for k, v := range nb {
			if part[v] != c {
				continue
			}
			sub := refined[v]
			if !seen[sub] {
				seen[sub] = true
				neigh = append(neigh, sub)
			}
			edgeW[sub] += wt[k]
		}
		best, maxGain := j, 0.0
		gains, cands = gains[:0], cands[:0]
		for _, sub := range neigh {
			if ext[sub] >= clusterW[sub]*(total-clusterW[sub])*r {
				gain := edgeW[sub] - float64(w[j]*clusterW[sub]*r)
				if gain > maxGain {
					best, maxGain = sub, gain
				}
				if gain >= 0 {
					cands = append(cands, sub)
					gains = append(gains, gain)
				}
			}
			edgeW[sub] = 0
			seen[sub] = false
		}
		chosen := best
		if theta > 0 && len(cands) > 1 {
			chosen = pick(s.rng, cands, gains, maxGain, theta)
		}
		clusterW[chosen] += w[j]
		for k, v := range nb {
			if part[v] != c {
				continue
			}
			if refined[v] == chosen {
				ext[chosen] -= wt[k]
			} else {
				ext[chosen] += wt[k]
			}
		}
		if chosen != j {
			refined[j] = chosen
			nonSingleton[chosen] = true
		}
	}
	return s.compact(refined, n)
}

// pick draws a candidate with probability ∝ exp((gain−maxGain)/θ); shifting by
// the largest gain keeps exp finite without changing the distribution.
// Products are wrapped in float64() conversions here and in the gain formulas
// because the Go spec lets a compiler fuse x*y+z into an FMA on some
// platforms (arm64, amd64 v3), which would change rounding and so the result.
func pick(rng *rand.Rand, cands []int, gains []float64, maxGain, theta float64) int {
	var sum float64
	for i, gn := range gains {
		gains[i] = exp((gn - maxGain) / theta)
		sum += gains[i]
	}
	x := float64(rng.Float64() * sum)
	for i, p := range gains {
		x -= p
		if x < 0 {
			return cands[i]
		}
	}
	return cands[len(cands)-1] // x landed on sum through rounding
}

// compact renumbers ids (all below bound) to 0..k-1 in order of first
// appearance, i.e. of each community's smallest node.
func (s *solver) compact(ids []int, bound int) ([]int, int) {
	next := scratch(&s.buf.next, bound)
	for i := range next {
		next[i] = -1
	}
	out := make([]int, len(ids))
	k := 0
	for u, c := range ids {
		if next[c] < 0 {
			next[c] = k
			k++
		}
		out[u] = next[c]
	}
	return out, k
}

func countOf(membership []int) int {
	k := 0
	for _, c := range membership {
		k = max(k, c+1)
	}
	return k
}

// buildLevels turns the nested chain into levels: it splits any disconnected
// community (which also numbers ids by smallest node), drops repeated levels,
// caps the count at maxLevels and links every community to its parent.
func buildLevels(g *wgraph.Graph, chain [][]int, maxLevels int) ([]Level, error) {
	var levels []Level
	for _, m := range chain {
		split, k, err := wgraph.SplitDisconnected(g, m)
		if err != nil {
			return nil, err
		}
		// Nested partitions with equal counts are equal.
		if len(levels) > 0 && levels[len(levels)-1].Count == k {
			continue
		}
		levels = append(levels, Level{Membership: split, Count: k})
	}
	if len(levels) > maxLevels {
		kept := make([]Level, 0, maxLevels)
		last := len(levels) - 1
		for i := range maxLevels {
			idx := last
			if maxLevels > 1 {
				idx = int(math.Round(float64(i) * float64(last) / float64(maxLevels-1)))
			}
			kept = append(kept, levels[idx])
		}
		levels = kept
	}
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
					return nil, fmt.Errorf("community %d at level %d spans parents %d and %d: %w",
						c, l, parent[c], up[u], errNotNested)
				}
			}
		}
		levels[l].Parent = parent
	}
	return levels, nil
}
