package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
	"github.com/graphrag/graphrag/services/query/ask"
	"github.com/graphrag/graphrag/services/query/engine"
)

const mapLatency = 50 * time.Millisecond

type mapResult struct {
	n, concurrency int
	wall           time.Duration // median map phase wall time
	slowest        time.Duration // median of the slowest map call per query
	sum            time.Duration // median of the sum of map call times per query
}

// benchMapPhase times the map phase of global search: one LLM call per community, run in
// parallel, so its wall time should be close to the slowest call, not the sum.
func benchMapPhase(ctx context.Context, cfg *benchConfig, r *benchReport) error {
	chunks, reps := 5000, 5
	ns := []int{1, 4, 8, 16, 32}
	if cfg.quick {
		chunks, reps, ns = 1000, 2, []int{1, 4, 8}
	}
	r.command(cfg.command("map"))
	r.linef("`ask.Asker.Query` in global mode at community level 0 over a synthetic corpus of %d chunks, with", chunks)
	r.linef("an OpenAI-compatible endpoint (`llmtest.NewServer`, fixed latency %s, up to 64 requests at once)", mapLatency)
	r.line("that answers the map schema. `-map-top-k N` communities are mapped with `-map-concurrency N` (and the")
	r.line("default 4 for comparison); the map wall time is the engine's `map` timing, call times are measured at")
	r.linef("the HTTP transport. Median of %d queries per row.", reps)
	r.line("")
	c := newSynthCorpus(chunks, 2027)
	st, err := buildBenchStores(ctx, filepath.Join(cfg.workDir, "map"), c, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	level0, err := st.graph.Communities(ctx, benchCorpus, 0)
	if err != nil {
		return fmt.Errorf("reading level 0: %w", err)
	}
	endpoint := llmtest.NewServer(llmtest.WithLatency(mapLatency), llmtest.WithMaxConcurrency(64), llmtest.WithChatReply(benchChatReply))
	defer endpoint.Close()
	rec := &benchCallRecorder{next: http.DefaultTransport.(*http.Transport).Clone()}
	client, err := llm.New(llm.Config{BaseURL: endpoint.URL(), ChatModel: "bench", MaxConcurrency: 64, Timeout: 30 * time.Second},
		llm.WithHTTPClient(&http.Client{Transport: rec}), llm.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		return fmt.Errorf("configuring the LLM client: %w", err)
	}
	defer client.Close()

	var results []mapResult
	type run struct{ n, conc int }
	var runs []run
	for _, n := range ns {
		if n > len(level0) {
			cfg.progress("skipping N=%d: level 0 has %d communities", n, len(level0))
			continue
		}
		runs = append(runs, run{n, n})
		if n > 4 {
			runs = append(runs, run{n, ask.DefaultConfig().MapConcurrency})
		}
	}
	level := 0
	for _, ru := range runs {
		qc, ac := engine.DefaultConfig(), ask.DefaultConfig()
		qc.MapTopK, ac.MapConcurrency = ru.n, ru.conc
		eng, err := ask.New(qc, ac, engine.Deps{Graph: st.graph, Vectors: st.vectors, Embedder: st.embedder,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, client)
		if err != nil {
			return fmt.Errorf("building the query engine: %w", err)
		}
		var walls, slowest, sums []time.Duration
		for i := range reps {
			rec.take()
			q := fmt.Sprintf("What are the main themes across the corpus? (%d)", i) // distinct prompts
			resp, err := eng.Query(ctx, ask.Request{Corpus: benchCorpus, Query: q, Mode: ask.ModeGlobal, Level: &level}, nil)
			if err != nil {
				return fmt.Errorf("global query with %d communities: %w", ru.n, err)
			}
			calls := rec.take()
			// The map calls come first; the reduce call starts after the last of them.
			if len(calls) != ru.n+1 {
				return fmt.Errorf("%w: %d LLM calls for %d communities, want %d map calls and a reduce", errBenchCheck, len(calls), ru.n, ru.n+1)
			}
			var slow, sum time.Duration
			for _, cl := range calls[:ru.n] {
				slow, sum = max(slow, cl.d), sum+cl.d
			}
			walls = append(walls, time.Duration(resp.Timings["map"]*float64(time.Millisecond)))
			slowest, sums = append(slowest, slow), append(sums, sum)
		}
		slices.Sort(walls)
		slices.Sort(slowest)
		slices.Sort(sums)
		res := mapResult{n: ru.n, concurrency: ru.conc, wall: walls[len(walls)/2], slowest: slowest[len(slowest)/2], sum: sums[len(sums)/2]}
		cfg.progress("map N=%d concurrency=%d: %s", ru.n, ru.conc, benchFmtMs(res.wall))
		results = append(results, res)
	}
	var rows [][]string
	for _, res := range results {
		rows = append(rows, []string{strconv.Itoa(res.n), strconv.Itoa(res.concurrency), benchFmtMs(res.wall), benchFmtMs(res.slowest),
			benchFmtMs(res.sum), benchFmtMs(time.Duration(res.n) * mapLatency),
			fmt.Sprintf("%.2f", float64(res.wall)/float64(res.slowest))})
	}
	r.table([]string{"communities N", "map concurrency", "map wall time", "slowest map call", "sum of map calls", "N × latency", "wall / slowest"}, rows)
	r.line("")
	r.linef("With concurrency ≥ N the wall time stays near one call however many communities are mapped; with the")
	r.linef("default concurrency 4 it grows as ⌈N/4⌉ calls. Level 0 of this corpus has %d communities.", len(level0))
	return nil
}
