package leiden_test

import (
	"context"
	"testing"

	"github.com/graphrag/graphrag/pkg/leiden"
	"github.com/graphrag/graphrag/pkg/wgraph"
)

// FuzzRun builds graphs from random edge lists (byte 0: node count, then
// triples u, v, weight) and checks every structural guarantee of the result.
func FuzzRun(f *testing.F) {
	f.Add([]byte{5, 0, 1, 2, 1, 2, 2, 3, 3, 1, 4, 4, 3}, uint64(1), 1.0)
	f.Add([]byte{12, 0, 1, 1, 1, 2, 1, 2, 0, 1, 3, 4, 1, 4, 5, 1, 5, 3, 1, 2, 3, 1, 6, 6, 5}, uint64(42), 0.5)
	f.Add([]byte{1, 0, 0, 1}, uint64(0), 2.0)
	f.Fuzz(func(t *testing.T, data []byte, seed uint64, gamma float64) {
		if len(data) == 0 || !(gamma >= 0 && gamma <= 10) {
			return
		}
		n := int(data[0]%40) + 1
		b := wgraph.NewBuilder(n)
		for i := 1; i+2 < len(data); i += 3 {
			if err := b.AddEdge(int(data[i])%n, int(data[i+1])%n, float64(data[i+2]%8)/2); err != nil {
				t.Fatal(err)
			}
		}
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []leiden.Quality{leiden.Modularity, leiden.CPM} {
			res, err := leiden.Run(context.Background(), g, leiden.WithSeed(seed), leiden.WithResolution(gamma),
				leiden.WithQuality(q), leiden.WithMaxLevels(6))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			checkResult(t, g, res)
		}
	})
}
