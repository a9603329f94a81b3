package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/storeoutage"
)

// The outage scenario stops Neo4j, and separately Milvus, for -outage-neo4j and
// -outage-milvus while the multi-process layout indexes the documents (all published at
// once), asking questions about a corpus indexed before, then starts the server again on
// its port and data (scripts/integration's stop.sh and start.sh, through
// pkg/storeoutage, as the integration test of a Neo4j outage does). A run passes when
// nothing was dead-lettered, every question asked during the outage was answered 503
// with Retry-After, the waiting stages went on once the store was back, and the corpus
// holds exactly what the uninterrupted run's holds.

// resumeTarget is how soon after a store's return the pipeline should go on.
const resumeTarget = 30 * time.Second

// outageStore is one store the scenario stops.
type outageStore struct {
	name   string // Neo4j, Milvus
	store  string // how status and the API name it
	outage time.Duration
	server storeoutage.Server
}

func (h *harness) outageStores() ([]outageStore, error) {
	var out []outageStore
	if h.opt.outageNeo4j > 0 {
		u, err := url.Parse(h.opt.neo4jURI)
		if err != nil || u.Port() == "" {
			return nil, fmt.Errorf("the Neo4j outage needs the port of -neo4j-uri %q", h.opt.neo4jURI)
		}
		out = append(out, outageStore{name: "Neo4j", store: "graph store", outage: h.opt.outageNeo4j, server: storeoutage.Server{
			Scripts: filepath.Join(h.opt.integrationDir, "neo4j"), RunDir: h.opt.neo4jRunDir, Args: []string{"gds"},
			Env: []string{"GRAPHRAG_NEO4J_PORT=" + u.Port()}, Stderr: os.Stderr}})
	}
	if h.opt.outageMilvus > 0 {
		out = append(out, outageStore{name: "Milvus", store: "vector store", outage: h.opt.outageMilvus, server: storeoutage.Server{
			Scripts: filepath.Join(h.opt.integrationDir, "milvus"), RunDir: h.opt.milvusRunDir, Stderr: os.Stderr}})
	}
	return out, nil
}

func outageCorpus(i int) string { return fmt.Sprintf("chaos_o%02d", i) }

// outageScenario runs the multi-process layout uninterrupted, then once per store with
// that store stopped mid-indexing. The uninterrupted run's corpus is what the questions
// during the outages ask about; it is dropped at the end.
func (h *harness) outageScenario(ctx context.Context) scenarioReport {
	rep := scenarioReport{name: fmt.Sprintf("outage: Neo4j (%s), Milvus (%s) stopped while the multi-process layout indexes, questions asked meanwhile", h.opt.outageNeo4j, h.opt.outageMilvus)}
	stores, err := h.outageStores()
	if err != nil {
		rep.baseline.err = err
		return rep
	}
	base := outageCorpus(0)
	rep.baseline = h.runOnce(ctx, runSpec{scenario: "outage", corpus: base, layout: func(dir string) (layout, error) {
		return h.newMultiLayout(dir, base)
	}})
	if rep.baseline.passed() {
		for i, s := range stores {
			if ctx.Err() != nil {
				break
			}
			rep.runs = append(rep.runs, h.runOutage(ctx, i+1, s, base, rep.baseline.dump))
		}
	}
	if err := h.dropCorpora(context.WithoutCancel(ctx), []string{base}); err != nil {
		h.log.Warn("dropping the uninterrupted run's corpus", "err", err)
	}
	return rep
}

// runOutage is one run with s stopped for its outage.
func (h *harness) runOutage(ctx context.Context, index int, s outageStore, asked string, base dump) runResult {
	res := runResult{scenario: "outage " + s.name, index: index}
	corpus := outageCorpus(index)
	dir := filepath.Join(h.opt.work, fmt.Sprintf("outage-%02d", index))
	l, err := h.newMultiLayout(dir, corpus)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		res.err = err
		return res
	}
	err = l.start(ctx)
	if err == nil {
		err = h.driveOutage(ctx, l, s, corpus, asked, &res)
	}
	for _, p := range l.all() {
		res.restarts += p.restarts()
	}
	if stopErr := l.stop(); err == nil && stopErr != nil {
		err = stopErr
	}
	if err == nil {
		res.dump, err = l.dump(ctx)
	}
	if err == nil {
		res.self = selfCheck(res.dump)
		res.diff = compare(base, res.dump)
	}
	if derr := l.drop(context.WithoutCancel(ctx)); derr != nil {
		h.log.Warn("dropping the run's corpus", "corpus", corpus, "err", derr)
	}
	res.err = err
	lost, extra, changed := res.diff.total()
	h.log.Info("run", "scenario", res.scenario, "took", res.took.Round(time.Second).String(), "lost", lost, "extra", extra,
		"changed", changed, "dead_lettered", res.deadLettered, "self", len(res.self), "err", err, "dump", res.dump.sizes())
	return res
}

// driveOutage publishes every document, runs the outage once the grapher has merged
// something, and waits until the corpus is complete.
func (h *harness) driveOutage(ctx context.Context, l *multiLayout, s outageStore, corpus, asked string, res *runResult) error {
	nc, err := bus.Connect(ctx, bus.ConnConfig{URL: l.natsURL(), Name: "chaos", MaxReconnectWait: time.Second})
	if err != nil {
		return err
	}
	defer nc.Close()
	b, err := bus.New(nc, bus.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		return err
	}
	var queryAddr string
	for _, p := range l.procs {
		if p.name == "query" {
			queryAddr = "http://" + p.httpAddr()
		}
	}
	start := time.Now()
	published := make(chan error, 1)
	go func() { published <- publishRetrying(ctx, b, h.withCorpus(corpus)) }()
	client := &http.Client{Timeout: 2 * time.Minute}
	i := 0
	out, err := storeoutage.Run(ctx, storeoutage.Config{
		Server: s.server, For: s.outage, Store: s.store,
		Status: func(ctx context.Context) (pipeline.Status, error) { return status(ctx, b, corpus) },
		Ask: func(ctx context.Context) storeoutage.Answer {
			i++
			return storeoutage.Ask(ctx, client, queryAddr, asked, "What is "+h.docs[(i*7)%len(h.docs)].Title+"?")
		},
		AskEvery: h.opt.askEvery,
		Log:      h.log.With("store", s.name),
	})
	res.outage = &out
	if perr := <-published; err == nil {
		err = perr
	}
	if err != nil {
		return err
	}
	if err := h.finish(ctx, b, corpus, start, res); err != nil {
		return err
	}
	var problems []string
	if out.Resumed < 0 {
		problems = append(problems, fmt.Sprintf("the waiting stages did not go on within 5 minutes of %s's return", s.name))
	}
	if bad := unexpectedAnswers(out.Answers); len(bad) > 0 {
		problems = append(problems, fmt.Sprintf("%d of %d questions during the outage not answered 503 with Retry-After (%s)",
			len(bad), len(out.Answers), storeoutage.Codes(bad)))
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// unexpectedAnswers are the answers that are not 503 with Retry-After.
func unexpectedAnswers(as []storeoutage.Answer) []storeoutage.Answer {
	var bad []storeoutage.Answer
	for _, a := range as {
		if a.Code != http.StatusServiceUnavailable || a.RetryAfter == "" {
			bad = append(bad, a)
		}
	}
	return bad
}

// outageLine describes an outage run for the report.
func outageLine(r *storeoutage.Report) string {
	if r == nil {
		return "-"
	}
	paused := "status never named the store"
	if r.Paused.Stage != "" {
		paused = fmt.Sprintf("status named it after %s (%s waiting)", r.PausedAfter.Round(100*time.Millisecond), join(r.Waiting))
	}
	resumed := "did not go on"
	if r.Resumed >= 0 {
		resumed = fmt.Sprintf("went on %s after the return (pause record gone after %s)", r.Resumed.Round(100*time.Millisecond), r.Unpaused.Round(100*time.Millisecond))
	}
	return fmt.Sprintf("stopped at %s, down %s; %s; questions: %s; %s", storeoutage.Line(r.Before), r.Down.Round(time.Second),
		paused, storeoutage.Codes(r.Answers), resumed)
}
