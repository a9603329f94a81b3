package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"strconv"
	"time"

	"gonum.org/v1/gonum/graph/community"
	"gonum.org/v1/gonum/graph/simple"

	"github.com/graphrag/graphrag/pkg/leiden"
	"github.com/graphrag/graphrag/pkg/pagerank"
	"github.com/graphrag/graphrag/pkg/wgraph"
	"github.com/graphrag/graphrag/pkg/wgraph/wgraphtest"
)

// algoResult is one algorithm on one graph.
type algoResult struct {
	perOp      time.Duration
	bytesPerOp int64
	allocs     int64
	peakHeap   uint64 // live heap after the run minus before (what the result and graph hold)
	quality    string
	runs       int
}

// benchMeasureAlgo runs fn once, sampling the heap, and, when that run took less than
// repeat, again under benchRepeat for steadier time and allocation figures per run.
func benchMeasureAlgo(fn func() (string, error), repeat time.Duration) (algoResult, error) {
	var res algoResult
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	t0 := time.Now()
	peak, err := benchPeakLive(func() error {
		q, err := fn()
		res.quality = q
		return err
	})
	res.perOp = time.Since(t0)
	runtime.ReadMemStats(&after)
	if err != nil {
		return res, err
	}
	res.peakHeap, res.runs = peak, 1
	res.bytesPerOp = int64(after.TotalAlloc - before.TotalAlloc)
	res.allocs = int64(after.Mallocs - before.Mallocs)
	if res.perOp >= repeat {
		return res, nil
	}
	cost, err := benchRepeat(func() error { _, err := fn(); return err }, repeat)
	if err != nil {
		return res, err
	}
	res.perOp, res.bytesPerOp, res.allocs, res.runs = time.Duration(cost.ns), cost.bytes, cost.allocs, 1+cost.runs
	return res, nil
}

// heapObjects is the runtime metric of heap memory held by objects (live and not yet
// swept); reading it does not stop the world.
const heapObjects = "/memory/classes/heap/objects:bytes"

// benchPeakLive returns the largest growth of the heap over its size before fn, sampled every
// few milliseconds while fn runs: the working memory of the algorithm.
func benchPeakLive(fn func() error) (uint64, error) {
	sample := []metrics.Sample{{Name: heapObjects}}
	read := func() uint64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return sample[0].Value.Uint64()
	}
	runtime.GC()
	base := read()
	peak := base
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				peak = max(peak, read())
			}
		}
	}()
	err := fn()
	close(done)
	<-sampled
	peak = max(peak, read())
	return peak - base, err
}

func graphSizes(quick bool) []int {
	if quick {
		return []int{10_000}
	}
	return []int{10_000, 100_000, 1_000_000}
}

func benchGraphAlgorithms(ctx context.Context, cfg *benchConfig, r *benchReport) error {
	r.command(cfg.command("graph"))
	r.line("Graphs from `wgraphtest.Sparse(edges, 10, 50, 0.2, 2026)` (the generator of the `pkg/leiden` and")
	r.line("`pkg/pagerank` benchmarks): average degree 10, planted groups of 50 nodes, 20% of edge ends drawn")
	r.linef("uniformly. Time and bytes allocated per run, repeated for %s in all (once when one run takes longer);", cfg.repeatFor())
	r.line("_peak live_ is the largest heap growth sampled during the first run. Leiden runs with")
	r.line("its defaults (hierarchical, all levels); the peer is gonum's Louvain (`community.Modularize`, resolution")
	r.line("1), the same graph converted outside the timer. Modularity is that of the coarsest level.")
	r.line("")
	var rows [][]string
	for _, edges := range graphSizes(cfg.quick) {
		g, _ := wgraphtest.Sparse(edges, 10, 50, 0.2, 2026)
		name := fmt.Sprintf("%s edges, %s nodes", benchFmtCount(edges), benchFmtCount(g.N()))
		cfg.progress("%s", name)

		var lres leiden.Result
		leidenRun := func() (string, error) {
			var err error
			lres, err = leiden.Run(ctx, g)
			if err != nil {
				return "", fmt.Errorf("leiden: %w", err)
			}
			last := len(lres.Levels) - 1
			return fmt.Sprintf("Q = %.3f, %d communities, %d levels", lres.Modularity[last], lres.Levels[last].Count, len(lres.Levels)), nil
		}
		lr, err := benchMeasureAlgo(leidenRun, cfg.repeatFor())
		if err != nil {
			return err
		}
		rows = append(rows, algoRow(name, "Leiden (pkg/leiden)", lr))

		prRun := func() (string, error) {
			res, err := pagerank.Run(g)
			if err != nil {
				return "", fmt.Errorf("pagerank: %w", err)
			}
			return strconv.Itoa(res.Iterations) + " iterations", nil
		}
		pr, err := benchMeasureAlgo(prRun, cfg.repeatFor())
		if err != nil {
			return err
		}
		rows = append(rows, algoRow(name, "PageRank (pkg/pagerank)", pr))

		// gonum at 1M edges takes a long time: benchMeasureAlgo runs it once only.
		ug := benchToGonum(g)
		louvain := func() (string, error) {
			reduced := community.Modularize(ug, 1, rand.NewPCG(1, 2))
			comms := reduced.Communities()
			membership := make([]int, g.N())
			for c, nodes := range comms {
				for _, nd := range nodes {
					membership[nd.ID()] = c
				}
			}
			return fmt.Sprintf("Q = %.3f, %d communities", wgraph.Modularity(g, membership, 1), len(comms)), nil
		}
		gr, err := benchMeasureAlgo(louvain, cfg.repeatFor())
		if err != nil {
			return err
		}
		row := algoRow(name, "peer: gonum Louvain", gr)
		row = append(row[:len(row)-1], fmt.Sprintf("%s (Leiden %.1f× faster)", gr.quality, float64(gr.perOp)/float64(lr.perOp)))
		rows = append(rows, row)
		runtime.GC()
	}
	r.table([]string{"graph", "algorithm", "time/run", "allocated/run", "allocs/run", "peak live", "runs", "result"}, rows)
	return nil
}

func algoRow(graph, algo string, a algoResult) []string {
	return []string{graph, algo, benchRoundShort(a.perOp).String(), benchFmtBytes(a.bytesPerOp), strconv.FormatInt(a.allocs, 10),
		benchFmtBytes(int64(a.peakHeap)), strconv.Itoa(a.runs), a.quality}
}

func benchToGonum(g *wgraph.Graph) *simple.WeightedUndirectedGraph {
	ug := simple.NewWeightedUndirectedGraph(0, 0)
	for u := range g.N() {
		ug.AddNode(simple.Node(u))
	}
	for u := range g.N() {
		nb, wt := g.Neighbors(u)
		for k, v := range nb {
			if int(v) > u {
				ug.SetWeightedEdge(ug.NewWeightedEdge(simple.Node(u), simple.Node(v), wt[k]))
			}
		}
	}
	return ug
}
