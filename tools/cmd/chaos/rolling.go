package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/pipeline"
)

// The rolling scenario updates every service of the multi-process layout one replica at
// a time, as `kubectl rollout restart` does with the Deployments' strategies, while
// documents are published and a load generator asks questions through a load balancer:
//
//   - extractors, summarizer and query replicas (RollingUpdate, maxSurge 1,
//     maxUnavailable 0): a new replica is started and, once ready, the old one gets
//     SIGTERM;
//   - the layout's one grapher (unsharded, it holds the lease; Recreate): SIGTERM,
//     then the new one.
//
// The balancer routes each question to a ready replica round-robin; it adds a replica
// once it is ready and removes one a random 0–lb-lag after its SIGTERM, as Kubernetes
// endpoints and kube-proxy follow a terminating pod a moment late. A run passes when the
// corpus is indexed exactly as the uninterrupted run indexed it, nothing was
// dead-lettered, every replica stopped within its grace period, and at least 99.9 % of
// the questions were answered (200).

// minAnswered is the share of questions a rolling run must answer.
const minAnswered = 0.999

// askers is how many questions the load generator has in flight, each asker pausing
// askPause between its questions.
const (
	askers   = 4
	askPause = 20 * time.Millisecond
)

// queryStats counts the load generator's questions.
type queryStats struct {
	mu       sync.Mutex
	sent     int
	answered int
	failures map[string]int // reason → count
}

func (q *queryStats) record(reason string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sent++
	if reason == "" {
		q.answered++
		return
	}
	if q.failures == nil {
		q.failures = map[string]int{}
	}
	q.failures[reason]++
}

func (q *queryStats) share() float64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.sent == 0 {
		return 0
	}
	return float64(q.answered) / float64(q.sent)
}

func (q *queryStats) String() string {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := fmt.Sprintf("%d of %d answered", q.answered, q.sent)
	if len(q.failures) > 0 {
		var reasons []string
		for r, n := range q.failures {
			reasons = append(reasons, fmt.Sprintf("%d × %s", n, r))
		}
		sort.Strings(reasons)
		s += " (" + strings.Join(reasons, "; ") + ")"
	}
	return s
}

// balancer is a load balancer's view of the query replicas: the addresses it routes to.
type balancer struct {
	mu        sync.Mutex
	endpoints []string
	next      int
}

func (b *balancer) add(addr string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.endpoints = append(b.endpoints, addr)
}

func (b *balancer) remove(addr string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.endpoints = slices.DeleteFunc(b.endpoints, func(e string) bool { return e == addr })
}

func (b *balancer) pick() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.endpoints) == 0 {
		return ""
	}
	b.next++
	return b.endpoints[b.next%len(b.endpoints)]
}

// rollingScenario runs the multi-process layout (with two query replicas) uninterrupted,
// then with a rolling restart of every service per run; each run on a corpus of its own
// in the shared Neo4j and Milvus, dropped after it.
func (h *harness) rollingScenario(ctx context.Context) scenarioReport {
	rep := scenarioReport{name: fmt.Sprintf("rolling: every service restarted one replica at a time with SIGTERM (%d extractors, grapher, summarizer, 2 query replicas; drain delay %s) under query load", h.opt.extractors, h.opt.drainDelay)}
	rep.baseline = h.runRolling(ctx, 0, nil)
	if rep.baseline.passed() {
		for i := 1; i <= h.opt.runsRolling && ctx.Err() == nil; i++ {
			rep.runs = append(rep.runs, h.runRolling(ctx, i, rep.baseline.dump))
		}
	}
	if l, err := h.newMultiLayout(h.opt.work, rollingCorpus(0)); err == nil {
		if err := l.drop(context.WithoutCancel(ctx)); err != nil {
			h.log.Warn("dropping the uninterrupted run's corpus", "err", err)
		}
	}
	return rep
}

func rollingCorpus(i int) string { return fmt.Sprintf("chaos_r%02d", i) }

// newRollingLayout is the multi-process layout with a second query replica, the query
// replicas draining for -drain-delay on SIGTERM.
func (h *harness) newRollingLayout(dir, corpus string) (*multiLayout, error) {
	l, err := h.newMultiLayout(dir, corpus)
	if err != nil {
		return nil, err
	}
	l.procs = slices.DeleteFunc(l.procs, func(p *proc) bool { return p.name == "query" })
	for _, name := range []string{"query-1", "query-2"} {
		p, err := h.rollingProc(l, name)
		if err != nil {
			return nil, err
		}
		l.procs = append(l.procs, p)
	}
	return l, nil
}

// rollingProc is the process name of the rolling layout (its service is the name up to
// the first "-"), with the drain delay for query replicas.
func (h *harness) rollingProc(l *multiLayout, name string) (*proc, error) {
	bin, _, _ := strings.Cut(name, "-")
	p, err := l.serviceProc(name, bin)
	if err != nil {
		return nil, err
	}
	if bin == "query" {
		p.args = append(p.args, "-drain-delay", h.opt.drainDelay.String())
	}
	return p, nil
}

// httpAddr is the address a service process serves HTTP on.
func (p *proc) httpAddr() string {
	for i, a := range p.args[:len(p.args)-1] {
		if a == "-http-addr" {
			return p.args[i+1]
		}
	}
	return ""
}

// runRolling is one run: the uninterrupted one (index 0: no restart, no load) or one
// with a rolling restart under load, compared with base.
func (h *harness) runRolling(ctx context.Context, index int, base dump) runResult {
	res := runResult{scenario: "rolling", index: index}
	corpus := rollingCorpus(index)
	dir := filepath.Join(h.opt.work, fmt.Sprintf("rolling-%02d", index))
	if err := os.RemoveAll(dir); err != nil {
		res.err = err
		return res
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		res.err = err
		return res
	}
	l, err := h.newRollingLayout(dir, corpus)
	if err != nil {
		res.err = err
		return res
	}
	err = l.start(ctx)
	var stats queryStats
	if err == nil {
		err = h.driveRolling(ctx, l, corpus, index > 0, &res, &stats)
	}
	if stopErr := l.stop(); err == nil && stopErr != nil {
		err = stopErr
	}
	if err == nil {
		res.dump, err = l.dump(ctx)
	}
	if err == nil {
		res.self = selfCheck(res.dump)
		if base != nil {
			res.diff = compare(base, res.dump)
		}
	}
	if index > 0 {
		if derr := l.drop(context.WithoutCancel(ctx)); derr != nil {
			h.log.Warn("dropping the run's corpus", "corpus", corpus, "err", derr)
		}
		if err == nil && stats.share() < minAnswered {
			err = fmt.Errorf("%.2f %% of the questions answered, below %.1f %%", 100*stats.share(), 100*minAnswered)
		}
		res.queries = stats.String()
		res.sent, res.answered = stats.sent, stats.answered
	}
	res.err = err
	lost, extra, changed := res.diff.total()
	h.log.Info("run", "scenario", "rolling", "run", index, "restarts", join(res.kills), "queries", res.queries,
		"took", res.took.Round(time.Second).String(), "lost", lost, "extra", extra, "changed", changed,
		"dead_lettered", res.deadLettered, "self", len(res.self), "err", err, "dump", res.dump.sizes())
	return res
}

// driveRolling publishes the first batch and waits for it (the corpus exists for the
// questions), then publishes the rest while the load generator asks and, if roll, every
// service is restarted in turn; it returns once the corpus is complete.
func (h *harness) driveRolling(ctx context.Context, l *multiLayout, corpus string, roll bool, res *runResult, stats *queryStats) error {
	nc, err := bus.Connect(ctx, bus.ConnConfig{URL: l.natsURL(), Name: "chaos", MaxReconnectWait: time.Second})
	if err != nil {
		return err
	}
	defer nc.Close()
	b, err := bus.New(nc, bus.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		return err
	}
	batches := slices.Collect(slices.Chunk(h.withCorpus(corpus), (len(h.docs)+h.opt.batches-1)/h.opt.batches))
	start := time.Now()
	if !roll {
		err := h.publishWaiting(ctx, b, corpus, batches)
		if err == nil {
			err = h.finish(ctx, b, corpus, start, res)
		}
		return err
	}
	if err := h.publishWaiting(ctx, b, corpus, batches[:1]); err != nil {
		return err
	}
	if _, err := waitComplete(ctx, b, corpus, h.opt.runTimeout, false, func(pipeline.Status) {}); err != nil {
		return err
	}
	lb := &balancer{}
	for _, p := range l.procs {
		if strings.HasPrefix(p.name, "query") {
			lb.add(p.httpAddr())
		}
	}
	loadCtx, stopLoad := context.WithCancel(ctx)
	var load sync.WaitGroup
	for range askers {
		load.Go(func() { h.askLoop(loadCtx, lb, corpus, stats) })
	}
	defer func() { stopLoad(); load.Wait() }()

	published := make(chan error, 1)
	go func() { published <- h.publishSpread(ctx, b, batches[1:], time.Now(), 20*time.Second) }()
	rollErr := h.rollingRestart(ctx, l, lb, start, res)
	if err := <-published; err != nil {
		return err
	}
	if rollErr != nil {
		return rollErr
	}
	err = h.finish(ctx, b, corpus, start, res)
	stopLoad()
	load.Wait()
	return err
}

// finish waits until the corpus is complete and records the time and dead letters.
func (h *harness) finish(ctx context.Context, b *bus.Bus, corpus string, start time.Time, res *runResult) error {
	st, err := waitComplete(ctx, b, corpus, h.opt.runTimeout, false, func(st pipeline.Status) {
		res.early = append(res.early, statusLine(st))
	})
	res.took = time.Since(start)
	for _, stage := range st.Stages {
		res.deadLettered += stage.DeadLettered
	}
	return err
}

// rollingRestart replaces every service process in turn, recording each step in
// res.kills as process@seconds (restarts are not kills, but the report's column fits).
func (h *harness) rollingRestart(ctx context.Context, l *multiLayout, lb *balancer, start time.Time, res *runResult) error {
	order := slices.Clone(l.procs)
	sort.SliceStable(order, func(i, j int) bool { return rollOrder(order[i].name) < rollOrder(order[j].name) })
	for _, old := range order {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		repl, err := h.rollingProc(l, old.name+"-r")
		if err != nil {
			return err
		}
		bin, _, _ := strings.Cut(old.name, "-")
		if bin != "grapher" { // surge: the new replica serves before the old one stops
			if err := startAll(ctx, []*proc{repl}); err != nil {
				return err
			}
			if bin == "query" {
				lb.add(repl.httpAddr())
			}
		}
		if bin == "query" {
			addr, lag := old.httpAddr(), time.Duration(h.rng.Int64N(int64(h.opt.lbLag)+1))
			time.AfterFunc(lag, func() { lb.remove(addr) })
		}
		at := time.Since(start)
		if err := old.stop(35 * time.Second); err != nil {
			return fmt.Errorf("rolling restart: %w", err)
		}
		res.kills = append(res.kills, fmt.Sprintf("%s@%.1fs", old.name, at.Seconds()))
		if bin == "grapher" { // Recreate: the new one starts once the old one is gone
			if err := startAll(ctx, []*proc{repl}); err != nil {
				return err
			}
		}
		l.procs[slices.Index(l.procs, old)] = repl
	}
	return nil
}

// rollOrder is the order kubectl rollout restart of every deployment would be applied in
// a release: the workers first, the API last.
func rollOrder(name string) int {
	for i, prefix := range []string{"extractor", "grapher", "summarizer", "query"} {
		if strings.HasPrefix(name, prefix) {
			return i
		}
	}
	return 99
}

// askLoop asks questions about the corpus's documents through the balancer until ctx ends.
func (h *harness) askLoop(ctx context.Context, lb *balancer, corpus string, stats *queryStats) {
	client := &http.Client{Timeout: 60 * time.Second}
	for i := 0; ctx.Err() == nil; i++ {
		d := h.docs[(i*7)%len(h.docs)]
		body, _ := json.Marshal(map[string]any{"corpus": corpus, "query": "What is " + d.Title + "?", "mode": "local"})
		addr := lb.pick()
		if addr == "" {
			stats.record("no replica to route to")
			continue
		}
		req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodPost, "http://"+addr+"/v1/query", bytes.NewReader(body))
		if err != nil {
			stats.record(err.Error())
			continue
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		switch {
		case err != nil:
			stats.record("transport: " + shortErr(err))
		case resp.StatusCode != http.StatusOK:
			stats.record(fmt.Sprintf("HTTP %d", resp.StatusCode))
		default:
			stats.record("")
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
		select {
		case <-ctx.Done():
		case <-time.After(askPause):
		}
	}
}

// shortErr keeps the end of a transport error (the cause), not the URL.
func shortErr(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	return s
}
