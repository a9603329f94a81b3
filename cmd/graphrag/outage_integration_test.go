//go:build integration

package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/storeoutage"
)

// outageFor is how long TestIntegrationNeo4jOutage keeps Neo4j stopped. The default
// outlasts the driver's 30 s of retries with room to spare, so that a query during it
// gets its answer (503) and status names the store before the server is back: a call
// that starts while an earlier one retries fails up to 30 s after it began, and on a
// loaded machine the grapher's first failure came 24–72 s into the outage;
// `-outage 5m` is the long run of docs/operations.md.
var outageFor = flag.Duration("outage", 90*time.Second, "how long TestIntegrationNeo4jOutage keeps Neo4j stopped")

// milvusOutageFor is how long TestIntegrationMilvusOutage keeps Milvus stopped (Milvus
// fails a call at once, so a short outage sees its 503s; the chaos suite's runs 5 minutes).
var milvusOutageFor = flag.Duration("milvus-outage", 30*time.Second, "how long TestIntegrationMilvusOutage keeps Milvus stopped")

// TestIntegrationNeo4jOutage stops a real Neo4j + GDS server mid-indexing for -outage
// and starts it again on the same port: nothing is dead-lettered, status names the
// graph store while it is down, a query meanwhile answers 503 with Retry-After, and the
// corpus completes with the graph of the same documents indexed without an outage. It
// logs how long after the server's return the pipeline went on.
func TestIntegrationNeo4jOutage(t *testing.T) {
	env := needEnv(t, "GRAPHRAG_TEST_INTEGRATION_DIR", "GRAPHRAG_TEST_NEO4J_URI")
	port := freePort(t)
	server := storeoutage.Server{Scripts: filepath.Join(env["GRAPHRAG_TEST_INTEGRATION_DIR"], "neo4j"), RunDir: t.TempDir(),
		Args: []string{"gds"}, Env: []string{"GRAPHRAG_NEO4J_PORT=" + strconv.Itoa(port), "GRAPHRAG_NEO4J_HEAP=1g"}, Stderr: os.Stderr}
	if _, err := server.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := server.Stop(context.WithoutCancel(t.Context())); err != nil {
			t.Error(err)
		}
	})
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
	// Mid-indexing (once the grapher merged something, with most of the corpus to go),
	// one question during the outage, about the corpus indexed before it.
	rep, err := storeoutage.Run(t.Context(), storeoutage.Config{
		Server: server, For: *outageFor, Store: "graph store",
		Status: func(ctx context.Context) (pipeline.Status, error) { return pipeline.GetStatus(ctx, p.Bus, corpus) },
		Ask: func(ctx context.Context) storeoutage.Answer {
			return storeoutage.Ask(ctx, srv.Client(), srv.URL, ref, "Who keeps Gullhead Lighthouse?")
		},
		AskEvery: *outageFor,
		Log:      slog.New(slog.NewTextHandler(t.Output(), nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Neo4j stopped with %s; down %s", storeoutage.Line(rep.Before), rep.Down.Round(time.Second))
	// The question during the outage: 503, Retry-After, the graph store named.
	if len(rep.Answers) == 0 {
		t.Errorf("no question was answered during the outage")
	} else {
		a := rep.Answers[0]
		t.Logf("query during the outage: %d after %s, Retry-After %q: %s (%v)", a.Code, a.Took.Round(time.Millisecond), a.RetryAfter, a.Body, a.Err)
		if a.Code != http.StatusServiceUnavailable || a.RetryAfter == "" || !strings.Contains(a.Body, "graph store is unavailable") {
			t.Errorf("query during the outage: %d, Retry-After %q, %s: want 503 naming the graph store", a.Code, a.RetryAfter, a.Body)
		}
	}
	// Status named what is down.
	if rep.Paused.Stage == "" {
		t.Errorf("status during the outage never named the graph store: %+v", rep.During)
	} else {
		t.Logf("status during the outage, after %s: %+v", rep.PausedAfter.Round(100*time.Millisecond), rep.Paused)
	}
	// Resumption: the end of the pause (a probe answered), and the first merge after it.
	t.Logf("the pause ended %s after Neo4j was back", rep.Unpaused.Round(100*time.Millisecond))
	if rep.Resumed < 0 {
		t.Fatalf("nothing merged in 5 minutes after Neo4j was back: %s", storeoutage.Line(rep.During))
	}
	t.Logf("the pipeline went on %s after Neo4j was back", rep.Resumed.Round(100*time.Millisecond))
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	final, err := pipeline.WaitComplete(ctx, p.Bus, corpus, time.Second, nil)
	if err != nil {
		t.Fatalf("indexing after the outage: %v (%+v)", err, final)
	}
	t.Logf("complete %s after Neo4j was back", time.Since(rep.Back).Round(time.Second))
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
