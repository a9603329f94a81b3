package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream" //nolint:depguard // the test reads a stage's stream itself

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/natsembed"
	"github.com/graphrag/graphrag/pkg/pipeline"
)

// TestExtractorScalesHorizontally is what deploy/k8s relies on when KEDA adds and removes
// extractor replicas: three extractor processes on one NATS server share each corpus's
// durable consumers, one is killed with SIGKILL mid-run, and the survivors finish the
// corpus with every chunk extracted exactly once (after the stream's de-duplication).
//
// Work sharing is read from each process's own /metrics (the
// graphrag_extractor_extractions counter); exactly-once and completeness from the streams.
func TestExtractorScalesHorizontally(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the extractor and runs three processes")
	}
	const (
		corpus   = "scaling"
		docs     = 200
		replicas = 3
	)
	bin := filepath.Join(t.TempDir(), "extractor")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "github.com/graphrag/graphrag/services/extractor/cmd/extractor")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the extractor: %v\n%s", err, out)
	}

	srv, err := natsembed.Start(natsembed.Config{DataDir: t.TempDir(), Port: -1, MaxPayload: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	nc, err := bus.Connect(ctx, bus.ConnConfig{URL: srv.ClientURL(), Name: "scaling-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	b, err := bus.New(nc, bus.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if err := pipeline.Provision(ctx, b, pipeline.DefaultTopology()); err != nil {
		t.Fatal(err)
	}

	reps := make([]*scalingReplica, replicas)
	for i := range reps {
		reps[i] = startScalingReplica(t, bin, srv.ClientURL(), i)
	}
	for _, r := range reps {
		r.waitReady(ctx, t)
	}

	for i := range docs {
		d := events.Document{Corpus: corpus, ID: fmt.Sprintf("doc-%03d", i), Title: fmt.Sprintf("Report %d", i),
			ContentType: events.ContentTypeText, Text: scalingDocument(i)}
		if _, err := pipeline.PublishDocument(ctx, b, d); err != nil {
			t.Fatal(err)
		}
	}

	// Kill replica 0 once it has extracted something and while chunks are still waiting,
	// so the kill interrupts work that the survivors must pick up.
	victim := reps[0]
	var killedAt pipeline.StageStatus
	for {
		st, err := pipeline.GetStatus(ctx, b, corpus)
		if err != nil {
			t.Fatal(err)
		}
		ex := scalingStage(t, st, pipeline.StageExtractor)
		n, err := victim.extractions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 && ex.Pending > 0 {
			victim.lastCount = n
			killedAt = ex
			break
		}
		if scalingStage(t, st, pipeline.StageChunker).Pending == 0 && ex.Total > 0 && ex.Pending == 0 {
			t.Fatalf("the run finished before the kill (victim extracted %d): the test no longer tests failover", n)
		}
		if ctx.Err() != nil {
			t.Fatal(ctx.Err())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = victim.cmd.Wait()
	t.Logf("killed replica 0 after %d extractions, with %d chunks pending and %d in flight (of %d so far)",
		victim.lastCount, killedAt.Pending, killedAt.InFlight, killedAt.Total)

	// Both stages of the extractor done: every document chunked, every chunk extracted.
	var final pipeline.Status
	for {
		if final, err = pipeline.GetStatus(ctx, b, corpus); err != nil {
			t.Fatal(err)
		}
		ch, ex := scalingStage(t, final, pipeline.StageChunker), scalingStage(t, final, pipeline.StageExtractor)
		if ch.Total == docs && ch.Done == docs && ex.Total > 0 && ex.Done == ex.Total {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("extraction did not complete: %+v", final.Stages)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if ci, err := b.ConsumerInfo(ctx, pipeline.StreamName(events.KindChunks), pipeline.Durable(pipeline.StageExtractor)); err == nil {
		// Deliveries beyond the chunk count are redeliveries: what the victim held unacked.
		t.Logf("extractor consumer: %d deliveries for %d chunks", ci.Delivered, scalingStage(t, final, pipeline.StageExtractor).Total)
	}
	for _, s := range final.Stages[:2] {
		if s.DeadLettered != 0 {
			t.Errorf("%s dead-lettered %d messages", s.Stage, s.DeadLettered)
		}
	}

	// The work was shared: every replica extracted chunks, the survivors also after the kill.
	total := victim.lastCount
	for i, r := range reps[1:] {
		n, err := r.extractions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("replica %d extracted %d chunks", i+1, n)
		if n == 0 {
			t.Errorf("replica %d extracted nothing: the consumer is not shared", i+1)
		}
		total += n
	}
	chunks := scalingChunkIDs(ctx, t, b, events.KindChunks, corpus, func(data []byte) (string, error) {
		var c events.Chunk
		err := events.Decode(data, &c)
		return c.ID, err
	})
	extracted := scalingChunkIDs(ctx, t, b, events.KindExtractions, corpus, func(data []byte) (string, error) {
		var x events.Extraction
		err := events.Decode(data, &x)
		return x.ChunkID, err
	})
	// The counters are not an exact tally (the victim's is its last scrape before the kill,
	// and a chunk it was extracting when killed is counted again by a survivor): the
	// streams below are the ground truth.
	t.Logf("%d documents, %d chunks, %d extraction events; the replicas' counters sum to %d",
		docs, len(chunks.ids), extracted.messages, total)
	// Nothing twice: one extraction event per chunk (a chunk redelivered after the kill is
	// extracted again, and the stream drops the second event by its content-derived id).
	if extracted.messages != len(extracted.ids) {
		t.Errorf("%d extraction events for %d distinct chunks: some chunk reached the graph twice", extracted.messages, len(extracted.ids))
	}
	if chunks.messages != len(chunks.ids) {
		t.Errorf("%d chunk events for %d distinct chunks", chunks.messages, len(chunks.ids))
	}
	// Nothing lost: every chunk has its extraction.
	for id := range chunks.ids {
		if !extracted.ids[id] {
			t.Errorf("chunk %s has no extraction", id)
		}
	}
	if len(extracted.ids) != len(chunks.ids) {
		t.Errorf("%d chunks extracted, %d chunked", len(extracted.ids), len(chunks.ids))
	}

	// The survivors drain and stop cleanly on SIGTERM, as on a scale-down.
	for i, r := range reps[1:] {
		if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := r.cmd.Wait(); err != nil {
			t.Errorf("replica %d after SIGTERM: %v\n%s", i+1, err, r.logTail())
		}
	}
}

func scalingStage(t *testing.T, st pipeline.Status, name string) pipeline.StageStatus {
	t.Helper()
	for _, s := range st.Stages {
		if s.Stage == name {
			return s
		}
	}
	t.Fatalf("no stage %s in %+v", name, st)
	return pipeline.StageStatus{}
}

// scalingDocument is a few hundred words naming people, places and organisations, so the
// offline extractor has entities to find and each document makes several chunks.
func scalingDocument(i int) string {
	people := []string{"Ada Quillane", "Tomas Reyburn", "Mara Dunmore", "Ivo Brennick", "Lena Sellen", "Otto Kittering"}
	places := []string{"Marrow Bay", "Gullhead Point", "Sellen Valley", "Port Ardry", "Hester Sound"}
	orgs := []string{"the Marine Institute", "the Fishers Cooperative", "the Harbour School", "the Town Council"}
	var sb strings.Builder
	for p := range 12 {
		a, c := people[(i+p)%len(people)], people[(i+2*p+1)%len(people)]
		pl, o := places[(i*3+p)%len(places)], orgs[(i+p*5)%len(orgs)]
		fmt.Fprintf(&sb, "In %d, %s of %s met %s at %s to discuss survey %d-%d. ", 1990+(i+p)%30, a, o, c, pl, i, p)
		fmt.Fprintf(&sb, "%s later wrote that %s had changed how %s measured the tides near %s. ", c, o, a, pl)
		fmt.Fprintf(&sb, "The report numbered %d-%d was filed with %s and read aloud in %s.\n\n", i, p, o, pl)
	}
	return sb.String()
}

type scalingReplica struct {
	cmd       *exec.Cmd
	addr      string
	logPath   string
	lastCount int64
}

// startScalingReplica runs one extractor process with its own data dir (its embedded vector
// store is per process) against the shared NATS server.
func startScalingReplica(t *testing.T, bin, natsURL string, i int) *scalingReplica {
	t.Helper()
	dir := t.TempDir()
	r := &scalingReplica{addr: scalingFreeAddr(t), logPath: filepath.Join(dir, "log")}
	logf, err := os.Create(r.logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = logf.Close() })
	r.cmd = exec.Command(bin,
		"-nats-url", natsURL,
		"-data-dir", filepath.Join(dir, "data"),
		"-http-addr", r.addr,
		"-log-format", "text",
		"-log-level", "warn",
		"-shutdown-timeout", "10s",
		// Small chunks and few workers per replica: more messages, so that the kill
		// lands mid-run and all three replicas get a share.
		"-chunk-tokens", "120",
		"-chunk-overlap", "20",
		"-extract-workers", "2",
		"-chunker-workers", "2",
		// A dead replica's unacknowledged messages come back after this (live handlers
		// extend it), instead of the default minute.
		"-extract-ack-wait", "2s",
		"-chunker-ack-wait", "2s",
	)
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

// scalingEnv is the test's environment without GRAPHRAG_ variables, which the process would
// read as flags.
func scalingEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GRAPHRAG_") {
			env = append(env, kv)
		}
	}
	return env
}

// scalingFreeAddr picks a free loopback port. The process binds it a moment later; the window
// is small and a collision fails the test loudly (the process exits).
func scalingFreeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func (r *scalingReplica) logTail() string {
	b, err := os.ReadFile(r.logPath)
	if err != nil {
		return err.Error()
	}
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

func (r *scalingReplica) waitReady(ctx context.Context, t *testing.T) {
	t.Helper()
	for {
		if r.cmd.ProcessState != nil {
			t.Fatalf("replica exited: %s\n%s", r.cmd.ProcessState, r.logTail())
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.addr+"/readyz", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("replica on %s not ready: %v\n%s", r.addr, err, r.logTail())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// extractions reads the process's graphrag_extractor_extractions counter (all methods).
func (r *scalingReplica) extractions(ctx context.Context) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.addr+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("scraping %s: %w", r.addr, err)
	}
	defer resp.Body.Close()
	var sum int64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "graphrag_extractor_extractions_total{") && !strings.HasPrefix(line, "graphrag_extractor_extractions_total ") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			return 0, fmt.Errorf("parsing %q: %w", line, err)
		}
		sum += int64(v)
	}
	return sum, sc.Err()
}

type scalingIDs struct {
	ids      map[string]bool
	messages int
}

// scalingChunkIDs reads every event of kind k for corpus from its stream with an ordered
// consumer and collects the chunk ids id extracts.
func scalingChunkIDs(ctx context.Context, t *testing.T, b *bus.Bus, k events.Kind, corpus string, id func([]byte) (string, error)) scalingIDs {
	t.Helper()
	subject := events.Subject(k, corpus)
	counts, err := b.SubjectCounts(ctx, pipeline.StreamName(k), subject)
	if err != nil {
		t.Fatal(err)
	}
	want := int(counts[subject])
	c, err := b.JetStream().OrderedConsumer(ctx, pipeline.StreamName(k), jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		t.Fatal(err)
	}
	out := scalingIDs{ids: map[string]bool{}}
	for out.messages < want {
		batch, err := c.Fetch(want-out.messages, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range batch.Messages() {
			s, err := id(m.Data())
			if err != nil {
				t.Fatalf("decoding %s: %v", subject, err)
			}
			out.ids[s] = true
			out.messages++
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, nats.ErrTimeout) {
			t.Fatal(err)
		}
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d %s events", out.messages, want, subject)
		}
	}
	return out
}
