package storeoutage

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/pipeline"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseExports(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      map[string]string
		err       bool
	}{
		{"two", "export A=1\nexport B='x y'\n", map[string]string{"A": "1", "B": "x y"}, false},
		{"blank lines", "\nexport A=1\n\n", map[string]string{"A": "1"}, false},
		{"not an export", "starting\nexport A=1\n", nil, true},
		{"no value", "export A\n", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseExports([]byte(tc.out))
			if (err != nil) != tc.err {
				t.Fatalf("err %v, want an error: %v", err, tc.err)
			}
			if !tc.err && !equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// fakeBackend writes a start.sh and a stop.sh that record their calls in the run
// directory, as a backend of scripts/integration does with its server.
func fakeBackend(t *testing.T) Server {
	t.Helper()
	dir, run := t.TempDir(), t.TempDir()
	for name, body := range map[string]string{
		"start.sh": "#!/bin/sh\nrm -f \"$1/down\"; echo \"$2\" > \"$1/started\"; echo export GRAPHRAG_TEST_X=1\n",
		"stop.sh":  "#!/bin/sh\ntouch \"$1/down\"\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return Server{Scripts: dir, RunDir: run, Args: []string{"gds"}}
}

// A store outage seen through a fake status: the grapher waits while the server is
// down and merges once it is back; the report names the pause, the waiting stage, the
// questions' answers and the resumption.
func TestRunMeasuresTheOutage(t *testing.T) {
	srv := fakeBackend(t)
	down := func() bool { _, err := os.Stat(filepath.Join(srv.RunDir, "down")); return err == nil }
	var after atomic.Int32 // status reads after the return
	status := func(context.Context) (pipeline.Status, error) {
		st := pipeline.Status{Stages: []pipeline.StageStatus{
			{Stage: pipeline.StageChunker, Done: 5, Total: 5},
			{Stage: pipeline.StageGrapher, Done: 1, Total: 5},
		}, State: pipeline.StateIndexing}
		switch {
		case down():
			st.Stages[0].Done = 6 // another stage's progress is not the grapher's
			st.Paused = []pipeline.Pause{{Stage: pipeline.StageGrapher, Reason: "graph store unavailable: connection refused"}}
		case fileExists(filepath.Join(srv.RunDir, "started")) && after.Add(1) > 3:
			st.Stages[0].Done, st.Stages[1].Done = 6, 2
		}
		return st, nil
	}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !down() {
			t.Errorf("a question was asked while the store was up")
		}
		w.Header().Set("Retry-After", "10")
		http.Error(w, `{"error":"the graph store is unavailable; try again later"}`, http.StatusServiceUnavailable)
	}))
	defer api.Close()
	rep, err := Run(t.Context(), Config{
		Server: srv, For: 400 * time.Millisecond, Store: "graph store", Status: status,
		Ask: func(ctx context.Context) Answer {
			return Ask(ctx, api.Client(), api.URL, "demo", "Who keeps the lighthouse?")
		},
		AskEvery: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(srv.RunDir, "started")); strings.TrimSpace(string(b)) != "gds" {
		t.Errorf("start.sh got %q, want its argument gds", b)
	}
	if rep.Paused.Stage != pipeline.StageGrapher || !slices.Equal(rep.Waiting, []string{pipeline.StageGrapher}) {
		t.Errorf("pause %+v, waiting %v: want the grapher", rep.Paused, rep.Waiting)
	}
	if len(rep.Answers) == 0 || rep.Answers[0].Code != http.StatusServiceUnavailable || rep.Answers[0].RetryAfter != "10" {
		t.Errorf("answers %+v, want 503 with Retry-After", rep.Answers)
	}
	if got := Codes(rep.Answers); !strings.Contains(got, "× 503 (Retry-After 10)") {
		t.Errorf("codes %q", got)
	}
	if rep.Down < 400*time.Millisecond || rep.Unpaused < 0 || rep.Resumed < rep.Unpaused {
		t.Errorf("down %s, unpaused %s, resumed %s", rep.Down, rep.Unpaused, rep.Resumed)
	}
	if rep.During.Stages[1].Done != 1 {
		t.Errorf("status during the outage %+v", rep.During)
	}
}

func fileExists(path string) bool { _, err := os.Stat(path); return err == nil }

// A server whose start fails makes Run fail with the script named.
func TestRunFailsWhenTheServerDoesNotStart(t *testing.T) {
	srv := fakeBackend(t)
	if err := os.WriteFile(filepath.Join(srv.Scripts, "start.sh"), []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	status := func(context.Context) (pipeline.Status, error) {
		return pipeline.Status{Stages: []pipeline.StageStatus{{Stage: pipeline.StageGrapher, Done: 1}}}, nil
	}
	_, err := Run(t.Context(), Config{Server: srv, For: 10 * time.Millisecond, Store: "graph store", Status: status})
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(err.Error(), "start.sh") {
		t.Fatalf("err %v, want start.sh's exit status", err)
	}
}

// A server without scripts is refused with a clear error.
func TestServerNeedsItsDirectories(t *testing.T) {
	if err := (Server{}).Stop(t.Context()); err == nil || !strings.Contains(err.Error(), "scripts directory") {
		t.Fatalf("err %v", err)
	}
}
