package leiden_test

import (
	"context"
	"fmt"

	"github.com/graphrag/graphrag/pkg/leiden"
	"github.com/graphrag/graphrag/pkg/wgraph"
)

func ExampleRun() {
	// Two triangles joined by the edge 2–3.
	b := wgraph.NewBuilder(6)
	for _, e := range [][2]int{{0, 1}, {1, 2}, {0, 2}, {3, 4}, {4, 5}, {3, 5}, {2, 3}} {
		if err := b.AddEdge(e[0], e[1], 1); err != nil {
			panic(err)
		}
	}
	g, err := b.Build()
	if err != nil {
		panic(err)
	}
	res, err := leiden.Run(context.Background(), g, leiden.WithSeed(1))
	if err != nil {
		panic(err)
	}
	top := res.Levels[len(res.Levels)-1]
	fmt.Println(top.Count, top.Membership)
	fmt.Printf("modularity %.4f\n", res.Modularity[len(res.Modularity)-1])
	// Output:
	// 2 [0 0 0 1 1 1]
	// modularity 0.3571
}
