package leiden

import "math/rand/v2"

// perm is rand.Perm(n) into a reused buffer; it draws the same numbers.
func (s *solver) perm(n int) []int32 {
	p := scratch(&s.buf.order, n)
	for i := range p {
		p[i] = int32(i)
	}
	s.rng.Shuffle(n, func(i, j int) { p[i], p[j] = p[j], p[i] })
	return p
}

// moveNodes is the queue-based fast local moving of the paper: every node is
// visited once in random order and moved to the neighbouring community (or an
// empty one) with the largest strictly positive gain; when a node moves, its
// neighbours outside the target community are queued again. part holds ids
// below g.n() and is updated in place. It returns the summed gain of the
// moves, which is positive iff a node moved.
func (s *solver) moveNodes(g *graph, w []float64, r float64, part []int32) float64 {
	n := g.n()
	clusterW := scratch(&s.buf.clusterW, n)
	clusterN := scratch(&s.buf.clusterN, n)
	for u, c := range part {
		clusterW[c] += w[u]
		clusterN[c]++
	}
	unused := scratch(&s.buf.unused, n)[:0]
	for c := int32(n - 1); c >= 0; c-- {
		if clusterN[c] == 0 {
			unused = append(unused, c)
		}
	}
	queue := s.perm(n) // a ring buffer holding every unstable node once
	head, size := 0, n
	stable := scratch(&s.buf.flag, n)
	edgeW := scratch(&s.buf.edgeW, n)
	neigh := s.buf.neigh[:0]
	var gained float64
	for size > 0 {
		j := queue[head]
		if head++; head == n {
			head = 0
		}
		size--
		stable[j] = true

		cur, wj := part[j], w[j]
		clusterW[cur] -= wj
		if clusterN[cur]--; clusterN[cur] == 0 {
			unused = append(unused, cur)
		}
		// An empty community is always a candidate (staying alone). No
		// neighbour is in it, and edge weights are > 0, so edgeW[c] == 0 means
		// that c has not been met yet.
		empty := unused[len(unused)-1]
		neigh = append(neigh[:0], empty)
		nb, wt := g.neighbors(j)
		for k, v := range nb {
			c := part[v]
			if edgeW[c] == 0 {
				neigh = append(neigh, c)
			}
			edgeW[c] += wt[k]
		}
		best := cur
		curGain := edgeW[cur] - float64(wj*clusterW[cur]*r)
		bestGain := curGain
		for _, c := range neigh {
			if gain := edgeW[c] - float64(wj*clusterW[c]*r); gain > bestGain {
				best, bestGain = c, gain
			}
			edgeW[c] = 0
		}
		part[j] = best
		clusterW[best] += wj
		clusterN[best]++
		if best == unused[len(unused)-1] && clusterN[best] == 1 {
			unused = unused[:len(unused)-1]
		}
		if best != cur {
			gained += bestGain - curGain
			for _, v := range nb {
				if stable[v] && part[v] != best {
					stable[v] = false
					tail := head + size
					if tail >= n {
						tail -= n
					}
					queue[tail] = v
					size++
				}
			}
		}
	}
	s.buf.neigh = neigh
	return gained
}

// refine splits every community of part into subsets by the randomised merge
// of the paper: starting from singletons, each node that is still a singleton
// and well connected to its community joins a well-connected subset of the
// same community, chosen with probability ∝ exp(gain/θ) among gains ≥ 0.
// Subsets only grow along edges, so each is connected. It returns the refined
// membership (ids numbered by smallest node; a reused buffer) and the subset count.
func (s *solver) refine(g *graph, w []float64, r float64, part []int32) ([]int32, int) {
	n := g.n()
	refined := scratch(&s.buf.refined, n)
	clusterW := scratch(&s.buf.clusterW, n) // weight of each subset
	ext := scratch(&s.buf.ext, n)           // weight from each subset to the rest of its community
	commW := scratch(&s.buf.commW, n)       // weight of each community of part
	for u := range int32(n) {
		refined[u] = u
		clusterW[u] = w[u]
		pu := part[u]
		commW[pu] += w[u]
		nb, wt := g.neighbors(u)
		var e float64
		for k, v := range nb {
			if part[v] == pu {
				e += wt[k]
			}
		}
		ext[u] = e
	}
	nonSingleton := scratch(&s.buf.flag, n)
	edgeW := scratch(&s.buf.edgeW, n)
	for _, j := range s.perm(n) {
		c := part[j]
		total := commW[c]
		if nonSingleton[j] || ext[j] < clusterW[j]*(total-clusterW[j])*r {
			continue
		}
		chosen := s.chooseSubset(g, w, r, part, refined, edgeW, j, total)
		clusterW[chosen] += w[j]
		nb, wt := g.neighbors(j)
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
	return refined, s.compact(refined, n)
}

// chooseSubset takes the singleton j out of its subset and draws the
// well-connected subset of its community (total weight total) that it joins,
// j itself included as the choice of staying alone.
func (s *solver) chooseSubset(g *graph, w []float64, r float64, part, refined []int32, edgeW []float64, j int32, total float64) int32 {
	clusterW, ext := s.buf.clusterW, s.buf.ext
	c := part[j]
	clusterW[j], ext[j] = 0, 0
	// j is a singleton, so no neighbour shares its subset, and edge weights
	// are > 0: edgeW[sub] == 0 means that sub has not been met yet.
	neigh := append(s.buf.neigh[:0], j)
	nb, wt := g.neighbors(j)
	for k, v := range nb {
		if part[v] != c {
			continue
		}
		sub := refined[v]
		if edgeW[sub] == 0 {
			neigh = append(neigh, sub)
		}
		edgeW[sub] += wt[k]
	}
	best, maxGain := j, 0.0
	gains, cands := s.buf.gains[:0], s.buf.cands[:0]
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
	}
	s.buf.neigh, s.buf.gains, s.buf.cands = neigh, gains, cands
	if theta := s.cfg.randomness; theta > 0 && len(cands) > 1 {
		return pick(s.rng, cands, gains, maxGain, theta)
	}
	return best
}

// negligible is the exponent below which pick takes a candidate's weight as
// 0: e^-40 < 2^-57, under the spacing (2^-53) of the uniform numbers drawn,
// against the weight 1 of the best candidate, so the distribution changes
// by less than what the draw can resolve, and exp is skipped.
const negligible = -40

// pick draws a candidate with probability ∝ exp((gain−maxGain)/θ); shifting by
// the largest gain keeps exp finite without changing the distribution.
// Products are wrapped in float64() conversions here and in the gain formulas
// because the Go spec lets a compiler fuse x*y+z into an FMA on some
// platforms (arm64, amd64 v3), which would change rounding and so the result.
func pick(rng *rand.Rand, cands []int32, gains []float64, maxGain, theta float64) int32 {
	var sum float64
	for i, gn := range gains {
		if x := (gn - maxGain) / theta; x < negligible {
			gains[i] = 0
		} else {
			gains[i] = exp(x)
		}
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
