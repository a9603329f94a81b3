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
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/services/query/engine"
)

// globalCostTarget is issue 15's bound on the tokens sent to the model per global question.
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
	topK  int  // -map-top-k
	level *int // nil: the engine picks
}

func (r globalCostRow) String() string {
	lv := "auto"
	if r.level != nil {
		lv = strconv.Itoa(*r.level)
	}
	return fmt.Sprintf("map-top-k %d, level %s", r.topK, lv)
}

// globalCost is what the model was sent for the questions of one row.
type globalCost struct {
	meanPrompt, maxPrompt float64 // prompt tokens per question
	meanCompletion        float64
	meanCalls             float64
	level                 int // of the last question
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
	r.line("summarizer's, not a model's). Then each global question goes through `engine.Engine.Query` in global")
	r.line("mode with an OpenAI-compatible endpoint (`llmtest.NewServer`, the fake server of the tests): _tokens")
	r.line("sent_ are the prompt tokens the endpoint reports (its count: 1 per 4 bytes), summed over the map calls")
	r.linef("and the reduce call of one question; mean and max over %d questions.", len(qs))
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
	for _, row := range []globalCostRow{{engine.DefaultConfig().MapTopK, nil}, {0, nil}, {0, &level0}} {
		c, err := measureGlobalCost(ctx, w, endpoint.URL(), row, qs)
		if err != nil {
			return fmt.Errorf("%s: %w", row, err)
		}
		cfg.progress("%s: %.0f tokens sent per question (max %.0f), %.1f calls", row, c.meanPrompt, c.maxPrompt, c.meanCalls)
		rows = append(rows, []string{strconv.Itoa(row.topK), row.levelCell(c.level), fmt.Sprintf("%.1f", c.meanCalls),
			fmt.Sprintf("%.0f", c.meanPrompt), fmt.Sprintf("%.0f", c.maxPrompt), fmt.Sprintf("%.0f", c.meanCompletion),
			benchVerdict(c.maxPrompt <= globalCostTarget, "≤ 50k tokens sent per global question")})
	}
	r.table([]string{"map-top-k", "level", "model calls per question", "tokens sent (mean)", "tokens sent (max)", "tokens received (mean)", "target"}, rows)
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
	var c globalCost
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, q := range qs {
		client, err := llm.New(llm.Config{BaseURL: url, ChatModel: "bench", MaxConcurrency: 64, Timeout: 30 * time.Second}, llm.WithLogger(quiet))
		if err != nil {
			return c, fmt.Errorf("configuring the LLM client: %w", err)
		}
		qc := engine.DefaultConfig()
		qc.MapTopK = row.topK
		eng, err := engine.New(qc, engine.Deps{Graph: w.graph, Vectors: w.vectors, Embedder: w.embedder, OfflineEmbedder: true, LLM: client, Logger: quiet})
		if err != nil {
			client.Close()
			return c, fmt.Errorf("building the query engine: %w", err)
		}
		resp, err := eng.Query(ctx, engine.Request{Corpus: benchCorpus, Query: q, Mode: engine.ModeGlobal, Level: row.level}, nil)
		u := client.Usage()
		client.Close()
		if err != nil {
			return c, fmt.Errorf("asking %q: %w", q, err)
		}
		if len(resp.Context.Communities) > 0 {
			c.level = resp.Context.Communities[0].Level
		}
		n := float64(len(qs))
		c.meanPrompt += float64(u.PromptTokens) / n
		c.maxPrompt = max(c.maxPrompt, float64(u.PromptTokens))
		c.meanCompletion += float64(u.CompletionTokens) / n
		c.meanCalls += float64(u.Calls) / n
	}
	return c, nil
}
