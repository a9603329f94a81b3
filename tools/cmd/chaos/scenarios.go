package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/storeoutage"
)

// runResult is one run of a scenario; index 0 is the uninterrupted one.
type runResult struct {
	scenario     string
	index        int
	kills        []string // process@seconds after publishing
	restarts     int
	took         time.Duration // from publishing to complete
	deadLettered uint64
	dump         dump
	diff         diff
	// early holds the statuses that said complete before the kills were done, for
	// comparison with the time the run really completed.
	early []string
	self  []string // selfCheck problems
	// queries is what the load generator got (rolling runs): sent and answered.
	queries        string
	sent, answered int
	// outage is what a store outage measured (outage runs), shard what a run of the
	// shards scenario did.
	outage *storeoutage.Report
	shard  *shardRun
	err    error
}

func (r runResult) passed() bool {
	lost, extra, changed := r.diff.total()
	return r.err == nil && lost == 0 && extra == 0 && changed == 0 && r.deadLettered == 0 && len(r.self) == 0 && len(r.early) == 0
}

type scenarioReport struct {
	name     string
	baseline runResult
	runs     []runResult
}

func (s scenarioReport) failed() bool {
	if !s.baseline.passed() {
		return true
	}
	return slices.ContainsFunc(s.runs, func(r runResult) bool { return !r.passed() })
}

// runSpec is what runOnce needs to know of a run.
type runSpec struct {
	scenario string
	index    int
	corpus   string
	layout   func(dir string) (layout, error)
	kills    int
	window   time.Duration // kills land between 5 % and 80 % of it after publishing
	base     dump          // nil for the uninterrupted run
}

// upScenarios runs the uninterrupted `graphrag up` run, then the runs killing up, the
// runs killing its NATS server and the runs killing nodes of its NATS cluster, all
// compared with it.
func (h *harness) upScenarios(ctx context.Context) []scenarioReport {
	servers := func(n int) func(dir string) (layout, error) {
		return func(dir string) (layout, error) { return h.newUpLayout(dir, n) }
	}
	base := h.runOnce(ctx, runSpec{scenario: "up", corpus: h.corpus, layout: servers(0)})
	up := scenarioReport{name: "up: kill -9 of graphrag up", baseline: base}
	nats := scenarioReport{name: "nats: kill -9 of the NATS server under graphrag up", baseline: base}
	cluster := scenarioReport{name: "cluster: kill -9 of a stream leader, then of another node, of a 3-node JetStream cluster (R3) under graphrag up", baseline: base}
	if !base.passed() {
		return []scenarioReport{up}
	}
	scenario := func(rep *scenarioReport, name string, runs, layoutServers int, kills func() int) {
		w := newWindow(base.took)
		for i := 1; i <= runs && ctx.Err() == nil; i++ {
			rep.runs = append(rep.runs, h.runKilling(ctx, w, runSpec{scenario: name, index: i, corpus: h.corpus,
				layout: servers(layoutServers), kills: kills(), base: base.dump}))
		}
	}
	var reports []scenarioReport
	if h.opt.runsUp > 0 {
		scenario(&up, "up", h.opt.runsUp, 0, func() int { return 1 + h.rng.IntN(3) })
		reports = append(reports, up)
	}
	if h.opt.runsNATS > 0 {
		scenario(&nats, "nats", h.opt.runsNATS, 1, func() int { return 1 + h.rng.IntN(2) })
		reports = append(reports, nats)
	}
	if h.opt.runsCluster > 0 {
		scenario(&cluster, "cluster", h.opt.runsCluster, 3, func() int { return 2 })
		reports = append(reports, cluster)
	}
	return reports
}

// window is how long runs of a scenario take to complete: the median of the last runs
// (the uninterrupted run first, which starts cold and is often the slowest).
type window struct{ took []time.Duration }

func newWindow(first time.Duration) *window { return &window{took: []time.Duration{first}} }

func (w *window) get() time.Duration {
	last := w.took[max(0, len(w.took)-5):]
	sorted := slices.Clone(last)
	slices.Sort(sorted)
	return sorted[len(sorted)/2]
}

// runKilling runs s with kill points spread over the window; a run that completed
// before its first kill interrupted nothing and is run again (at most twice more).
func (h *harness) runKilling(ctx context.Context, w *window, s runSpec) runResult {
	var res runResult
	for range 3 {
		s.window = w.get()
		res = h.runOnce(ctx, s)
		if res.passed() {
			w.took = append(w.took, res.took)
		}
		if len(res.kills) > 0 || !res.passed() || ctx.Err() != nil {
			return res
		}
	}
	return res
}

// multiScenario runs the multi-process layout uninterrupted, then with kills; each run
// on a corpus of its own in the shared Neo4j and Milvus, dropped after it.
func (h *harness) multiScenario(ctx context.Context) scenarioReport {
	spec := func(i int) runSpec {
		corpus := fmt.Sprintf("chaos_m%02d", i)
		return runSpec{scenario: "multi", index: i, corpus: corpus, layout: func(dir string) (layout, error) {
			return h.newMultiLayout(dir, corpus)
		}}
	}
	base := h.runOnce(ctx, spec(0))
	rep := scenarioReport{name: fmt.Sprintf("multi: kill -9 of any process (NATS, %d extractors, grapher, summarizer, query)", h.opt.extractors), baseline: base}
	if base.passed() {
		w := newWindow(base.took)
		for i := 1; i <= h.opt.runsMulti && ctx.Err() == nil; i++ {
			s := spec(i)
			s.kills, s.base = 1+h.rng.IntN(3), base.dump
			rep.runs = append(rep.runs, h.runKilling(ctx, w, s))
		}
	}
	if l, err := h.newMultiLayout(h.opt.work, spec(0).corpus); err == nil {
		if err := l.drop(context.WithoutCancel(ctx)); err != nil {
			h.log.Warn("dropping the uninterrupted run's corpus", "err", err)
		}
	}
	return rep
}

// runOnce starts the layout, publishes the documents, kills processes at random points
// while they are indexed, waits until status says the corpus is complete, stops
// everything and compares what was indexed with the uninterrupted run.
func (h *harness) runOnce(ctx context.Context, s runSpec) runResult {
	res := runResult{scenario: s.scenario, index: s.index}
	dir := filepath.Join(h.opt.work, fmt.Sprintf("%s-%02d", s.scenario, s.index))
	// A run again (its first try completed before a kill) starts afresh.
	if err := os.RemoveAll(dir); err != nil {
		res.err = err
		return res
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		res.err = err
		return res
	}
	l, err := s.layout(dir)
	if err != nil {
		res.err = err
		return res
	}
	err = l.start(ctx)
	if err == nil {
		err = h.drive(ctx, l, s, &res)
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
		if s.base != nil {
			res.diff = compare(s.base, res.dump)
		}
	}
	if ml, ok := l.(*multiLayout); ok && s.index > 0 {
		if derr := ml.drop(context.WithoutCancel(ctx)); derr != nil {
			h.log.Warn("dropping the run's corpus", "corpus", s.corpus, "err", derr)
		}
	}
	res.err = err
	lost, extra, changed := res.diff.total()
	h.log.Info("run", "scenario", s.scenario, "run", s.index, "kills", join(res.kills), "restarts", res.restarts,
		"took", res.took.Round(time.Second).String(), "lost", lost, "extra", extra, "changed", changed,
		"dead_lettered", res.deadLettered, "self", len(res.self), "err", err, "dump", res.dump.sizes())
	return res
}

// drive publishes the documents in batches, kills processes, and waits for completion.
// The uninterrupted run publishes a batch once the one before is indexed; the other runs
// publish them spread over the window, retrying while NATS is down. Batches make several
// detection runs replace communities, which is where reports went missing or stale.
func (h *harness) drive(ctx context.Context, l layout, s runSpec, res *runResult) error {
	nc, err := bus.Connect(ctx, bus.ConnConfig{URL: l.natsURL(), Name: "chaos", MaxReconnectWait: time.Second})
	if err != nil {
		return err
	}
	defer nc.Close()
	b, err := bus.New(nc, bus.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		return err
	}
	batches := slices.Collect(slices.Chunk(h.withCorpus(s.corpus), (len(h.docs)+h.opt.batches-1)/h.opt.batches))
	start := time.Now()
	published := make(chan error, 1)
	if s.kills == 0 {
		published <- h.publishWaiting(ctx, b, s.corpus, batches)
	} else {
		go func() { published <- h.publishSpread(ctx, b, batches, start, s.window) }()
	}
	sawComplete := h.killAtRandom(ctx, l, b, s, start, published, res)
	if err := <-published; err != nil {
		return err
	}
	st, err := waitComplete(ctx, b, s.corpus, h.opt.runTimeout, sawComplete, func(st pipeline.Status) {
		h.log.Warn("status said complete, then not", "scenario", s.scenario, "run", s.index, "now", statusLine(st))
		res.early = append(res.early, statusLine(st))
	})
	res.took = time.Since(start)
	for _, stage := range st.Stages {
		res.deadLettered += stage.DeadLettered
	}
	if c, ok := l.(clustered); ok && err == nil {
		err = c.checkReplicas(ctx, b)
	}
	return err
}

// killAtRandom kills s.kills random victims at random points of the window; it stops
// early, reporting true, when every batch is published and the corpus is complete.
func (h *harness) killAtRandom(ctx context.Context, l layout, b *bus.Bus, s runSpec, start time.Time, published chan error, res *runResult) bool {
	var at []time.Duration
	for range s.kills {
		at = append(at, s.window/20+time.Duration(h.rng.Int64N(int64(s.window*3/4)+1)))
	}
	slices.Sort(at)
	for _, t := range at {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Until(start.Add(t))):
		}
		if len(published) > 0 { // every batch out: is there anything left to interrupt?
			if st, err := status(ctx, b, s.corpus); err == nil && st.Complete {
				h.log.Info("kill skipped: the corpus is complete already", "scenario", s.scenario, "run", s.index, "status", statusLine(st))
				return true
			}
		}
		var v *proc
		why := ""
		if c, ok := l.(clustered); ok {
			v, why = c.pick(ctx, b, h.rng)
		}
		if v == nil {
			victims := l.victims()
			v = victims[h.rng.IntN(len(victims))]
		}
		if v.kill() { // else it is down already, waiting for its restart
			if why != "" {
				why = " (" + why + ")"
			}
			res.kills = append(res.kills, fmt.Sprintf("%s%s@%.1fs", v.name, why, time.Since(start).Seconds()))
		}
	}
	return false
}

// publishWaiting publishes each batch once the corpus is complete with the ones before.
func (h *harness) publishWaiting(ctx context.Context, b *bus.Bus, corpus string, batches [][]events.Document) error {
	for i, batch := range batches {
		if i > 0 {
			if _, err := waitComplete(ctx, b, corpus, h.opt.runTimeout, false, func(pipeline.Status) {}); err != nil {
				return err
			}
		}
		if err := publishRetrying(ctx, b, batch); err != nil {
			return err
		}
	}
	return nil
}

// publishSpread publishes batch i at start + i × window / len(batches).
func (h *harness) publishSpread(ctx context.Context, b *bus.Bus, batches [][]events.Document, start time.Time, window time.Duration) error {
	for i, batch := range batches {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Until(start.Add(time.Duration(i) * window / time.Duration(len(batches))))):
		}
		if err := publishRetrying(ctx, b, batch); err != nil {
			return err
		}
	}
	return nil
}

// publishRetrying publishes every document, retrying while NATS is down (a publish that
// was stored before its ack was lost is a duplicate, dropped by its message id).
func publishRetrying(ctx context.Context, b *bus.Bus, docs []events.Document) error {
	for _, d := range docs {
		deadline := time.Now().Add(3 * time.Minute)
		for {
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			_, err := pipeline.PublishDocument(pctx, b, d)
			cancel()
			if err == nil {
				break
			}
			if ctx.Err() != nil || time.Now().After(deadline) {
				return fmt.Errorf("publishing %s: %w", d.ID, err)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	return nil
}

// waitComplete polls status until it says complete twice a second apart, tolerating
// errors while a NATS server is down. A status that said complete and then not (status
// calling a corpus complete too early) is reported to onFlip.
func waitComplete(ctx context.Context, b *bus.Bus, corpus string, timeout time.Duration, sawComplete bool,
	onFlip func(pipeline.Status)) (pipeline.Status, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var st pipeline.Status
	var lastErr error
	completeSince := time.Time{}
	if sawComplete {
		completeSince = time.Now()
	}
	for {
		cur, err := status(ctx, b, corpus)
		switch {
		case err != nil:
			lastErr, completeSince = err, time.Time{}
		case cur.Complete:
			st, lastErr = cur, nil
			if completeSince.IsZero() {
				completeSince = time.Now()
			} else if time.Since(completeSince) >= time.Second {
				return st, nil
			}
		default:
			if !completeSince.IsZero() {
				onFlip(cur)
			}
			st, lastErr, completeSince = cur, nil, time.Time{}
		}
		select {
		case <-ctx.Done():
			return st, fmt.Errorf("corpus %s not complete (state %q, last error %s): %w", corpus, st.State, fmt.Sprint(lastErr), ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func statusLine(st pipeline.Status) string {
	var sb strings.Builder
	for _, s := range st.Stages {
		fmt.Fprintf(&sb, "%s %d/%d (pending %d, in flight %d, dlq %d); ", s.Stage, s.Done, s.Total, s.Pending, s.InFlight, s.DeadLettered)
	}
	g := st.Graph
	fmt.Fprintf(&sb, "graph dirty %v, detections %d, communities %d, unreported %d; %s", g.Dirty, g.Detections, g.Communities, g.Unreported, st.State)
	return sb.String()
}

// status reads the corpus's status within 10 s: a request written to a connection
// whose server was just killed is lost, and would wait for its answer forever.
func status(ctx context.Context, b *bus.Bus, corpus string) (pipeline.Status, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return pipeline.GetStatus(ctx, b, corpus)
}

// renderReport is the Markdown report of the suite.
func renderReport(o options, docs int, reports []scenarioReport) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "## Chaos suite: %s, seed %d, %d documents of %s\n\n", time.Now().UTC().Format("2006-01-02"), o.seed, docs, filepath.Base(o.dataset))
	sb.WriteString("| scenario | runs | kills | restarts | lost | extra | changed | dead-lettered | failed runs | time to complete (uninterrupted; runs median, max) |\n")
	sb.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range reports {
		var kills, restarts, lost, extra, changed, failed int
		var dl uint64
		var took []time.Duration
		for _, run := range r.runs {
			l, e, c := run.diff.total()
			kills, restarts, lost, extra, changed, dl = kills+len(run.kills), restarts+run.restarts, lost+l, extra+e, changed+c, dl+run.deadLettered
			if !run.passed() {
				failed++
			}
			took = append(took, run.took)
		}
		slices.Sort(took)
		med, longest := time.Duration(0), time.Duration(0)
		if len(took) > 0 {
			med, longest = took[len(took)/2], took[len(took)-1]
		}
		fmt.Fprintf(&sb, "| %s | %d | %d | %d | %d | %d | %d | %d | %d | %s; %s, %s |\n", r.name, len(r.runs), kills, restarts, lost, extra,
			changed, dl, failed, r.baseline.took.Round(time.Second), med.Round(time.Second), longest.Round(time.Second))
	}
	for _, r := range reports {
		fmt.Fprintf(&sb, "\n### %s\n\nuninterrupted: %s; %s\n\n", r.name, r.baseline.dump.sizes(), outcome(r.baseline))
		sb.WriteString("| run | kills (process@seconds after publishing) | restarts | complete after | outcome |\n|---|---|---|---|---|\n")
		for _, run := range r.runs {
			fmt.Fprintf(&sb, "| %d | %s | %d | %s | %s |\n", run.index, join(run.kills), run.restarts, run.took.Round(time.Second), outcome(run))
		}
	}
	return sb.String()
}

func outcome(r runResult) string {
	var parts []string
	if r.err != nil {
		parts = append(parts, "error: "+strings.ReplaceAll(r.err.Error(), "|", "/"))
	}
	if lost, extra, changed := r.diff.total(); lost+extra+changed > 0 {
		parts = append(parts, fmt.Sprintf("lost %d, extra %d, changed %d (%s)", lost, extra, changed, strings.Join(r.diff.examples, "; ")))
	}
	if r.deadLettered > 0 {
		parts = append(parts, fmt.Sprintf("%d dead-lettered", r.deadLettered))
	}
	if len(r.early) > 0 {
		parts = append(parts, fmt.Sprintf("status said complete too early %d time(s) (%s)", len(r.early), r.early[0]))
	}
	if len(r.self) > 0 {
		parts = append(parts, fmt.Sprintf("%d report problems (%s)", len(r.self), strings.Join(r.self[:min(3, len(r.self))], "; ")))
	}
	if len(parts) == 0 {
		parts = append(parts, "identical")
	}
	if r.queries != "" {
		parts = append(parts, "queries "+r.queries)
	}
	if r.outage != nil {
		parts = append(parts, "outage: "+outageLine(r.outage))
	}
	if r.shard != nil {
		parts = append(parts, fmt.Sprintf("%d grapher(s), every corpus complete after %s; CPU per corpus: %s", r.shard.graphers,
			r.took.Round(100*time.Millisecond), cpuLine(r.shard.cpu, r.shard.corpora)))
	}
	return strings.Join(parts, "; ")
}
