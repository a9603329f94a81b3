package leiden_test

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/leiden"
	"github.com/graphrag/graphrag/pkg/wgraph"
	"github.com/graphrag/graphrag/pkg/wgraph/wgraphtest"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.txt")

// TestGolden pins exact results, so that a run on another platform (arm64,
// with FMA, another Go release) that drifts by a single rounding shows up.
func TestGolden(t *testing.T) {
	sparse, _ := wgraphtest.Sparse(8000, 8, 40, 0.3, 99)
	planted, _ := wgraphtest.PlantedPartition(8, 30, 0.3, 0.01, 1)
	cases := []struct {
		name string
		g    *wgraph.Graph
		opts []leiden.Option
	}{
		{"karate seed 42", wgraphtest.Karate(), nil},
		{"karate seed 7 gamma 1.5", wgraphtest.Karate(), []leiden.Option{leiden.WithSeed(7), leiden.WithResolution(1.5)}},
		{"planted 8x30", planted, []leiden.Option{leiden.WithMaxLevels(10)}},
		{"sparse 8k edges", sparse, []leiden.Option{leiden.WithMaxLevels(10)}},
		{"sparse 8k edges until stable", sparse, []leiden.Option{leiden.WithMaxLevels(10), leiden.WithMaxIterations(0)}},
		{"sparse 8k edges cpm", sparse, []leiden.Option{leiden.WithQuality(leiden.CPM), leiden.WithResolution(0.05), leiden.WithSeed(3)}},
	}
	var b strings.Builder
	for _, c := range cases {
		res := mustRun(t, c.g, c.opts...)
		h := sha256.New()
		var counts []string
		for l, lv := range res.Levels {
			fmt.Fprintf(h, "%d:%v:%x\n", l, lv.Membership, res.Modularity[l]) // %x prints the exact bits
			counts = append(counts, fmt.Sprint(lv.Count))
		}
		fmt.Fprintf(&b, "%s: counts %s modularity %.6f sha256 %x\n", c.name, strings.Join(counts, ","),
			res.Modularity[len(res.Modularity)-1], h.Sum(nil)[:12])
	}
	path := filepath.Join("testdata", "golden.txt")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create): %v", err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("results differ from %s:\ngot:\n%swant:\n%s", path, got, want)
	}
}
