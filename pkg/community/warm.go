package community

import (
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/wgraph"
)

// A warm detection starts from the previous hierarchy so that what a new batch of
// documents did not touch keeps its communities (and their reports):
//
//   - the top level: Leiden starts from the previous top level (nodes in no recorded
//     community, new ones among them, start alone) and only moves what gains;
//   - every level below: Leiden's own lower levels are refinements drawn anew each
//     run, so they are not used for the nodes that had a community at that level.
//     Those keep it, split where the level above now separates them; new nodes join
//     the old community that holds most of their Leiden community, or stay with that
//     Leiden community; old nodes without a record at that level stay alone.
//     Each level is then cut into connected pieces inside the level above, so the
//     levels nest and every community is connected, as in a cold run.
//
// Old lower-level communities never merge with each other: the lower levels have no
// quality of their own to improve (the final partition is the one Leiden optimises),
// and a merge would rewrite both reports.

// previousLevels indexes prev by level: key -> index of its community at that level.
func previousLevels(prev []graphstore.Community) []map[string]int {
	var levels []map[string]int
	for i, c := range prev {
		for len(levels) <= c.Level {
			levels = append(levels, map[string]int{})
		}
		for _, k := range c.Members {
			levels[c.Level][k] = i
		}
	}
	return levels
}

// seedMembership is Leiden's initial membership: the previous community of each key
// at one level, -1 for a key that had none.
func seedMembership(keys []string, level map[string]int) []int {
	seed := make([]int, len(keys))
	for u, k := range keys {
		if c, ok := level[k]; ok {
			seed[u] = c
		} else {
			seed[u] = -1
		}
	}
	return seed
}

// keepLevels returns Leiden's memberships (finest first) with the levels below the
// top replaced by the previous ones where they exist, as described above. The
// previous top level only seeded the new top, so it is not reused below it.
func keepLevels(g *wgraph.Graph, keys []string, mem [][]int, prev []map[string]int) [][]int {
	out := make([][]int, len(mem))
	top := len(mem) - 1
	out[top] = mem[top]
	for l := top - 1; l >= 0; l-- {
		if l >= len(prev)-1 {
			out[l] = pieces(g, mem[l], out[l+1])
			continue
		}
		out[l] = pieces(g, warmKeys(keys, mem[l], prev[l], prev[len(prev)-1]), out[l+1])
	}
	return out
}

// warmKeys labels each node at one level: its previous community there; alone if it
// had none there but one at the previous top level (it was in a community too small
// for a record: regrouping such nodes by Leiden's refinement, drawn anew each run,
// would make and unmake small communities, each with a report, on every run); for a
// node new since then, the previous community holding most of its Leiden community's
// known members (ties: the lower index), else its Leiden community. Labels of the
// three kinds never collide.
func warmKeys(keys []string, leidenMem []int, prev, prevTop map[string]int) []int {
	offset := 0
	for _, i := range prev {
		offset = max(offset, i+1)
	}
	alone := offset + len(keys) // Leiden ids are below len(keys)
	count := map[[2]int]int{}   // (Leiden community, previous community) -> nodes
	best := map[int]int{}       // Leiden community -> previous community with most nodes
	label := make([]int, len(keys))
	for u, k := range keys {
		p, ok := prev[k]
		if !ok {
			label[u] = -1
			continue
		}
		label[u] = p
		c := leidenMem[u]
		count[[2]int{c, p}]++
		b, seen := best[c]
		if n, nb := count[[2]int{c, p}], count[[2]int{c, b}]; !seen || n > nb || (n == nb && p < b) {
			best[c] = p
		}
	}
	for u, k := range keys {
		if label[u] >= 0 {
			continue
		}
		if _, old := prevTop[k]; old {
			label[u] = alone + u
		} else if b, ok := best[leidenMem[u]]; ok {
			label[u] = b
		} else {
			label[u] = offset + leidenMem[u]
		}
	}
	return label
}

// pieces returns the connected pieces of the groups of nodes sharing both their key
// and their parent community, numbered by smallest node.
func pieces(g *wgraph.Graph, key, parent []int) []int {
	out := make([]int, len(key))
	for u := range out {
		out[u] = -1
	}
	var stack []int
	next := 0
	for u := range out {
		if out[u] >= 0 {
			continue
		}
		out[u] = next
		stack = append(stack[:0], u)
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			nb, _ := g.Neighbors(x)
			for _, v32 := range nb {
				if v := int(v32); out[v] < 0 && key[v] == key[u] && parent[v] == parent[u] {
					out[v] = next
					stack = append(stack, v)
				}
			}
		}
		next++
	}
	return out
}
