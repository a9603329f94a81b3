package neo4jgraph

import (
	"testing"

	"github.com/graphrag/graphrag/pkg/wgraph"
)

// FuzzHierarchy feeds arbitrary per-node community ids, as GDS streams them,
// on an arbitrary graph: hierarchy must not panic, and what it returns must
// nest, keep the coarsest partition as given, and be connected below it.
func FuzzHierarchy(f *testing.F) {
	f.Add([]byte{3, 2, 0, 1, 0, 1, 1, 1, 2, 2}, []byte{0, 1, 1, 2}, uint8(3))
	f.Add([]byte{2, 3, 0, 0, 0, 1, 1, 1}, []byte{0, 1}, uint8(1))
	f.Fuzz(func(t *testing.T, data, edgeBytes []byte, maxLevels uint8) {
		if len(data) < 2 {
			return
		}
		n, l := int(data[0]%16)+1, int(data[1]%4)+1
		data = data[2:]
		ids := make([][]int64, n)
		for i := range ids {
			ids[i] = make([]int64, l)
			for j := range ids[i] {
				if k := i*l + j; k < len(data) {
					ids[i][j] = int64(data[k] % 5)
				}
			}
		}
		var edges []wgraph.Edge
		for i := 0; i+1 < len(edgeBytes); i += 2 {
			u, v := int(edgeBytes[i])%n, int(edgeBytes[i+1])%n
			if u != v {
				edges = append(edges, wgraph.Edge{U: u, V: v, W: 1})
			}
		}
		g, err := wgraph.FromEdges(n, edges)
		if err != nil {
			t.Fatal(err)
		}
		m := int(maxLevels%5) + 1
		levels, err := hierarchy(g, ids, m)
		if err != nil {
			t.Fatalf("hierarchy: %v", err)
		}
		if len(levels) == 0 || len(levels) > m {
			t.Fatalf("%d levels, want 1..%d", len(levels), m)
		}
		for k, lv := range levels {
			if len(lv) != n {
				t.Fatalf("level %d has %d nodes, want %d", k, len(lv), n)
			}
			if k+1 < len(levels) {
				if err := wgraph.CheckConnected(g, lv); err != nil {
					t.Fatalf("level %d: %v", k, err)
				}
				parent := map[int]int{}
				for i, c := range lv {
					if p, ok := parent[c]; ok && p != levels[k+1][i] {
						t.Fatalf("level %d does not nest in level %d", k, k+1)
					}
					parent[c] = levels[k+1][i]
				}
			}
		}
	})
}
