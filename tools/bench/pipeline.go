package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
	"github.com/graphrag/graphrag/pkg/natsembed"
	"github.com/graphrag/graphrag/pkg/pipeline"
)

const (
	pipelineLatency     = 50 * time.Millisecond
	pipelineEndpointMax = 16 // requests the fake endpoint serves at once
	pipelinePerReplica  = 8  // -extract-workers and -llm-concurrency of each replica
)

// goBinary returns prebuilt when set, or builds the package (a path relative to the
// repository root) once into the work dir as name.
func goBinary(ctx context.Context, cfg *benchConfig, prebuilt, name, pkg string) (string, error) {
	if prebuilt != "" {
		return prebuilt, nil
	}
	bin := filepath.Join(cfg.workDir, name)
	out, err := exec.CommandContext(ctx, "go", "env", "GOWORK").Output()
	if err != nil {
		return "", fmt.Errorf("locating go.work: %w", err)
	}
	work := strings.TrimSpace(string(out))
	if work == "" || work == "off" {
		return "", fmt.Errorf("locating go.work: run the benchmark inside the repository (or pass -%s-bin)", name)
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	build.Dir = filepath.Dir(work)
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %w\n%s", name, err, out)
	}
	return bin, nil
}

func benchFreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

type pipelineResult struct {
	replicas      int
	chunks        int
	rate          float64 // chunks/s between 10% and 90% of the extractions
	wall          time.Duration
	maxConcurrent int64
	chatCalls     int64
}

// runPipelineOnce publishes chunk events to a fresh in-process NATS server, starts n
// extractor processes against it and the fake endpoint, and times the extractions.
func runPipelineOnce(ctx context.Context, cfg *benchConfig, bin string, n, chunks int) (pipelineResult, error) {
	res := pipelineResult{replicas: n, chunks: chunks}
	dir := filepath.Join(cfg.workDir, fmt.Sprintf("pipeline-%d", n))
	srv, err := natsembed.Start(natsembed.Config{DataDir: filepath.Join(dir, "nats"), Port: -1}) //nolint:contextcheck // Start takes no context
	if err != nil {
		return res, fmt.Errorf("starting nats: %w", err)
	}
	defer srv.Shutdown()
	nc, err := bus.Connect(ctx, bus.ConnConfig{URL: srv.ClientURL(), Name: "bench", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return res, fmt.Errorf("connecting: %w", err)
	}
	defer nc.Close()
	b, err := bus.New(nc)
	if err != nil {
		return res, err
	}
	if err := pipeline.Provision(ctx, b, pipeline.DefaultTopology()); err != nil {
		return res, err
	}
	endpoint := llmtest.NewServer(llmtest.WithLatency(pipelineLatency), llmtest.WithMaxConcurrency(pipelineEndpointMax),
		llmtest.WithChatReply(benchChatReply))
	defer endpoint.Close()

	// Every extraction the replicas publish, by chunk, with its arrival time.
	var mu sync.Mutex
	arrived := map[string]time.Time{}
	var bad error
	sub, err := nc.Subscribe(events.Subject(events.KindExtractions, benchCorpus), func(m *nats.Msg) {
		var x events.Extraction
		err := events.Decode(m.Data, &x)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			bad = errors.Join(bad, fmt.Errorf("%w: an invalid extraction: %w", errBenchCheck, err))
			return
		}
		if len(x.Entities) == 0 {
			bad = errors.Join(bad, fmt.Errorf("%w: the extraction of chunk %s has no entities", errBenchCheck, x.ChunkID))
			return
		}
		if _, ok := arrived[x.ChunkID]; !ok {
			arrived[x.ChunkID] = time.Now()
		}
	})
	if err != nil {
		return res, err
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		return res, err
	}

	c := newSynthCorpus(chunks, uint64(4242+n))
	for i, ch := range c.chunks {
		ev := &events.Chunk{Schema: events.SchemaChunk, Corpus: benchCorpus, ID: ch.id, DocumentID: ch.docID, DocumentTitle: ch.title,
			Position: i % chunksPerDoc, Total: chunksPerDoc, Text: ch.text, Tokens: len(ch.text) / 4}
		data, err := events.Encode(ev)
		if err != nil {
			return res, err
		}
		if _, err := b.Publish(ctx, events.Subject(events.KindChunks, benchCorpus), data, bus.WithMsgID(ev.MsgID())); err != nil {
			return res, fmt.Errorf("publishing chunk %d: %w", i, err)
		}
	}

	start := time.Now()
	var procs []*exec.Cmd
	defer func() {
		for _, p := range procs {
			_ = p.Process.Signal(syscall.SIGTERM)
		}
		for _, p := range procs {
			_ = p.Wait()
		}
	}()
	for i := range n {
		addr, err := benchFreeAddr()
		if err != nil {
			return res, err
		}
		rdir := filepath.Join(dir, "replica-"+strconv.Itoa(i))
		if err := os.MkdirAll(rdir, 0o750); err != nil {
			return res, err
		}
		logf, err := os.Create(filepath.Join(rdir, "extractor.log"))
		if err != nil {
			return res, err
		}
		defer logf.Close()
		p := exec.CommandContext(ctx, bin, "-nats-url", srv.ClientURL(), "-data-dir", rdir, "-http-addr", addr,
			"-log-level", "warn", "-llm-base-url", endpoint.URL(), "-llm-chat-model", "bench",
			"-llm-concurrency", strconv.Itoa(pipelinePerReplica), "-extract-workers", strconv.Itoa(pipelinePerReplica))
		p.Stdout, p.Stderr = logf, logf
		p.Cancel = func() error { return p.Process.Signal(syscall.SIGTERM) }
		p.WaitDelay = 30 * time.Second
		if err := p.Start(); err != nil {
			return res, fmt.Errorf("starting extractor %d: %w", i, err)
		}
		procs = append(procs, p)
	}

	deadline := time.Now().Add(time.Duration(chunks)*20*time.Millisecond + 2*time.Minute)
	for {
		mu.Lock()
		got, berr := len(arrived), bad
		mu.Unlock()
		if berr != nil {
			return res, berr
		}
		if got >= chunks {
			break
		}
		if time.Now().After(deadline) {
			st, _ := pipeline.GetStatus(ctx, b, benchCorpus)
			sj, _ := json.Marshal(st.Stages)
			return res, fmt.Errorf("%w: %d of %d chunks extracted by %d replicas (status %s; logs in %s)", errBenchCheck, got, chunks, n, sj, dir)
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	mu.Lock()
	times := make([]time.Time, 0, len(arrived))
	for _, t := range arrived {
		times = append(times, t)
	}
	mu.Unlock()
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	lo, hi := len(times)/10, len(times)*9/10
	res.rate = float64(hi-lo) / times[hi].Sub(times[lo]).Seconds()
	res.wall = times[len(times)-1].Sub(start)
	res.maxConcurrent, res.chatCalls = endpoint.MaxConcurrent(), endpoint.ChatCalls()
	return res, nil
}

func benchPipeline(ctx context.Context, cfg *benchConfig, r *benchReport) error {
	replicas, perReplicaChunks := []int{1, 2, 4}, 1200
	if cfg.quick {
		replicas, perReplicaChunks = []int{1, 2}, 120
	}
	r.command(cfg.command("pipeline"))
	r.line("The extraction stage end to end: chunk events of the synthetic corpus are published to")
	r.linef("`graphrag.chunks.<corpus>` on a fresh in-process NATS server, then N extractor processes")
	r.linef("(`services/extractor/cmd/extractor`, each its own `-data-dir`, `-extract-workers %d -llm-concurrency %d`)", pipelinePerReplica, pipelinePerReplica)
	r.linef("share the durable consumer and call an OpenAI-compatible endpoint (`llmtest.NewServer`, fixed latency %s,", pipelineLatency)
	r.linef("at most %d requests served at once, the rest queue) that answers the extraction schema with entities and", pipelineEndpointMax)
	r.line("relationships found in the chunk; every extraction is decoded and checked. Throughput is counted between")
	r.linef("the 10th and 90th percentile of extraction arrival times (process start-up excluded); %d chunks per replica.", perReplicaChunks)
	r.linef("Ideal: N×%d calls in flight, capped by the endpoint at %d, over %s each.", pipelinePerReplica, pipelineEndpointMax, pipelineLatency)
	r.line("")
	bin, err := goBinary(ctx, cfg, cfg.extractor, "extractor", "./services/extractor/cmd/extractor")
	if err != nil {
		return err
	}
	var results []pipelineResult
	for _, n := range replicas {
		res, err := runPipelineOnce(ctx, cfg, bin, n, n*perReplicaChunks)
		if err != nil {
			return err
		}
		cfg.progress("%d replica(s): %.1f chunks/s", n, res.rate)
		results = append(results, res)
	}
	one := results[0].rate
	var rows [][]string
	for _, res := range results {
		inFlight := min(res.replicas*pipelinePerReplica, pipelineEndpointMax)
		ideal := float64(inFlight) / pipelineLatency.Seconds()
		// Scaling target: 0.9×N of one replica until the endpoint's limit, then flat.
		want := 0.9 * one * float64(inFlight) / float64(min(pipelinePerReplica, pipelineEndpointMax))
		rows = append(rows, []string{strconv.Itoa(res.replicas), strconv.Itoa(res.chunks), fmt.Sprintf("%.1f", res.rate),
			fmt.Sprintf("%.2f×", res.rate/one), fmt.Sprintf("%.0f (%d in flight)", ideal, inFlight),
			fmt.Sprintf("%.0f%%", 100*res.rate/ideal), strconv.FormatInt(res.maxConcurrent, 10),
			benchVerdict(res.rate >= want, fmt.Sprintf("≥ %.1f", want))})
	}
	r.table([]string{"replicas", "chunks", "chunks/s", "vs 1 replica", "ideal chunks/s", "of ideal", "max requests at endpoint", "target"}, rows)
	r.line("")
	r.line("_max requests at endpoint_ counts requests inside the fake server at once, queued ones included: what")
	r.line("the replicas sent concurrently.")
	return nil
}
