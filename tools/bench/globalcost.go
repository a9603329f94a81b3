package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"time"

	"github.com/graphrag/graphrag/pkg/community"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/services/query/ask"
	"github.com/graphrag/graphrag/services/query/engine"
)

// globalCostTarget is the bound on the tokens sent to the model per global question.
const globalCostTarget = 50_000

// benchGlobalQuestions ask about the dev set as a whole, on the subjects its passages cover.
var benchGlobalQuestions = []string{
	"What are the main themes across the corpus?",
	"What are the main topics about films, actors and directors?",
	"What are the key ideas about music, bands and albums?",
	"What are the common topics about sports teams and players?",
	"What are the main themes about politics, elections and government?",
	"What are the recurring topics about cities, countries and geography?",
	"What are the main themes about writers, books and magazines?",
	"Give an overview of the history and wars in the collection.",
}

// globalCostRow is one engine setting of the global question benchmark.
type globalCostRow struct {
	topK    int  // -map-top-k
	level   *int // nil: the engine picks
	unbound bool // -global-token-budget -1
}

func (r globalCostRow) String() string {
	lv := "auto"
	if r.level != nil {
		lv = strconv.Itoa(*r.level)
	}
	if r.unbound {
		return fmt.Sprintf("map-top-k %d, level %s, no token bound", r.topK, lv)
	}
	return fmt.Sprintf("map-top-k %d, level %s", r.topK, lv)
}

// globalCost is what the model was sent for the questions of one row, and how much of
// the reference answer points the partial answers it got back hold.
type globalCost struct {
	meanPrompt, maxPrompt float64 // prompt tokens per question
	meanCompletion        float64
	meanCalls             float64
	level                 int // of the last question
	// Coverage of the reference answer points (judge.go): the score-weighted share of the
	// points the judge finds in every report of the level that the partial answers
	// hold, mean and minimum over the questions; best is the share they hold of the
	// points of the best-scored reports (what a reduce answer would lead with).
	meanCoverage, minCoverage, meanBest float64
	meanRelevant                        float64 // reports of the level with points, per question
	// fitCoverage is the mean coverage over the fit questions: those whose relevant
	// reports can all be mapped within the bound (estimated), where equal coverage is
	// possible at all.
	fitCoverage   float64
	fit           int
	meanAllTokens float64 // estimated prompt tokens of mapping every relevant report
}

// benchGlobalCost indexes the dev set offline, then asks global questions through the
// query engine with an OpenAI-compatible endpoint (llmtest.NewServer) and counts the
// tokens the endpoint reports for them.
func benchGlobalCost(ctx context.Context, cfg *benchConfig, r *benchReport) error {
	rc, err := loadRealCorpus(cfg.corpusDir)
	if err != nil {
		return err
	}
	docs, qs := rc.docs, benchGlobalQuestions
	if cfg.quick {
		docs, qs = docs[:60], qs[:2]
	}
	r.command(cfg.command("globalcost"))
	r.linef("The %d passages of %s indexed through the extractor, grapher and summarizer", len(docs), rc.source)
	r.line("services in one process with the offline defaults (so the community reports are the offline")
	r.line("summarizer's, not a model's). Then each global question goes through `ask.Asker.Query` in global")
	r.line("mode with an OpenAI-compatible endpoint (`llmtest.NewServer`, the fake server of the tests): _tokens")
	r.line("sent_ are the prompt tokens the endpoint reports (its count: 1 per 4 bytes), summed over the map calls")
	r.linef("and the reduce call of one question; mean and max over %d questions.", len(qs))
	r.line("")
	r.line("The endpoint's map replies come from a judge (`judge.go`): a report's points are its sentences that")
	r.line("hold the question's content words (at most 5, the most words first), its score the share of those")
	r.line("words it holds, 0 and \"Not relevant\" when it holds none; without content words (\"the main themes\")")
	r.line("every report is relevant with its first two sentences. The _reference answer points_ of a question")
	r.line("are the judge's points for every report of the level the question was mapped at, as an unbounded map")
	r.line("phase would collect them; _coverage_ is the score-weighted share of them the question's partial answers")
	r.line("hold, _best reports' points_ the share they hold of the points of the reports with the top score.")
	r.line("_Mapping every relevant report_")
	r.line("estimates (4 bytes per token, as the engine's budget does) the prompt tokens of one map call per")
	r.line("report with points plus the reduce call over their answers.")
	r.line("")
	w, err := startWavesStack(ctx, filepath.Join(cfg.workDir, "globalcost"), wavesVariant{stream: true, maxChange: community.DefaultMaxChange})
	if err != nil {
		return err
	}
	defer w.close()
	for _, d := range docs {
		if _, err := pipeline.PublishDocument(ctx, w.bus, events.Document{Corpus: benchCorpus, ID: d.ID, Title: d.Title, Text: d.Text}); err != nil {
			return fmt.Errorf("publishing %s: %w", d.ID, err)
		}
	}
	st, err := pipeline.WaitComplete(ctx, w.bus, benchCorpus, 100*time.Millisecond, nil)
	if err != nil {
		return fmt.Errorf("indexing: %w", err)
	}
	cfg.progress("indexed: %d communities", st.Graph.Communities)
	endpoint := llmtest.NewServer(llmtest.WithMaxConcurrency(64), llmtest.WithChatReply(benchChatReply))
	defer endpoint.Close()
	level0 := 0
	var rows [][]string
	unbounded := map[string]globalCost{} // by level cell: the reference of the bounded rows
	for _, row := range []globalCostRow{{engine.DefaultConfig().MapTopK, nil, false}, {0, nil, true}, {0, nil, false}, {0, &level0, true}, {0, &level0, false}} {
		c, err := measureGlobalCost(ctx, w, endpoint.URL(), row, qs)
		if err != nil {
			return fmt.Errorf("%s: %w", row, err)
		}
		cfg.progress("%s: %.0f tokens sent per question (max %.0f), %.1f calls, coverage %.3f", row, c.meanPrompt, c.maxPrompt, c.meanCalls, c.meanCoverage)
		level, budget, target := row.levelCell(c.level), "50k", "-"
		if row.unbound {
			unbounded[level], budget = c, "none"
		} else {
			target = benchVerdict(c.maxPrompt <= globalCostTarget, "≤ 50k tokens sent per global question")
			if u, ok := unbounded[level]; ok && row.topK == 0 {
				target += "; " + benchVerdict(c.fitCoverage >= u.fitCoverage-0.01,
					fmt.Sprintf("equal coverage where the relevant reports fit in 50k (%d of %d questions): %.3f against %.3f unbounded",
						c.fit, len(qs), c.fitCoverage, u.fitCoverage))
			}
		}
		rows = append(rows, []string{strconv.Itoa(row.topK), level, budget, fmt.Sprintf("%.1f", c.meanCalls),
			fmt.Sprintf("%.0f", c.meanPrompt), fmt.Sprintf("%.0f", c.maxPrompt), fmt.Sprintf("%.0f", c.meanCompletion),
			fmt.Sprintf("%.1f", c.meanRelevant), fmt.Sprintf("%.0f", c.meanAllTokens),
			fmt.Sprintf("%.3f (min %.3f)", c.meanCoverage, c.minCoverage), fmt.Sprintf("%.3f", c.meanBest), target})
	}
	r.table([]string{"map-top-k", "level", "token bound", "model calls per question", "tokens sent (mean)", "tokens sent (max)", "tokens received (mean)",
		"relevant reports of the level", "mapping every relevant report (tokens, est.)", "coverage of reference points (mean, min)", "best reports' points held", "target"}, rows)
	r.line("")
	r.line("_Equal coverage_ compares a bounded row with the unbounded row above it (same level, the same")
	r.line("selection with `-global-token-budget -1`), within 0.01, over the questions whose relevant reports")
	r.line("can all be mapped within the bound (their estimate ≤ 50k tokens): for the others no selection can")
	r.line("hold every point within the bound. The default `-map-top-k 5` is not judged on it: it maps five")
	r.line("reports by design.")
	return nil
}

func (r globalCostRow) levelCell(picked int) string {
	if r.level != nil {
		return strconv.Itoa(*r.level)
	}
	return fmt.Sprintf("auto (%d)", picked)
}

// measureGlobalCost asks qs with one engine setting; each question gets its own client
// so that its usage is its own (and no response cache is shared).
func measureGlobalCost(ctx context.Context, w *wavesStack, url string, row globalCostRow, qs []string) (globalCost, error) {
	c := globalCost{minCoverage: 1}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, q := range qs {
		client, err := llm.New(llm.Config{BaseURL: url, ChatModel: "bench", MaxConcurrency: 64, Timeout: 30 * time.Second}, llm.WithLogger(quiet))
		if err != nil {
			return c, fmt.Errorf("configuring the LLM client: %w", err)
		}
		qc, ac := engine.DefaultConfig(), ask.DefaultConfig()
		qc.MapTopK = row.topK
		if row.unbound {
			ac.GlobalTokenBudget = ask.NoTokenBudget
		}
		eng, err := ask.New(qc, ac, engine.Deps{Graph: w.graph, Vectors: w.vectors, Embedder: w.embedder, OfflineEmbedder: true, Logger: quiet}, client)
		if err != nil {
			client.Close()
			return c, fmt.Errorf("building the query engine: %w", err)
		}
		resp, err := eng.Query(ctx, ask.Request{Corpus: benchCorpus, Query: q, Mode: ask.ModeGlobal, Level: row.level}, nil)
		u := client.Usage()
		client.Close()
		if err != nil {
			return c, fmt.Errorf("asking %q: %w", q, err)
		}
		if len(resp.Context.Communities) > 0 {
			c.level = resp.Context.Communities[0].Level
		}
		n := float64(len(qs))
		lvl := c.level
		if row.level != nil {
			lvl = *row.level
		}
		cov, err := pointCoverage(ctx, w, q, lvl, resp.Partials)
		if err != nil {
			return c, err
		}
		c.minCoverage = min(c.minCoverage, cov.share)
		c.meanCoverage += cov.share / n
		c.meanBest += cov.best / n
		c.meanRelevant += float64(cov.relevant) / n
		c.meanAllTokens += float64(cov.allTokens) / n
		if cov.allTokens <= globalCostTarget {
			c.fitCoverage += cov.share
			c.fit++
		}
		c.meanPrompt += float64(u.PromptTokens) / n
		c.maxPrompt = max(c.maxPrompt, float64(u.PromptTokens))
		c.meanCompletion += float64(u.CompletionTokens) / n
		c.meanCalls += float64(u.Calls) / n
	}
	if c.fit > 0 {
		c.fitCoverage /= float64(c.fit)
	}
	return c, nil
}

// coverage is how much of a question's reference answer points its partial answers hold.
type coverage struct {
	share, best float64
	relevant    int // reports of the level with points
	allTokens   int // estimated prompt tokens of mapping them all and reducing
}

// pointCoverage judges every report of the level for q (the reference answer points) and
// measures the share of them the partial answers hold.
// level is numbered as the engine answers, 0 the coarsest (graphstore.ShownLevel).
func pointCoverage(ctx context.Context, w *wavesStack, q string, level int, partials []ask.PartialAnswer) (coverage, error) {
	gs, err := w.graph.Stats(ctx, benchCorpus)
	if err != nil {
		return coverage{}, fmt.Errorf("counting the levels: %w", err)
	}
	cs, err := w.graph.Communities(ctx, benchCorpus, graphstore.ShownLevel(level, gs.Levels))
	if err != nil {
		return coverage{}, fmt.Errorf("reading level %d: %w", level, err)
	}
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	recs, err := w.vectors.Get(ctx, schema.Collection(benchCorpus, schema.Communities), ids)
	if err != nil {
		return coverage{}, fmt.Errorf("reading the reports of level %d: %w", level, err)
	}
	type point struct {
		community, text string
		weight          float64
	}
	var ref []point
	var cov coverage
	reduce := 0
	for _, rec := range recs {
		title := rec.Attrs[schema.ReportTitle]
		_, summary := schema.SplitReportText(title, rec.Text)
		points, score := judgeReport(q, title, summary)
		if len(points) == 0 {
			continue
		}
		cov.relevant++
		cov.allTokens += (len("## Community report\n"+title+"\n"+summary+"\n\n## Question\n"+q) + len(judgeAnswer(points))) / 4
		reduce += len(judgeAnswer(points)) / 4
		for _, p := range points {
			ref = append(ref, point{rec.ID, p, score})
		}
	}
	cov.allTokens += reduce
	if len(ref) == 0 {
		cov.share, cov.best = 1, 1
		return cov, nil
	}
	got := map[[2]string]bool{}
	for _, p := range partials {
		for _, text := range answerPoints(p.Answer) {
			got[[2]string{p.CommunityID, text}] = true
		}
	}
	var total, held, topWeight float64
	top, topHeld := 0, 0
	for _, p := range ref {
		topWeight = max(topWeight, p.weight)
	}
	for _, p := range ref {
		total += p.weight
		has := got[[2]string{p.community, p.text}]
		if has {
			held += p.weight
		}
		if p.weight == topWeight {
			top++
			if has {
				topHeld++
			}
		}
	}
	cov.share, cov.best = held/total, float64(topHeld)/float64(top)
	return cov, nil
}
