//go:build integration

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/pipeline"
)

// outageFor is how long TestIntegrationNeo4jOutage keeps Neo4j stopped. The default
// outlasts the driver's 30 s of retries, so that a query during it gets its answer
// (503) before the server is back; `-outage 5m` is the long run of docs/operations.md.
var outageFor = flag.Duration("outage", 60*time.Second, "how long TestIntegrationNeo4jOutage keeps Neo4j stopped")

// TestIntegrationNeo4jOutage stops a real Neo4j + GDS server mid-indexing for -outage
// and starts it again on the same port: nothing is dead-lettered, status names the
// graph store while it is down, a query meanwhile answers 503 with Retry-After, and the
// corpus completes with the graph of the same documents indexed without an outage. It
// logs how long after the server's return the pipeline went on.
func TestIntegrationNeo4jOutage(t *testing.T) {
	env := needEnv(t, "GRAPHRAG_TEST_INTEGRATION_DIR", "GRAPHRAG_TEST_NEO4J_URI")
	runDir := t.TempDir()
	port := freePort(t)
	neo4j := func(script string, args ...string) {
		t.Helper()
		cmd := exec.CommandContext(context.WithoutCancel(t.Context()), filepath.Join(env["GRAPHRAG_TEST_INTEGRATION_DIR"], "neo4j", script), append([]string{runDir}, args...)...)
		cmd.Env = append(os.Environ(), "GRAPHRAG_NEO4J_PORT="+strconv.Itoa(port), "GRAPHRAG_NEO4J_HEAP=1g")
		cmd.Stderr = os.Stderr
		if out, err := cmd.Output(); err != nil {
			t.Fatalf("neo4j %s: %v (%s)", script, err, out)
		}
	}
	neo4j("start.sh", "gds")
	t.Cleanup(func() { neo4j("stop.sh") })
	p := testPlatform(t, t.TempDir(), neo4jFlags(fmt.Sprintf("bolt://127.0.0.1:%d", port))...)
	st := startStack(t, p, fastConfig())
	mux := http.NewServeMux()
	st.Query.Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	ref := uniqueCorpus("ref")
	indexSample(t, p, ref, 10*time.Minute)
	corpus := uniqueCorpus("outage")
	if sum, err := publishPaths(t.Context(), p.Bus, corpus, []string{"../../examples/corpus"}, publishOptions{}); err != nil || len(sum.Skipped) > 0 {
		t.Fatalf("publish: %+v %v", sum, err)
	}
	// Mid-indexing: once the grapher merged something, with most of the corpus to go.
	progress := func() pipeline.Status {
		t.Helper()
		s, err := pipeline.GetStatus(t.Context(), p.Bus, corpus)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if s := progress(); s.Stages[2].Done > 0 || time.Now().After(deadline) {
			t.Logf("stopping Neo4j: %+v", s.Stages)
			break
		}
	}
	neo4j("stop.sh")
	stopped := time.Now()

	// A query during the outage: 503, Retry-After, the graph store named.
	resp, err := http.Post(srv.URL+"/v1/query", "application/json", strings.NewReader(`{"corpus":"`+ref+`","query":"Who keeps Gullhead Lighthouse?","mode":"local"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	t.Logf("query during the outage: %d after %s, Retry-After %q: %s", resp.StatusCode, time.Since(stopped).Round(time.Millisecond), resp.Header.Get("Retry-After"), body)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "graph store is unavailable") {
		t.Errorf("query during the outage: %d, Retry-After %q, %s: want 503 naming the graph store", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	// Status names what is down.
	for deadline := stopped.Add(*outageFor); ; time.Sleep(200 * time.Millisecond) {
		s := progress()
		if len(s.Paused) > 0 && strings.Contains(s.Paused[0].Reason, "graph store unavailable") {
			t.Logf("status during the outage: %s: %+v", s.State, s.Paused)
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("status during the outage never named the graph store: %+v", s)
			break
		}
	}
	during := progress()
	time.Sleep(time.Until(stopped.Add(*outageFor)))
	neo4j("start.sh", "gds")
	back := time.Now()
	t.Logf("Neo4j stopped %s, back at %s", back.Sub(stopped).Round(time.Second), back.UTC().Format(time.RFC3339))

	// Resumption: the end of the pause (a probe answered), and the first merge after it.
	resumed, unpaused := false, false
	for deadline := back.Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		s := progress()
		if !unpaused && len(s.Paused) == 0 {
			unpaused = true
			t.Logf("the pause ended %s after Neo4j was back", time.Since(back).Round(100*time.Millisecond))
		}
		if s.Stages[2].Done > during.Stages[2].Done || s.Complete {
			t.Logf("the pipeline went on %s after Neo4j was back (grapher done %d, then %d)", time.Since(back).Round(100*time.Millisecond), during.Stages[2].Done, s.Stages[2].Done)
			resumed = true
			break
		}
	}
	if !resumed {
		t.Fatalf("nothing merged in 5 minutes after Neo4j was back: %+v", progress())
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	final, err := pipeline.WaitComplete(ctx, p.Bus, corpus, time.Second, nil)
	if err != nil {
		t.Fatalf("indexing after the outage: %v (%+v)", err, final)
	}
	t.Logf("complete %s after Neo4j was back", time.Since(back).Round(time.Second))
	for _, s := range final.Stages {
		if s.DeadLettered != 0 {
			t.Errorf("stage %s dead-lettered %d messages across the outage", s.Stage, s.DeadLettered)
		}
	}
	want, err := p.Graph.Stats(t.Context(), ref)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Graph.Stats(t.Context(), corpus)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("graph without the outage %+v, with it %+v", want, got)
	if got.Entities != want.Entities || got.Relationships != want.Relationships || got.Chunks != want.Chunks {
		t.Errorf("graph after the outage %+v, without one %+v", got, want)
	}
}

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}
