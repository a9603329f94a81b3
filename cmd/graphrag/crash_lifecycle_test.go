package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
)

// Process-level crash tests of the document lifecycle (ADR 0022): a replica killed with
// SIGKILL in the middle of a burst of versions, and `graphrag up` killed in the middle of
// a deletion cascade, end exactly where an uninterrupted run ends.

// TestVersionBurstKillReplica: three extractor processes (chunker and extractor stages)
// share a burst of 1,000 versions of 20 ids; one is killed with SIGKILL mid-burst. The
// grapher and summarizer run in the test process on one graph store. Each process keeps
// its own embedded vector store (they cannot share one), so the chunk records are
// checked in the integration run on Milvus; here the document records and the graph
// (entities, relationships with weights and mention counts, communities, entity
// records) must equal a pipeline given only the winning versions.
func TestVersionBurstKillReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the extractor and runs three processes")
	}
	bin := buildExtractor(t)
	const corpus = "killed"
	h := newLifecycleHarness(t, 0)
	procs := make([]*scalingReplica, 3)
	for i := range procs {
		procs[i] = startExtractorProcess(t, bin, h.srv.ClientURL(), i, h.cfg.ChunkTokens, h.cfg.ChunkOverlap)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	for _, p := range procs {
		p.waitReady(ctx, t)
	}
	evs := make([]lifecycleEvent, 1000)
	for n := range evs {
		doc := n % 20
		evs[n] = lifecycleEvent{ID: "doc-" + strconv.Itoa(doc), Title: "Survey " + strconv.Itoa(doc), Text: versionText(doc, n)}
	}
	h.publishBurst(corpus, evs)
	var atKill pipeline.Status
	for {
		st, err := pipeline.GetStatus(ctx, h.b, corpus)
		if err != nil {
			t.Fatal(err)
		}
		ch := scalingStage(t, st, pipeline.StageChunker)
		if ch.Done >= 50 && ch.Pending > 0 {
			atKill = st
			break
		}
		if ch.Pending == 0 && ch.InFlight == 0 {
			t.Fatalf("the burst was handled before the kill: %s", crashStatusLine(st))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := procs[0].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = procs[0].cmd.Wait()
	t.Logf("killed replica 0 at %s", crashStatusLine(atKill))
	h.waitDone(corpus, 4*time.Minute)
	h.checkRecords(corpus, evs)
	if d := diffDumps(graphPart(h.dump(corpus)), graphPart(reference(t, corpus, evs))); d != "" {
		t.Fatalf("the graph after the burst and the kill differs from the winning versions alone:\n%s", d)
	}
	for i, p := range procs[1:] {
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := p.cmd.Wait(); err != nil {
			t.Errorf("replica %d after SIGTERM: %v\n%s", i+1, err, p.logTail())
		}
	}
}

// graphPart is a dump without the chunk records, for runs whose chunks are spread over
// several stores.
func graphPart(d corpusDump) corpusDump {
	d.Chunks = nil
	return d
}

func buildExtractor(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "extractor")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "github.com/graphrag/graphrag/services/extractor/cmd/extractor")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the extractor: %v\n%s", err, out)
	}
	return bin
}

// startExtractorProcess runs one extractor process with its own data dir on natsURL,
// chunking as the harness does.
func startExtractorProcess(t *testing.T, bin, natsURL string, i, chunkTokens, overlap int, extra ...string) *scalingReplica {
	t.Helper()
	dir := t.TempDir()
	r := &scalingReplica{addr: scalingFreeAddr(t), logPath: filepath.Join(dir, "log")}
	logf, err := os.Create(r.logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = logf.Close() })
	args := append([]string{
		"-nats-url", natsURL,
		"-data-dir", filepath.Join(dir, "data"),
		"-http-addr", r.addr,
		"-log-format", "text",
		"-log-level", "warn",
		"-shutdown-timeout", "10s",
		"-chunk-tokens", strconv.Itoa(chunkTokens),
		"-chunk-overlap", strconv.Itoa(overlap),
		"-extract-ack-wait", "2s",
		"-chunker-ack-wait", "2s",
	}, extra...)
	r.cmd = exec.Command(bin, args...)
	r.cmd.Env = scalingEnv()
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if r.cmd.ProcessState == nil {
			_ = r.cmd.Process.Kill()
			_ = r.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("replica %d log:\n%s", i, r.logTail())
		}
	})
	return r
}

// TestDeletionCrashMatchesUninterrupted: `graphrag up` indexes the sample corpus, then
// half of it is deleted with `graphrag delete`; in one run the process is killed with
// SIGKILL while the cascade is under way and restarted on the same data dir. Both runs
// end with the same stores: chunks, entities, relationships, communities, entity
// records.
func TestDeletionCrashMatchesUninterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds graphrag and runs it three times")
	}
	const corpus = "demo"
	bin := filepath.Join(t.TempDir(), "graphrag")
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building graphrag: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	victims := []string{"01_marrow_bay_overview.md", "03_storm_hester_1998.md", "05_marine_institute.md",
		"06_quillane_reyburn_collaboration.md", "08_fishers_cooperative.md", "11_sellen_valley_railway.txt", "13_lantern_tide_festival.md"}
	run := func(kill bool) string {
		dir, port := t.TempDir(), crashFreePort(t)
		up := startCrashUp(t, bin, dir, port)
		crashCLI(t, bin, "publish", "-nats-url", crashURL(port), "-corpus", corpus, "../../examples/corpus") //nolint:contextcheck // crashCLI runs under t.Context()
		crashCLI(t, bin, "status", "-nats-url", crashURL(port), "-corpus", corpus, "-wait", "3m")            //nolint:contextcheck // crashCLI runs under t.Context()
		b, nc := crashConnect(ctx, t, port)
		crashCLI(t, bin, append([]string{"delete", "-nats-url", crashURL(port), "-corpus", corpus}, victims...)...) //nolint:contextcheck // crashCLI runs under t.Context()
		if kill {
			// Killed once the chunker has taken up a deletion and before the cascade has
			// reached the end (its removals merged and communities detected again).
			for {
				st, err := pipeline.GetStatus(ctx, b, corpus)
				if err != nil {
					t.Fatal(err)
				}
				if scalingStage(t, st, pipeline.StageChunker).Done > 14 {
					if st.Complete {
						t.Fatalf("the cascade finished before the kill: %s", crashStatusLine(st))
					}
					t.Logf("killed mid-cascade: %s", crashStatusLine(st))
					break
				}
				if ctx.Err() != nil {
					t.Fatalf("no deletion was taken up: %s", crashStatusLine(st))
				}
				time.Sleep(2 * time.Millisecond)
			}
			up.kill(t)
			nc.Close()
			up = startCrashUp(t, bin, dir, port)
		}
		crashCLI(t, bin, "status", "-nats-url", crashURL(port), "-corpus", corpus, "-wait", "3m") //nolint:contextcheck // crashCLI runs under t.Context()
		up.stop(t)
		return dir
	}
	a, b := run(false), run(true)
	ga, va := openCrashStores(t, a)
	gb, vb := openCrashStores(t, b)
	da, db := dumpCorpus(ctx, t, ga, va, corpus), dumpCorpus(ctx, t, gb, vb, corpus)
	if len(da.Chunks) == 0 || len(da.Entities) == 0 {
		t.Fatal("the uninterrupted run deleted everything: the test compares nothing")
	}
	for _, c := range da.Chunks {
		for _, v := range victims {
			if c.Attrs[schema.ChunkDocumentID] == v {
				t.Fatalf("the uninterrupted run kept chunk %s of deleted %s", c.ID, v)
			}
		}
	}
	if d := diffDumps(da, db); d != "" {
		t.Fatalf("the run killed mid-cascade differs from the uninterrupted one:\n%s", d)
	}
	t.Logf("both runs: %d chunks, %d entities, %d relationships, %d communities", len(da.Chunks), len(da.Entities),
		len(da.Relationships), len(da.Communities))
}
