package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
)

// TestCrashRecoveryMatchesUninterruptedRun: `graphrag up` killed with SIGKILL in the middle
// of indexing and restarted on the same data dir ends with the same graph as a run that was
// never interrupted: same entities (names, types, mention counts, chunks), same edges, same
// communities, and the same number of chunk vectors; the bolt file passes its fsck.
func TestCrashRecoveryMatchesUninterruptedRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds graphrag and runs it three times")
	}
	const corpus = "demo"
	start := time.Now()
	bin := filepath.Join(t.TempDir(), "graphrag")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building graphrag: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()

	// The uninterrupted run.
	dirA := t.TempDir()
	portA := crashFreePort(t)
	upA := startCrashUp(t, bin, dirA, portA)
	t.Logf("%s: built", time.Since(start))
	crashCLI(t, bin, "publish", "-nats-url", crashURL(portA), "-corpus", corpus, "../../examples/corpus")
	crashCLI(t, bin, "status", "-nats-url", crashURL(portA), "-corpus", corpus, "-wait", "3m")
	t.Logf("%s: A indexed", time.Since(start))
	upA.stop(t)
	t.Logf("%s: A stopped", time.Since(start))

	// The interrupted run: killed once documents are being chunked and before any
	// community has been summarized, then restarted on the same data dir and NATS port.
	dirB := t.TempDir()
	portB := crashFreePort(t)
	upB := startCrashUp(t, bin, dirB, portB)
	b, nc := crashConnect(ctx, t, portB)
	crashCLI(t, bin, "publish", "-nats-url", crashURL(portB), "-corpus", corpus, "../../examples/corpus")
	var atKill pipeline.Status
	for {
		st, err := pipeline.GetStatus(ctx, b, corpus)
		if err != nil {
			t.Fatalf("status before the kill: %v", err)
		}
		// Some extractions merged into the graph, none summarized: the kill lands between
		// graph writes, with communities yet to be detected and reported.
		if scalingStage(t, st, pipeline.StageGrapher).Done >= 1 || st.Complete || scalingStage(t, st, pipeline.StageSummarizer).Done > 0 {
			atKill = st
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("nothing was chunked: %+v", st)
		}
		time.Sleep(5 * time.Millisecond)
	}
	upB.kill(t)
	nc.Close()
	t.Logf("killed mid-run: %s", crashStatusLine(atKill))
	if atKill.Complete || scalingStage(t, atKill, pipeline.StageSummarizer).Done > 0 {
		t.Fatalf("the kill landed after communities were summarized (%s): the test interrupted nothing", crashStatusLine(atKill))
	}
	upB = startCrashUp(t, bin, dirB, portB)
	t.Logf("%s: B restarted", time.Since(start))
	out := crashCLI(t, bin, "status", "-nats-url", crashURL(portB), "-corpus", corpus, "-wait", "3m")
	t.Logf("after the restart:\n%s", out)
	t.Logf("%s: B indexed", time.Since(start))
	upB.stop(t)
	t.Logf("%s: B stopped", time.Since(start))

	ga, va := openCrashStores(t, dirA)
	gb, vb := openCrashStores(t, dirB)
	if err := gb.Check(ctx); err != nil {
		t.Errorf("fsck of the restarted run's graph: %v", err)
	}
	compareCrashGraphs(ctx, t, corpus, ga, gb)
	ca, err := va.Count(ctx, schema.Collection(corpus, schema.Chunks))
	if err != nil {
		t.Fatal(err)
	}
	cb, err := vb.Count(ctx, schema.Collection(corpus, schema.Chunks))
	if err != nil {
		t.Fatal(err)
	}
	if ca != cb || ca == 0 {
		t.Errorf("chunk vectors: uninterrupted %d, restarted %d", ca, cb)
	}
}

// compareCrashGraphs reports the first difference between the two stores' graphs of corpus.
func compareCrashGraphs(ctx context.Context, t *testing.T, corpus string, a, b *boltgraph.Store) {
	t.Helper()
	sa, err := a.Snapshot(ctx, corpus)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := b.Snapshot(ctx, corpus)
	if err != nil {
		t.Fatal(err)
	}
	if len(sa.Keys) == 0 {
		t.Fatal("the uninterrupted run has an empty graph")
	}
	t.Logf("graph: %d entities, %d edges", len(sa.Keys), len(sa.Edges))
	if !reflect.DeepEqual(sa.Keys, sb.Keys) {
		t.Fatalf("entity keys differ: %s", crashFirstDiff(sa.Keys, sb.Keys))
	}
	if len(sa.Edges) != len(sb.Edges) {
		t.Errorf("edges: uninterrupted %d, restarted %d", len(sa.Edges), len(sb.Edges))
	}
	for i := range min(len(sa.Edges), len(sb.Edges)) {
		ea, eb := sa.Edges[i], sb.Edges[i]
		// Weights are float sums: merges replayed in another order may differ in the last bits.
		if ea.Source != eb.Source || ea.Target != eb.Target || !crashClose(ea.Weight, eb.Weight) {
			t.Errorf("edge %d: uninterrupted %s-%s %v, restarted %s-%s %v", i,
				sa.Keys[ea.Source], sa.Keys[ea.Target], ea.Weight, sb.Keys[eb.Source], sb.Keys[eb.Target], eb.Weight)
			break
		}
	}

	ea, err := a.Entities(ctx, corpus, sa.Keys)
	if err != nil {
		t.Fatal(err)
	}
	eb, err := b.Entities(ctx, corpus, sb.Keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(ea) != len(sa.Keys) || len(eb) != len(sb.Keys) {
		t.Fatalf("entities: %d and %d for %d keys", len(ea), len(eb), len(sa.Keys))
	}
	type entity struct {
		Key, Name, Type string
		MentionCount    int
		ChunkIDs        []string
		Communities     []string
	}
	ca, err := a.Communities(ctx, corpus, -1)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := b.Communities(ctx, corpus, -1)
	if err != nil {
		t.Fatal(err)
	}
	// Communities are compared by level and members: ids depend on the detection
	// history (canonicalCommunities).
	na, nb := canonicalCommunities(ca), canonicalCommunities(cb)
	named := func(ids []string, canon map[string]string) []string {
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = canon[id]
		}
		return out
	}
	for i := range ea {
		x := entity{ea[i].Key, ea[i].Name, ea[i].Type, ea[i].MentionCount, ea[i].ChunkIDs, named(ea[i].Communities, na)}
		y := entity{eb[i].Key, eb[i].Name, eb[i].Type, eb[i].MentionCount, eb[i].ChunkIDs, named(eb[i].Communities, nb)}
		if !reflect.DeepEqual(x, y) {
			t.Errorf("entity %q differs:\nuninterrupted %+v\nrestarted     %+v", x.Key, x, y)
			break
		}
		if math.Abs(ea[i].PageRank-eb[i].PageRank) > 1e-9 {
			t.Errorf("entity %q: pagerank uninterrupted %v, restarted %v", x.Key, ea[i].PageRank, eb[i].PageRank)
			break
		}
	}

	t.Logf("communities: %d", len(ca))
	if len(ca) == 0 || len(ca) != len(cb) {
		t.Fatalf("communities: uninterrupted %d, restarted %d", len(ca), len(cb))
	}
	// What detection decides, by canonical name (RelationshipCount and ChildIDs follow).
	decided := func(cs []graphstore.Community, canon map[string]string) map[string]string {
		out := map[string]string{}
		for _, c := range cs {
			out[canon[c.ID]] = fmt.Sprintf("level %d, parent %s, members %v", c.Level, canon[c.ParentID], c.Members)
		}
		return out
	}
	da, db := decided(ca, na), decided(cb, nb)
	for id, x := range da {
		if y, ok := db[id]; !ok || x != y {
			t.Errorf("community %s differs:\nuninterrupted %s\nrestarted     %s", id, x, y)
			break
		}
	}
}

func crashClose(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func crashFirstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("at %d: uninterrupted %q, restarted %q (%d and %d keys)", i, a[i], b[i], len(a), len(b))
		}
	}
	return fmt.Sprintf("uninterrupted %d keys, restarted %d keys", len(a), len(b))
}

// openCrashStores opens a stopped run's graph and vector stores read by the test only.
func openCrashStores(t *testing.T, dir string) (*boltgraph.Store, *embedded.Store) {
	t.Helper()
	g, err := boltgraph.Open(filepath.Join(dir, "graph.db"))
	if err != nil {
		t.Fatalf("opening %s's graph: %v", dir, err)
	}
	t.Cleanup(func() { _ = g.Close() })
	v, err := embedded.Open(filepath.Join(dir, "vectors"))
	if err != nil {
		t.Fatalf("opening %s's vectors: %v", dir, err)
	}
	t.Cleanup(func() { _ = v.Close() })
	return g, v
}

func crashStatusLine(st pipeline.Status) string {
	var sb strings.Builder
	for _, s := range st.Stages {
		fmt.Fprintf(&sb, "%s %d/%d (pending %d, in flight %d); ", s.Stage, s.Done, s.Total, s.Pending, s.InFlight)
	}
	fmt.Fprintf(&sb, "graph detections %d, dirty %v; complete %v", st.Graph.Detections, st.Graph.Dirty, st.Complete)
	return sb.String()
}

type crashUp struct {
	cmd     *exec.Cmd
	logPath string
}

// startCrashUp runs `graphrag up` on dir with its embedded NATS on port, and waits until
// the port accepts connections.
func startCrashUp(t *testing.T, bin, dir string, port int) *crashUp {
	t.Helper()
	u := &crashUp{logPath: filepath.Join(t.TempDir(), "up.log")}
	logf, err := os.Create(u.logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = logf.Close() })
	u.cmd = exec.Command(bin, "up",
		"-data-dir", dir,
		"-nats-port", strconv.Itoa(port),
		"-http-addr", "127.0.0.1:0",
		"-log-level", "warn",
		"-detect-debounce", "300ms",
		// Crash tests compare a killed run's communities with an uninterrupted run's:
		// history independence is under test, which warm start does not promise (ADR 0042).
		"-detect-warm=false",
		// What the killed process held unacknowledged comes back after this on restart,
		// instead of the default minute (live handlers extend it).
		"-chunker-ack-wait", "3s",
		"-extract-ack-wait", "3s",
		"-grapher-ack-wait", "3s",
		"-summarizer-ack-wait", "3s",
	)
	u.cmd.Env = scalingEnv()
	u.cmd.Stdout, u.cmd.Stderr = logf, logf
	if err := u.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if u.cmd.ProcessState == nil {
			_ = u.cmd.Process.Kill()
			_ = u.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("graphrag up log (%s):\n%s", dir, u.logTail())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			_ = c.Close()
			return u
		}
		if time.Now().After(deadline) {
			t.Fatalf("graphrag up did not listen on %d: %v\n%s", port, err, u.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop sends SIGTERM and waits for a clean exit.
func (u *crashUp) stop(t *testing.T) {
	t.Helper()
	if err := u.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := u.cmd.Wait(); err != nil {
		t.Fatalf("graphrag up after SIGTERM: %v\n%s", err, u.logTail())
	}
}

// kill sends SIGKILL: no shutdown code runs.
func (u *crashUp) kill(t *testing.T) {
	t.Helper()
	if err := u.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = u.cmd.Wait()
}

func (u *crashUp) logTail() string {
	b, err := os.ReadFile(u.logPath)
	if err != nil {
		return err.Error()
	}
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// crashCLI runs a graphrag client command and fails the test if it fails.
func crashCLI(t *testing.T, bin string, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Env = scalingEnv()
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("graphrag %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

func crashConnect(ctx context.Context, t *testing.T, port int) (*bus.Bus, *nats.Conn) {
	t.Helper()
	nc, err := bus.Connect(ctx, bus.ConnConfig{URL: crashURL(port), Name: "crash-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	b, err := bus.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return b, nc
}

func crashURL(port int) string { return fmt.Sprintf("nats://127.0.0.1:%d", port) }

func crashFreePort(t *testing.T) int {
	t.Helper()
	addr := scalingFreeAddr(t)
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
