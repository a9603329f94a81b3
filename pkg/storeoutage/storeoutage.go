package storeoutage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/graphrag/graphrag/pkg/pipeline"
)

// Server is a store server run by a backend directory of scripts/integration
// (start.sh RUN_DIR [args], stop.sh RUN_DIR).
type Server struct {
	// Scripts is the backend's directory (scripts/integration/neo4j).
	Scripts string
	// RunDir is the run directory the server was started in; it keeps its data.
	RunDir string
	// Args follow RUN_DIR on start.sh's command line (neo4j: "gds").
	Args []string
	// Env is added to the scripts' environment (GRAPHRAG_NEO4J_PORT=7687 restarts
	// Neo4j on the port its clients use; Milvus reuses its port by itself).
	Env []string
	// Stderr receives the scripts' diagnostics (nil: discarded).
	Stderr io.Writer
}

// Stop stops the server and waits until it has exited.
func (s Server) Stop(ctx context.Context) error {
	_, err := s.script(ctx, "stop.sh")
	return err
}

// Start starts the server and waits until it serves; it returns the variables start.sh
// exported (`export NAME=value` lines).
func (s Server) Start(ctx context.Context) (map[string]string, error) {
	out, err := s.script(ctx, "start.sh", s.Args...)
	if err != nil {
		return nil, err
	}
	return ParseExports(out)
}

func (s Server) script(ctx context.Context, name string, args ...string) ([]byte, error) {
	if s.Scripts == "" || s.RunDir == "" {
		return nil, errors.New("storeoutage: a server needs its scripts directory and run directory")
	}
	path := filepath.Join(s.Scripts, name)
	cmd := exec.CommandContext(ctx, path, append([]string{s.RunDir}, args...)...)
	cmd.Env = append(os.Environ(), s.Env...)
	cmd.Stderr = s.Stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("running %s %s: %w", path, s.RunDir, err)
	}
	return out, nil
}

// ParseExports reads the `export NAME=value` lines a start.sh prints; any other line is
// an error.
func ParseExports(out []byte) (map[string]string, error) {
	vars := map[string]string{}
	for line := range strings.Lines(string(out)) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		kv, ok := strings.CutPrefix(line, "export ")
		name, value, ok2 := strings.Cut(kv, "=")
		if !ok || !ok2 || name == "" || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("unexpected line from start.sh: %q", line)
		}
		vars[name] = strings.Trim(value, `'"`)
	}
	return vars, nil
}

// Answer is what one question asked during the outage got.
type Answer struct {
	Code       int           // HTTP status; 0 when the request failed
	RetryAfter string        // the Retry-After header
	Body       string        // the body, at most 300 bytes
	Err        error         // the transport error, if any
	Took       time.Duration // from sending to the answer
}

// Ask posts a local question about corpus to the query API at baseURL (http://host:port).
func Ask(ctx context.Context, client *http.Client, baseURL, corpus, question string) Answer {
	body, err := json.Marshal(map[string]string{"corpus": corpus, "query": question, "mode": "local"})
	if err != nil {
		return Answer{Err: err}
	}
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/v1/query", bytes.NewReader(body))
	if err != nil {
		return Answer{Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return Answer{Err: err, Took: time.Since(start)}
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
	_, _ = io.Copy(io.Discard, resp.Body)
	return Answer{Code: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After"), Body: string(b), Took: time.Since(start)}
}

// Config is one outage.
type Config struct {
	// Server is the store server stopped and started again.
	Server Server
	// For is how long the server stays stopped (from the end of Stop to the start of
	// Start; a slow start adds to the outage, which Report.Down measures).
	For time.Duration
	// Store is how status and the API name the store: "graph store" or "vector store".
	Store string
	// Status reads the indexed corpus's status.
	Status func(ctx context.Context) (pipeline.Status, error)
	// Begin says when indexing is far enough for the outage to begin (nil: once the
	// grapher has merged an extraction).
	Begin func(pipeline.Status) bool
	// Ask asks one question (nil: none is asked); AskEvery is the pause between two.
	// The first is asked right after the server is stopped, the last before it starts.
	Ask      func(ctx context.Context) Answer
	AskEvery time.Duration
	// ResumeTimeout bounds the wait for progress after the server's return (default 5 min).
	ResumeTimeout time.Duration
	// Log receives what happens (nil: discarded).
	Log *slog.Logger
}

// Report is what an outage measured.
type Report struct {
	Stopped, Back time.Time // the server stopped (Stop returned), started again (Start returned)
	Down          time.Duration
	// Before and During are the corpus's status when the server was stopped and just
	// before it started again.
	Before, During pipeline.Status
	// Paused is the first pause status gave that names the store ("" if none did), and
	// PausedAfter how long after the stop it came.
	Paused      pipeline.Pause
	PausedAfter time.Duration
	// Waiting are the stages status said were waiting during the outage.
	Waiting []string
	// Answers are the questions asked during the outage, in order.
	Answers []Answer
	// Unpaused is how long after the return status stopped saying the store was down
	// (-1: it never did within ResumeTimeout), Resumed how long until a waiting stage
	// acknowledged a message or the corpus was complete (-1: neither within ResumeTimeout).
	Unpaused, Resumed time.Duration
	// DeadLettered counts the corpus's dead letters when it resumed.
	DeadLettered uint64
}

// Run waits until cfg.Begin, stops the server for cfg.For while asking questions, starts
// it again and waits until the waiting stages go on. It returns an error when the server
// cannot be stopped or started, or status cannot be read; an outage the pipeline does not
// resume from is in the report (Resumed -1), for the caller to judge.
func Run(ctx context.Context, cfg Config) (Report, error) {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	begin := cfg.Begin
	if begin == nil {
		begin = func(st pipeline.Status) bool { return stage(st, pipeline.StageGrapher).Done > 0 || st.Complete }
	}
	resumeTimeout := cfg.ResumeTimeout
	if resumeTimeout <= 0 {
		resumeTimeout = 5 * time.Minute
	}
	var rep Report
	for {
		st, err := cfg.Status(ctx)
		if err == nil && begin(st) {
			break
		}
		select {
		case <-ctx.Done():
			return rep, fmt.Errorf("waiting for indexing to begin: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	var err error
	if rep.Before, err = cfg.Status(ctx); err != nil {
		return rep, err
	}
	log.Info("stopping the store", "store", cfg.Store, "status", Line(rep.Before))
	if err := cfg.Server.Stop(ctx); err != nil {
		return rep, err
	}
	rep.Stopped = time.Now()

	// Questions until the server is started again.
	askCtx, stopAsking := context.WithCancel(ctx)
	var asked sync.WaitGroup
	if cfg.Ask != nil {
		asked.Go(func() {
			for askCtx.Err() == nil {
				a := cfg.Ask(askCtx)
				if askCtx.Err() != nil && a.Code == 0 {
					return // cut short by the server's return, not an answer
				}
				log.Info("question during the outage", "code", a.Code, "retry_after", a.RetryAfter, "took", a.Took.Round(time.Millisecond), "err", a.Err)
				rep.Answers = append(rep.Answers, a)
				select {
				case <-askCtx.Done():
				case <-time.After(cfg.AskEvery):
				}
			}
		})
	}
	waiting := map[string]bool{}
	until := rep.Stopped.Add(cfg.For)
	for time.Now().Before(until) {
		st, err := cfg.Status(ctx)
		if err == nil {
			rep.During = st
			for _, p := range st.Paused {
				if strings.Contains(p.Reason, cfg.Store) {
					waiting[p.Stage] = true
					if rep.Paused.Stage == "" {
						rep.Paused, rep.PausedAfter = p, time.Since(rep.Stopped)
						log.Info("status names the outage", "stage", p.Stage, "reason", p.Reason, "after", rep.PausedAfter.Round(100*time.Millisecond))
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			stopAsking()
			asked.Wait()
			return rep, ctx.Err()
		case <-time.After(min(time.Second, time.Until(until))):
		}
	}
	stopAsking()
	asked.Wait()
	rep.Waiting = slices.Sorted(func(yield func(string) bool) {
		for s := range waiting {
			if !yield(s) {
				return
			}
		}
	})
	log.Info("starting the store again", "store", cfg.Store, "status", Line(rep.During))
	if _, err := cfg.Server.Start(context.WithoutCancel(ctx)); err != nil {
		return rep, err
	}
	rep.Back = time.Now()
	rep.Down = rep.Back.Sub(rep.Stopped)
	log.Info("the store is back", "store", cfg.Store, "down", rep.Down.Round(time.Second))

	rep.Unpaused, rep.Resumed = -1, -1
	base := progress(rep.During, rep.Waiting)
	for deadline := rep.Back.Add(resumeTimeout); time.Now().Before(deadline); {
		st, err := cfg.Status(ctx)
		if err == nil {
			if rep.Unpaused < 0 && !names(st.Paused, cfg.Store) {
				rep.Unpaused = time.Since(rep.Back)
			}
			if progress(st, rep.Waiting) > base || st.Complete {
				rep.Resumed = time.Since(rep.Back)
				for _, s := range st.Stages {
					rep.DeadLettered += s.DeadLettered
				}
				log.Info("the pipeline goes on", "after", rep.Resumed.Round(100*time.Millisecond), "status", Line(st))
				return rep, nil
			}
		}
		select {
		case <-ctx.Done():
			return rep, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return rep, nil
}

func stage(st pipeline.Status, name string) pipeline.StageStatus {
	for _, s := range st.Stages {
		if s.Stage == name {
			return s
		}
	}
	return pipeline.StageStatus{}
}

// progress is the messages the stages acknowledged (of the waiting stages, when any is
// named).
func progress(st pipeline.Status, waiting []string) uint64 {
	var n uint64
	for _, s := range st.Stages {
		if len(waiting) == 0 || slices.Contains(waiting, s.Stage) {
			n += s.Done
		}
	}
	return n
}

func names(ps []pipeline.Pause, store string) bool {
	return slices.ContainsFunc(ps, func(p pipeline.Pause) bool { return strings.Contains(p.Reason, store) })
}

// Codes sums answers up by status: "503 × 12 (Retry-After 10)", a failed request by
// its error.
func Codes(answers []Answer) string {
	counts := map[string]int{}
	for _, a := range answers {
		k := fmt.Sprint(a.Code)
		switch {
		case a.Err != nil:
			k = "error: " + a.Err.Error()
		case a.RetryAfter != "":
			k += " (Retry-After " + a.RetryAfter + ")"
		}
		counts[k]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d × %s", counts[k], k)
	}
	if len(parts) == 0 {
		return "none asked"
	}
	return strings.Join(parts, ", ")
}

// Line is a one-line summary of a status.
func Line(st pipeline.Status) string {
	var sb strings.Builder
	for _, s := range st.Stages {
		fmt.Fprintf(&sb, "%s %d/%d (dlq %d); ", s.Stage, s.Done, s.Total, s.DeadLettered)
	}
	fmt.Fprintf(&sb, "%s", st.State)
	return sb.String()
}
