package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"golang.org/x/term"

	"github.com/graphrag/graphrag/cmd/graphrag/internal/stack"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/proccpu"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/service"
	"github.com/graphrag/graphrag/services/query/ask"
	"github.com/graphrag/graphrag/services/query/engine"
)

// Evaluation strategies: each is a retrieval configuration of the query engine.
var evalStrategies = map[string]ask.Request{
	"bm25":   {Weights: &engine.Weights{Lexical: 1}},
	"dense":  {Weights: &engine.Weights{Dense: 1}},
	"hybrid": {Weights: &engine.Weights{Dense: 1, Lexical: 1}},
	"graph":  {}, // the query service's full local search, as configured
	// The full local search with the dense list on, as it runs with an embedding model
	// (with the offline embedder the default leaves the dense list out).
	"graph_dense": {Weights: &engine.Weights{Dense: 1, Lexical: 1, Graph: 1, Subject: 1}},
	"graph_ppr":   {GraphRanking: engine.RankPPR},
	"graph_path":  {GraphRanking: engine.RankPath},
	"graph_only":  {Weights: &engine.Weights{Graph: 1}},
	// The query modes whose passages differ from local search's (hybrid adds reports
	// only, so it ranks as graph does): each ranks as /v1/retrieve does in that mode.
	// Drift's follow-ups are then the top report's key entities, with a model too.
	"naive": {Mode: ask.ModeNaive},
	"mix":   {Mode: ask.ModeMix},
	"drift": {Mode: ask.ModeDrift},
}

type evalDoc struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

type evalQuestion struct {
	ID       string   `json:"id"`
	Question string   `json:"question"`
	Answer   string   `json:"answer"`
	Gold     []string `json:"gold"`
}

// EvalReport is the JSON `graphrag eval` writes (top-level keys fixed by the issue).
type EvalReport struct {
	Dataset    string           `json:"dataset"`
	Titles     string           `json:"titles"`
	Strategies []StrategyResult `json:"strategies"`
	Indexing   IndexingResult   `json:"indexing"`
	Answers    *AnswerResult    `json:"answers"`
}

// StrategyResult scores one retrieval strategy.
type StrategyResult struct {
	Name    string             `json:"name"`
	Recall  map[string]float64 `json:"recall"`
	AllGold map[string]float64 `json:"all_gold"`
	MRR     float64            `json:"mrr"`
	// Halves are the recall@k of the first and of the last half of the questions (the
	// first holds the extra question of an odd count): a change counts only if it holds
	// on both (docs/evaluation.md).
	Halves [2]map[string]float64 `json:"halves"`
	P50ms  float64               `json:"p50_ms"`
	P99ms  float64               `json:"p99_ms"`
	// Phases are the median and p99 of each phase of Retrieve (the engine's timings),
	// in ms: where the latency goes.
	Phases map[string]PhaseMS `json:"phases,omitempty"`
}

// PhaseMS is the median and p99 of one phase, in ms.
type PhaseMS struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
}

// IndexingResult is what indexing the corpus cost.
type IndexingResult struct {
	Seconds          float64 `json:"seconds"`
	Chunks           int     `json:"chunks"`
	Entities         int     `json:"entities"`
	Relationships    int     `json:"relationships"`
	Communities      int     `json:"communities"`
	LLMCalls         int64   `json:"llm_calls"`
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	// CPUSeconds is the process's CPU time (user + system, every thread) when indexing
	// completed: with Seconds, the CPU a chunk costs and the share of the cores it got.
	CPUSeconds float64 `json:"cpu_seconds,omitempty"`
}

// AnswerResult scores the answers of the default local search. ContainsGold is the
// share of answers whose text contains the gold answer (normalized: case, punctuation,
// articles); it is measured offline too. ExactMatch and F1 (SQuAD-style) are set only
// with a chat model: an extractive answer is a few sentences, not a span.
type AnswerResult struct {
	ContainsGold float64  `json:"contains_gold"`
	ExactMatch   *float64 `json:"exact_match,omitempty"`
	F1           *float64 `json:"f1,omitempty"`
	Questions    int      `json:"questions"`
	Extractive   bool     `json:"extractive"`
	Mode         string   `json:"mode"` // the query mode that answered (-answer-mode)
}

var evalKs = []int{2, 5, 10}

// Run is `graphrag eval`: it runs the four services on embedded defaults (a temporary
// data dir unless -data-dir is given) until the report is written.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := stack.DefaultConfig()
	var dataset, out, strategies, details, titles, answerMode string
	var limit int
	var candidates, noWait bool
	// Log quietly: the table and the progress bar are the output.
	args = append([]string{"-log-level", "warn", "-http-addr", "127.0.0.1:0", "-nats-port", "-1"}, args...)
	var report *EvalReport
	var evalErr error
	// The evaluation ends the process's life: its loop cancels ctx when done.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var tempDir string
	defer func() {
		if tempDir != "" {
			_ = os.RemoveAll(tempDir)
		}
	}()
	err := platform.Main(ctx, args, stderr, platform.Spec{
		Name:  "eval",
		Needs: stack.Needs(),
		Flags: func(fs *flag.FlagSet) {
			cfg.RegisterFlags(fs)
			fs.StringVar(&dataset, "dataset", "", "directory with corpus.jsonl and questions.jsonl (required)")
			fs.StringVar(&out, "out", "", "write the JSON report here (required)")
			fs.StringVar(&strategies, "strategies", "bm25,dense,hybrid,graph", "comma-separated: "+strings.Join(strategyNames(), ", "))
			fs.IntVar(&limit, "limit", 0, "evaluate only the first N questions (0 = all)")
			fs.StringVar(&details, "details", "", "also write one JSON line per question and strategy (top 10 documents, gold ranks) and per answer here")
			fs.BoolVar(&noWait, "no-wait", false, "with a -data-dir that already holds the dataset: retrieve at once, without waiting for community reports (they do not rank passages); the entity vectors written so far are counted")
			fs.BoolVar(&candidates, "candidates", false, "with -details: also write the 50 fused passages retrieved, each with its rank and score in each list (to study fusion offline)")
			fs.StringVar(&answerMode, "answer-mode", ask.ModeLocal, "query mode the answers are written in: "+strings.Join(ask.Modes[1:], ", "))
			fs.StringVar(&titles, "titles", titlesAsShipped, "document titles: "+titlesAsShipped+", or "+titlesOpaque+" (each replaced by doc-NNNNN, as most real corpora name their files)")
		},
		Config: &cfg,
		Tune: func(c *service.CommonFlags, _ *platform.BackendFlags) {
			if c.DataDir == service.DefaultDataDir {
				tempDir = filepath.Join(os.TempDir(), fmt.Sprintf("graphrag-eval-%d", os.Getpid()))
				c.DataDir = tempDir
			}
		},
		Build: func(_ context.Context, p *platform.Platform, _ *http.ServeMux, log *slog.Logger) ([]service.Component, error) {
			if dataset == "" || out == "" {
				return nil, errors.New("-dataset and -out are required")
			}
			for _, f := range []string{"corpus.jsonl", "questions.jsonl"} {
				if _, err := os.Stat(filepath.Join(dataset, f)); err != nil {
					return nil, fmt.Errorf("-dataset %s: %w (a dataset directory holds corpus.jsonl and questions.jsonl; docs/evaluation.md says how to get one)", dataset, err)
				}
			}
			if !slices.Contains(ask.Modes, answerMode) || answerMode == ask.ModeAuto {
				return nil, fmt.Errorf("-answer-mode: %q is not one of %s", answerMode, strings.Join(ask.Modes[1:], ", "))
			}
			names := strings.Split(strategies, ",")
			for _, n := range names {
				if _, ok := evalStrategies[n]; !ok {
					return nil, fmt.Errorf("unknown strategy %q (want %s)", n, strings.Join(strategyNames(), ", "))
				}
			}
			st, err := stack.New(p, cfg, log)
			if err != nil {
				return nil, err
			}
			runner := service.Loop("eval", func(ctx context.Context) error {
				// The evaluation's end is the process's: its error is kept here, since
				// cancelling ctx races with reporting it as the loop's failure.
				defer cancel()
				r, err := evaluate(ctx, p, st, evalOptions{dir: dataset, strategies: names, limit: limit, details: details, titles: titles, candidates: candidates, noWait: noWait, answerMode: answerMode}, stderr)
				if err == nil {
					err = writeReport(out, r)
				}
				if err != nil {
					evalErr = err
					return err
				}
				report = r
				printReport(stdout, r)
				return nil
			})
			return append(st.Components(), runner), nil
		},
	})
	if evalErr != nil && !errors.Is(err, evalErr) {
		return errors.Join(fmt.Errorf("eval: %w", evalErr), err)
	}
	if err != nil {
		return err
	}
	if report == nil {
		return errors.New("eval: interrupted before the report was written")
	}
	return nil
}

func strategyNames() []string {
	out := make([]string, 0, len(evalStrategies))
	for n := range evalStrategies {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func readJSONL[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// evalCorpus names the corpus the dataset is indexed into.
const evalCorpus = "eval"

// evalOptions say what to evaluate.
type evalOptions struct {
	dir        string   // dataset directory
	strategies []string // strategy names
	limit      int      // first N questions (0 = all)
	details    string   // per-question JSONL output ("" = none)
	titles     string   // titlesAsShipped or titlesOpaque
	candidates bool     // details also hold every fused candidate with its list hits
	noWait     bool     // an indexed data dir: retrieve without waiting for reports
	answerMode string   // the query mode of the answers
}

// questionDetail is one line of the -details file: how a strategy ranked one question's
// documents, for failure analysis.
type questionDetail struct {
	Strategy  string         `json:"strategy"`
	ID        string         `json:"id"`
	Question  string         `json:"question"`
	Gold      []string       `json:"gold"`
	GoldRanks map[string]int `json:"gold_ranks"` // 1-based; 0 = not retrieved
	Top       []string       `json:"top"`
	// Candidates are every passage fusion saw, in fused order (-candidates).
	Candidates []candidate `json:"candidates,omitempty"`
}

// candidate is a fused passage with its rank and score in each list, the subject of its
// document and the entity path that brought it into the graph or subject list.
type candidate struct {
	Document string           `json:"document"`
	Subject  string           `json:"subject,omitempty"`
	Path     []string         `json:"path,omitempty"`
	Lists    []engine.ListHit `json:"lists"`
}

func evaluate(ctx context.Context, p *platform.Platform, st *stack.Stack, o evalOptions, progress io.Writer) (*EvalReport, error) {
	dir, names, limit := o.dir, o.strategies, o.limit
	var details *json.Encoder
	if o.details != "" {
		f, err := os.Create(o.details)
		if err != nil {
			return nil, fmt.Errorf("creating the details file: %w", err)
		}
		defer f.Close()
		bw := bufio.NewWriter(f)
		defer bw.Flush()
		details = json.NewEncoder(bw)
	}
	docs, err := readJSONL[evalDoc](filepath.Join(dir, "corpus.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("reading the corpus: %w", err)
	}
	if o.titles == titlesOpaque {
		for i := range docs {
			docs[i].Title = opaqueTitle(i)
		}
	}
	qs, err := readJSONL[evalQuestion](filepath.Join(dir, "questions.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("reading the questions: %w", err)
	}
	if limit > 0 && limit < len(qs) {
		qs = qs[:limit]
	}
	rep := &EvalReport{Dataset: filepath.Base(filepath.Clean(dir)), Titles: o.titles}

	// Index through the real pipeline: one document per corpus line. A data dir that
	// already holds the whole corpus (-data-dir of an earlier run) is reused.
	start := time.Now()
	prog := newProgress(progress)
	before, err := pipeline.GetStatus(ctx, p.Bus, evalCorpus)
	if err != nil {
		return nil, err
	}
	if before.Stages[0].Total < uint64(len(docs)) {
		for i, d := range docs {
			if _, err := pipeline.PublishDocument(ctx, p.Bus, events.Document{Corpus: evalCorpus, ID: d.ID, Title: d.Title, Text: d.Text}); err != nil {
				return nil, err
			}
			prog.update("publishing %d/%d", i+1, len(docs))
		}
	}
	var status pipeline.Status
	if o.noWait && before.Stages[0].Total >= uint64(len(docs)) {
		status = before
		n, err := p.Vectors.Count(ctx, schema.Collection(evalCorpus, schema.Entities))
		if err != nil {
			return nil, fmt.Errorf("counting entity vectors: %w", err)
		}
		fmt.Fprintf(progress, "-no-wait: retrieving now; %d entity vectors written\n", n)
	} else {
		status, err = pipeline.WaitComplete(ctx, p.Bus, evalCorpus, 250*time.Millisecond, func(s pipeline.Status) {
			prog.update("indexing: %s", stageLine(s))
		})
	}
	prog.done()
	if err != nil {
		return nil, err
	}
	for _, s := range status.Stages {
		if s.DeadLettered > 0 {
			fmt.Fprintf(progress, "warning: %d messages dead-lettered at %s\n", s.DeadLettered, s.Stage)
		}
	}
	rep.Indexing.Seconds = math.Round(time.Since(start).Seconds()*100) / 100
	rep.Indexing.CPUSeconds = math.Round(proccpu.Used().Seconds()*100) / 100
	stats, err := st.Engine.Stats(ctx, evalCorpus)
	if err != nil {
		return nil, err
	}
	rep.Indexing.Chunks, rep.Indexing.Entities, rep.Indexing.Relationships, rep.Indexing.Communities =
		stats.Chunks, stats.Entities, stats.Relationships, stats.Communities
	clients := []*llm.Client{p.LLM}
	if p.Embeddings != p.LLM {
		clients = append(clients, p.Embeddings) // an embedding model without a chat model
	}
	for _, c := range clients {
		if c == nil {
			continue
		}
		u := c.Usage()
		rep.Indexing.LLMCalls += u.Calls
		rep.Indexing.PromptTokens += u.PromptTokens
		rep.Indexing.CompletionTokens += u.CompletionTokens
	}

	// Retrieve for every question with every strategy.
	for _, name := range names {
		sr := StrategyResult{Name: name, Recall: map[string]float64{}, AllGold: map[string]float64{}}
		var lat []float64
		phases := map[string][]float64{}
		sr.Halves = [2]map[string]float64{{}, {}}
		firstHalf := (len(qs) + 1) / 2
		for qi, q := range qs {
			req := evalStrategies[name]
			// 50, with or without -candidates: a request's top_k above the pool widens
			// the lists (the engine takes max(pool, top_k) from each), which changes their
			// standard scores and so the fusion being studied.
			req.Corpus, req.Query, req.TopK = evalCorpus, q.Question, 50
			t0 := time.Now()
			c, timings, err := st.Asker.Retrieve(ctx, req)
			if err != nil {
				return nil, fmt.Errorf("%s: question %s: %w", name, q.ID, err)
			}
			lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
			for ph, ms := range timings {
				phases[ph] = append(phases[ph], ms)
			}
			ranked := rankedDocuments(c.Chunks[:min(len(c.Chunks), 50)])
			half := 0
			if qi >= firstHalf {
				half = 1
			}
			before := maps.Clone(sr.Recall)
			scoreQuestion(&sr, ranked, q.Gold)
			for k, v := range sr.Recall {
				sr.Halves[half][k] += v - before[k]
			}
			if details != nil {
				d := detailOf(name, q, ranked)
				if o.candidates {
					for _, ch := range c.Chunks {
						d.Candidates = append(d.Candidates, candidate{Document: ch.DocumentID, Subject: ch.Subject, Path: ch.GraphPath, Lists: ch.Lists})
					}
				}
				if err := details.Encode(d); err != nil {
					return nil, fmt.Errorf("writing details: %w", err)
				}
			}
			prog.update("retrieving: %s %d/%d", name, len(lat), len(qs))
		}
		n := float64(len(qs))
		for _, k := range evalKs {
			key := fmt.Sprint(k)
			sr.Recall[key] = round4(sr.Recall[key] / n)
			sr.AllGold[key] = round4(sr.AllGold[key] / n)
			sr.Halves[0][key] = round4(sr.Halves[0][key] / float64(firstHalf))
			sr.Halves[1][key] = round4(sr.Halves[1][key] / max(1, n-float64(firstHalf)))
		}
		sr.MRR = round4(sr.MRR / n)
		sr.P50ms, sr.P99ms = percentileMS(lat, 50), percentileMS(lat, 99)
		sr.Phases = make(map[string]PhaseMS, len(phases))
		for ph, ms := range phases {
			sr.Phases[ph] = PhaseMS{P50: percentileMS(ms, 50), P99: percentileMS(ms, 99)}
		}
		rep.Strategies = append(rep.Strategies, sr)
	}
	prog.done()

	ar, err := evaluateAnswers(ctx, st, qs, o.answerMode, p.LLM == nil, details)
	if err != nil {
		return nil, err
	}
	rep.Answers = ar
	return rep, nil
}

// evaluateAnswers answers every question in mode (local by default) and scores the
// answers against the gold ones.
func evaluateAnswers(ctx context.Context, st *stack.Stack, qs []evalQuestion, mode string, extractive bool, details *json.Encoder) (*AnswerResult, error) {
	ar := &AnswerResult{Questions: len(qs), Extractive: extractive, Mode: mode}
	var em, f1 float64
	for _, q := range qs {
		resp, err := st.Asker.Query(ctx, ask.Request{Corpus: evalCorpus, Query: q.Question, Mode: mode}, nil)
		if err != nil {
			return nil, fmt.Errorf("answering %s: %w", q.ID, err)
		}
		contains := containsAnswer(resp.Answer, q.Answer)
		if contains {
			ar.ContainsGold++
		}
		e, f := answerScores(resp.Answer, q.Answer)
		em, f1 = em+e, f1+f
		if details != nil {
			if err := details.Encode(answerDetail{Strategy: "answer", ID: q.ID, Question: q.Question, Gold: q.Answer, Answer: resp.Answer, ContainsGold: contains}); err != nil {
				return nil, fmt.Errorf("writing details: %w", err)
			}
		}
	}
	n := float64(len(qs))
	ar.ContainsGold = round4(ar.ContainsGold / n)
	if !extractive {
		em, f1 = round4(em/n), round4(f1/n)
		ar.ExactMatch, ar.F1 = &em, &f1
	}
	return ar, nil
}

// answerDetail is one line of the -details file for an answer.
type answerDetail struct {
	Strategy     string `json:"strategy"`
	ID           string `json:"id"`
	Question     string `json:"question"`
	Gold         string `json:"gold_answer"`
	Answer       string `json:"answer"`
	ContainsGold bool   `json:"contains_gold"`
}

// Title variants of -titles.
const (
	titlesAsShipped = "as-shipped"
	titlesOpaque    = "opaque"
)

// opaqueTitle is the title of the i-th document under -titles opaque: a name that says
// nothing of what the document is about.
func opaqueTitle(i int) string { return fmt.Sprintf("doc-%05d", i) }

// containsAnswer reports whether pred contains gold as a run of whole words, both
// normalized as for exact match (lower case, no punctuation, no articles).
func containsAnswer(pred, gold string) bool {
	p, g := answerTokens(pred), answerTokens(gold)
	if len(g) == 0 {
		return false
	}
	for i := 0; i+len(g) <= len(p); i++ {
		if slices.Equal(p[i:i+len(g)], g) {
			return true
		}
	}
	return false
}

// progress reports on one terminal line, or every few seconds when stderr is not a
// terminal (CI logs).
type progress struct {
	w    io.Writer
	tty  bool
	last time.Time
	msg  string
}

func newProgress(w io.Writer) *progress {
	f, ok := w.(*os.File)
	return &progress{w: w, tty: ok && term.IsTerminal(int(f.Fd()))}
}

func (p *progress) update(format string, args ...any) {
	p.msg = fmt.Sprintf(format, args...)
	now := time.Now()
	switch {
	case p.tty && now.Sub(p.last) >= 100*time.Millisecond:
		fmt.Fprintf(p.w, "\r\033[K%s", p.msg)
	case !p.tty && now.Sub(p.last) >= 5*time.Second:
		fmt.Fprintln(p.w, p.msg)
	default:
		return
	}
	p.last = now
}

func (p *progress) done() {
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K")
	} else if p.msg != "" {
		fmt.Fprintln(p.w, p.msg)
	}
	p.msg, p.last = "", time.Time{}
}

func stageLine(s pipeline.Status) string {
	var parts []string
	for _, st := range s.Stages {
		parts = append(parts, fmt.Sprintf("%s %d/%d", st.Stage, st.Done, st.Total))
	}
	return strings.Join(parts, ", ")
}

// rankedDocuments turns ranked chunks into ranked distinct documents: a document ranks
// where its best chunk ranks.
func rankedDocuments(chunks []engine.Chunk) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range chunks {
		if c.DocumentID != "" && !seen[c.DocumentID] {
			seen[c.DocumentID] = true
			out = append(out, c.DocumentID)
		}
	}
	return out
}

func detailOf(strategy string, q evalQuestion, ranked []string) questionDetail {
	d := questionDetail{Strategy: strategy, ID: q.ID, Question: q.Question, Gold: q.Gold, GoldRanks: map[string]int{}, Top: ranked[:min(len(ranked), 10)]}
	for _, g := range q.Gold {
		d.GoldRanks[g] = 0
	}
	for i, doc := range ranked {
		if r, ok := d.GoldRanks[doc]; ok && r == 0 {
			d.GoldRanks[doc] = i + 1
		}
	}
	return d
}

// scoreQuestion adds one question's recall@k, all-gold@k and reciprocal rank.
func scoreQuestion(sr *StrategyResult, ranked, gold []string) {
	if len(gold) == 0 {
		return
	}
	isGold := map[string]bool{}
	for _, g := range gold {
		isGold[g] = true
	}
	for _, k := range evalKs {
		found := 0
		for i := 0; i < k && i < len(ranked); i++ {
			if isGold[ranked[i]] {
				found++
			}
		}
		key := fmt.Sprint(k)
		sr.Recall[key] += float64(found) / float64(len(isGold))
		if found == len(isGold) {
			sr.AllGold[key]++
		}
	}
	for i, d := range ranked {
		if isGold[d] {
			sr.MRR += 1 / float64(i+1)
			break
		}
	}
}

func percentileMS(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return math.Round(s[max(0, min(i, len(s)-1))]*100) / 100
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// answerScores are SQuAD-style exact match and token F1 after normalization (lower case,
// no punctuation, no articles).
func answerScores(pred, gold string) (em, f1 float64) {
	p, g := answerTokens(pred), answerTokens(gold)
	if strings.Join(p, " ") == strings.Join(g, " ") {
		em = 1
	}
	common := map[string]int{}
	for _, t := range g {
		common[t]++
	}
	same := 0
	for _, t := range p {
		if common[t] > 0 {
			common[t]--
			same++
		}
	}
	if same == 0 || len(p) == 0 || len(g) == 0 {
		return em, 0
	}
	prec, rec := float64(same)/float64(len(p)), float64(same)/float64(len(g))
	return em, 2 * prec * rec / (prec + rec)
}

func answerTokens(s string) []string {
	s = strings.ToLower(s)
	s = strings.Map(func(r rune) rune {
		if unicode.IsPunct(r) {
			return -1
		}
		return r
	}, s)
	var out []string
	for w := range strings.FieldsSeq(s) {
		if w != "a" && w != "an" && w != "the" {
			out = append(out, w)
		}
	}
	return out
}

func writeReport(path string, r *EvalReport) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func printReport(w io.Writer, r *EvalReport) {
	fmt.Fprintf(w, "dataset %s: indexed %d chunks, %d entities, %d relationships, %d communities in %.1fs",
		r.Dataset, r.Indexing.Chunks, r.Indexing.Entities, r.Indexing.Relationships, r.Indexing.Communities, r.Indexing.Seconds)
	if r.Indexing.LLMCalls > 0 {
		fmt.Fprintf(w, " (%d LLM calls, %d prompt + %d completion tokens)", r.Indexing.LLMCalls, r.Indexing.PromptTokens, r.Indexing.CompletionTokens)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "strategy\tR@2\tR@5\tR@10\tall@2\tall@5\tall@10\tMRR\tR@5 halves\tp50 ms\tp99 ms\t")
	for _, s := range r.Strategies {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f / %.3f\t%.1f\t%.1f\t\n", s.Name, s.Recall["2"], s.Recall["5"], s.Recall["10"],
			s.AllGold["2"], s.AllGold["5"], s.AllGold["10"], s.MRR, s.Halves[0]["5"], s.Halves[1]["5"], s.P50ms, s.P99ms)
	}
	_ = tw.Flush()
	if a := r.Answers; a != nil {
		fmt.Fprintf(w, "answers: contains gold %.3f", a.ContainsGold)
		if a.ExactMatch != nil {
			fmt.Fprintf(w, ", exact match %.3f, F1 %.3f", *a.ExactMatch, *a.F1)
		}
		fmt.Fprintf(w, " over %d questions (%s mode, %s)\n", a.Questions, a.Mode, map[bool]string{true: "extractive, offline", false: "chat model"}[a.Extractive])
	}
}
