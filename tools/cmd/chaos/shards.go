package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
)

// The shards scenario runs the multi-process layout with N graphers sharing the corpora
// by shard (-shards, ADR 0064), publishes -shard-corpora corpora of -shard-docs
// documents each at once, and times how long until every corpus is complete, for each
// grapher count of -shard-graphers; with -shard-kill, once more with the most graphers
// and one of them killed with SIGKILL mid-run. Every run must index each corpus exactly
// as the first run did, with nothing dead-lettered. The CPU time every process used is
// reported per corpus, to show where the time goes when the machine, not the graphers,
// is the limit.

// shardRun is what one run of the shards scenario measured, beyond runResult.
type shardRun struct {
	graphers int
	corpora  int
	killed   bool
	// cpu is the CPU time each service used (graphers, extractors, ...; neo4j and milvus
	// for the store servers), over the run.
	cpu map[string]time.Duration
}

func shardCorpus(run, i int) string { return fmt.Sprintf("chaos_s%d_%02d", run, i) }

// shardsScenario runs one timed run per grapher count, then the run with a kill.
func (h *harness) shardsScenario(ctx context.Context) scenarioReport {
	rep := scenarioReport{name: fmt.Sprintf("shards: %d corpora of %d documents published at once, graphers %s on %d shards",
		h.opt.shardCorpora, h.opt.shardDocs, joinInts(h.opt.shardGraphers), h.opt.shards)}
	if len(h.pool) < h.opt.shardCorpora*h.opt.shardDocs {
		rep.baseline.err = fmt.Errorf("the dataset has %d documents, the shards scenario needs %d", len(h.pool), h.opt.shardCorpora*h.opt.shardDocs)
		return rep
	}
	var base []dump
	took := map[int]time.Duration{}
	for i, g := range h.opt.shardGraphers {
		if ctx.Err() != nil {
			break
		}
		res, dumps := h.runShards(ctx, i, g, false, base, 0)
		if i == 0 {
			rep.baseline = res
			if !res.passed() {
				return rep
			}
			base = dumps
		} else {
			rep.runs = append(rep.runs, res)
		}
		took[g] = res.took
	}
	if h.opt.shardKill && ctx.Err() == nil {
		g := slices.Max(h.opt.shardGraphers)
		res, _ := h.runShards(ctx, len(h.opt.shardGraphers), g, true, base, took[g])
		rep.runs = append(rep.runs, res)
	}
	return rep
}

// runShards is one run with graphers graphers; kill kills one at a random point of the
// first 20–60 % of window (the time the same layout took without a kill). It returns the
// dump of each corpus.
func (h *harness) runShards(ctx context.Context, run, graphers int, kill bool, base []dump, window time.Duration) (runResult, []dump) {
	res := runResult{scenario: "shards", index: run, shard: &shardRun{graphers: graphers, corpora: h.opt.shardCorpora, killed: kill}}
	corpora := make([]string, h.opt.shardCorpora)
	for i := range corpora {
		corpora[i] = shardCorpus(run, i)
	}
	dir := filepath.Join(h.opt.work, fmt.Sprintf("shards-%02d", run))
	l, err := h.newShardLayout(dir, corpora[0], graphers)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		res.err = err
		return res, nil
	}
	storesBefore := h.storeCPU()
	err = l.start(ctx)
	if err == nil {
		err = h.driveShards(ctx, l, corpora, kill, window, &res)
	}
	for _, p := range l.all() {
		res.restarts += p.restarts()
	}
	if stopErr := l.stop(); err == nil && stopErr != nil {
		err = stopErr
	}
	res.shard.cpu = map[string]time.Duration{}
	for _, p := range l.all() {
		svc, _, _ := strings.Cut(p.name, "-")
		res.shard.cpu[svc] += p.cpuTime()
	}
	for name, t := range h.storeCPU() {
		res.shard.cpu[name] = t - storesBefore[name]
	}
	var dumps []dump
	if err == nil {
		dumps, err = h.dumpCorpora(ctx, corpora)
	}
	if err == nil {
		res.dump = dumps[0]
		for i, d := range dumps {
			for _, p := range selfCheck(d) {
				res.self = append(res.self, corpora[i]+": "+p)
			}
			if base != nil {
				res.diff.add(compare(base[i], d), corpora[i])
			}
		}
	}
	if derr := h.dropCorpora(context.WithoutCancel(ctx), corpora); derr != nil {
		h.log.Warn("dropping the run's corpora", "err", derr)
	}
	res.err = err
	lost, extra, changed := res.diff.total()
	h.log.Info("run", "scenario", "shards", "run", run, "graphers", graphers, "kills", join(res.kills), "took", res.took.Round(time.Second).String(),
		"lost", lost, "extra", extra, "changed", changed, "dead_lettered", res.deadLettered, "self", len(res.self), "err", err, "cpu", cpuLine(res.shard.cpu, res.shard.corpora))
	return res, dumps
}

// newShardLayout is the multi-process layout with graphers graphers on -shards shards.
func (h *harness) newShardLayout(dir, corpus string, graphers int) (*multiLayout, error) {
	l, err := h.newMultiLayout(dir, corpus)
	if err != nil {
		return nil, err
	}
	at := slices.IndexFunc(l.procs, func(p *proc) bool { return p.name == "grapher" })
	var gs []*proc
	for i := range graphers {
		p, err := l.serviceProc("grapher-"+strconv.Itoa(i+1), "grapher")
		if err != nil {
			return nil, err
		}
		p.args = append(p.args, "-shards", strconv.Itoa(h.opt.shards))
		gs = append(gs, p)
	}
	l.procs = slices.Concat(l.procs[:at], gs, l.procs[at+1:])
	return l, nil
}

// driveShards publishes every corpus at once, kills a grapher if asked, and waits until
// every corpus is complete; res.took is the time from the first publish until then.
func (h *harness) driveShards(ctx context.Context, l *multiLayout, corpora []string, kill bool, window time.Duration, res *runResult) error {
	nc, err := bus.Connect(ctx, bus.ConnConfig{URL: l.natsURL(), Name: "chaos", MaxReconnectWait: time.Second})
	if err != nil {
		return err
	}
	defer nc.Close()
	b, err := bus.New(nc, bus.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		return err
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, len(corpora))
	for i, c := range corpora {
		docs := slices.Clone(h.pool[i*h.opt.shardDocs : (i+1)*h.opt.shardDocs])
		for j := range docs {
			docs[j].Corpus = c
		}
		wg.Go(func() { errs[i] = publishRetrying(ctx, b, docs) })
	}
	var killed sync.WaitGroup
	stopKill := func() {}
	if kill {
		at := window/5 + time.Duration(h.rng.Int64N(int64(window*2/5)+1))
		var graphers []*proc
		for _, p := range l.procs {
			if strings.HasPrefix(p.name, "grapher") {
				graphers = append(graphers, p)
			}
		}
		victim := graphers[h.rng.IntN(len(graphers))]
		killCtx, cancel := context.WithCancel(ctx)
		stopKill = cancel
		killed.Go(func() {
			select {
			case <-killCtx.Done():
			case <-time.After(time.Until(start.Add(at))):
				if victim.kill() {
					res.kills = append(res.kills, fmt.Sprintf("%s@%.1fs", victim.name, time.Since(start).Seconds()))
				}
			}
		})
	}
	// The kill, if it has not come yet, does not come once every corpus is complete.
	defer func() { stopKill(); killed.Wait() }()
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	h.log.Info("shards: every corpus published", "corpora", len(corpora), "after", time.Since(start).Round(100*time.Millisecond))
	// Poll every corpus not yet complete; a corpus's time is when it was first seen
	// complete. Then each must still be complete (status never says complete too early).
	pending := map[string]bool{}
	for _, c := range corpora {
		pending[c] = true
	}
	deadline := start.Add(h.opt.runTimeout)
	for len(pending) > 0 {
		for _, c := range slices.Sorted(maps.Keys(pending)) {
			if st, err := status(ctx, b, c); err == nil && st.Complete {
				delete(pending, c)
			}
		}
		res.took = time.Since(start)
		if len(pending) == 0 {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%d of %d corpora not complete after %s", len(pending), len(corpora), h.opt.runTimeout)
		}
		// Status requests cost the NATS server CPU the pipeline needs: once a second.
		time.Sleep(time.Second)
	}
	stopKill()
	killed.Wait()
	if kill && len(res.kills) == 0 {
		return fmt.Errorf("every corpus was complete after %s, before the grapher's kill", res.took.Round(time.Second))
	}
	time.Sleep(time.Second)
	for _, c := range corpora {
		st, err := status(ctx, b, c)
		if err != nil {
			return err
		}
		if !st.Complete {
			res.early = append(res.early, c+": "+statusLine(st))
		}
		for _, s := range st.Stages {
			res.deadLettered += s.DeadLettered
		}
	}
	return nil
}

// storeCPU is the CPU time the store servers have used so far, by name (neo4j, milvus),
// read from /proc for the pids their start.sh recorded; a server not found is left out.
func (h *harness) storeCPU() map[string]time.Duration {
	out := map[string]time.Duration{}
	for name, pidFile := range map[string]string{
		"neo4j":  filepath.Join(h.opt.neo4jRunDir, "neo4j-gds.pid"),
		"milvus": filepath.Join(h.opt.milvusRunDir, "milvus.pid"),
	} {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			continue
		}
		if t, err := procCPU(strings.TrimSpace(string(b))); err == nil {
			out[name] = t
		}
	}
	return out
}

// procCPU reads a process's user and system time from /proc/PID/stat (clock ticks of
// 1/100 s, Linux's USER_HZ), its waited-for children included.
func procCPU(pid string) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces: the fields after it follow its ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("reading /proc/%s/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 15 {
		return 0, fmt.Errorf("reading /proc/%s/stat: %d fields", pid, len(f))
	}
	var ticks int64
	for _, x := range f[11:15] { // utime, stime, cutime, cstime (fields 14–17)
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("reading /proc/%s/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}

// cpuLine is the CPU time per corpus of each service, the most first.
func cpuLine(cpu map[string]time.Duration, corpora int) string {
	names := slices.SortedFunc(maps.Keys(cpu), func(a, b string) int { return int(cpu[b] - cpu[a]) })
	var total time.Duration
	parts := make([]string, 0, len(names)+1)
	for _, n := range names {
		total += cpu[n]
	}
	parts = append(parts, fmt.Sprintf("total %.2f s", total.Seconds()/float64(corpora)))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %.2f s", n, cpu[n].Seconds()/float64(corpora)))
	}
	return strings.Join(parts, ", ")
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
