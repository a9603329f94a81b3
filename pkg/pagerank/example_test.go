package pagerank_test

import (
	"fmt"

	"github.com/graphrag/graphrag/pkg/pagerank"
	"github.com/graphrag/graphrag/pkg/wgraph"
)

func ExamplePersonalized() {
	// A path 0–1–2–3; the walker restarts at node 0. Solving the four
	// balance equations by hand gives x0 = 0.15/0.49632 ≈ 0.302 and the rest.
	g, err := wgraph.FromEdges(4, []wgraph.Edge{{U: 0, V: 1, W: 1}, {U: 1, V: 2, W: 1}, {U: 2, V: 3, W: 1}})
	if err != nil {
		panic(err)
	}
	res, err := pagerank.Personalized(g, map[int]float64{0: 1}, pagerank.WithMaxIterations(100))
	if err != nil {
		panic(err)
	}
	for u, s := range res.Scores {
		fmt.Printf("%d %.3f\n", u, s)
	}
	// Output:
	// 0 0.302
	// 1 0.358
	// 2 0.238
	// 3 0.101
}
