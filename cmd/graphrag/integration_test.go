//go:build integration

package main

// End-to-end tests against real servers (make test-integration starts them): Neo4j with
// Graph Data Science, Neo4j without it, Milvus, and an OpenAI-compatible model server
// with a model shipped in a package.

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/storeoutage"
	"github.com/graphrag/graphrag/services/query/ask"
)

func needEnv(t *testing.T, names ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range names {
		v, ok := os.LookupEnv(n)
		if !ok {
			t.Skipf("%s is not set: run `make test-integration`", n)
		}
		out[n] = v
	}
	return out
}

func neo4jFlags(uri string) []string {
	return []string{"-graph-store", "neo4j", "-neo4j-uri", uri, "-neo4j-password", os.Getenv("GRAPHRAG_TEST_NEO4J_PASSWORD")}
}

// indexSample publishes the named sample documents (all when none) and waits.
func indexSample(t *testing.T, p *platform.Platform, corpus string, timeout time.Duration, names ...string) pipeline.Status {
	t.Helper()
	paths := []string{"../../examples/corpus"}
	if len(names) > 0 {
		paths = nil
		for _, n := range names {
			paths = append(paths, filepath.Join("../../examples/corpus", n))
		}
	}
	sum, err := publishPaths(t.Context(), p.Bus, corpus, paths, publishOptions{})
	if err != nil || len(sum.Skipped) > 0 {
		t.Fatalf("publish: %+v %v", sum, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	st, err := pipeline.WaitComplete(ctx, p.Bus, corpus, time.Second, nil)
	if err != nil {
		t.Fatalf("indexing did not complete: %v (%+v)", err, st)
	}
	for _, s := range st.Stages {
		if s.DeadLettered != 0 {
			t.Errorf("stage %s dead-lettered %d messages", s.Stage, s.DeadLettered)
		}
	}
	return st
}

func uniqueCorpus(prefix string) string {
	return prefix + "_" + strings.ReplaceAll(time.Now().UTC().Format("150405.000000"), ".", "")
}

// TestIntegrationRealBackends: publish → index → local and global query with Neo4j +
// GDS, Milvus and the real model server doing extraction, reports, embeddings, answers.
func TestIntegrationRealBackends(t *testing.T) {
	env := needEnv(t, "GRAPHRAG_TEST_NEO4J_URI", "GRAPHRAG_TEST_MILVUS_ADDR", "GRAPHRAG_TEST_LLM_BASE_URL",
		"GRAPHRAG_TEST_LLM_CHAT_MODEL", "GRAPHRAG_TEST_EMBED_BASE_URL", "GRAPHRAG_TEST_EMBED_MODEL")
	flags := append(neo4jFlags(env["GRAPHRAG_TEST_NEO4J_URI"]),
		"-vector-store", "milvus", "-milvus-address", env["GRAPHRAG_TEST_MILVUS_ADDR"],
		"-llm-base-url", env["GRAPHRAG_TEST_LLM_BASE_URL"], "-llm-chat-model", env["GRAPHRAG_TEST_LLM_CHAT_MODEL"],
		"-llm-embed-base-url", env["GRAPHRAG_TEST_EMBED_BASE_URL"], "-llm-embed-model", env["GRAPHRAG_TEST_EMBED_MODEL"],
		"-llm-concurrency", "2")
	p := testPlatform(t, t.TempDir(), flags...)
	if p.Algorithms == nil {
		t.Fatal("the Neo4j store offers no algorithms")
	}
	if ok, err := p.Algorithms.Available(t.Context()); err != nil || !ok {
		t.Fatalf("GDS not available on the GDS server: %v %v", ok, err)
	}
	cfg := fastConfig()
	cfg.Grapher.MinCommunitySize = 2
	// A 135M-parameter model on 2 CPU threads: small caps keep each call short.
	cfg.Extractor.MaxEntities, cfg.Extractor.MaxRelationships = 6, 5
	st := startStack(t, p, cfg)
	corpus := uniqueCorpus("real")
	// Three related documents keep a CPU-only model's work to minutes.
	indexSample(t, p, corpus, 45*time.Minute, "03_storm_hester_1998.md", "04_storm_inquiry_report.md", "05_marine_institute.md")

	ctx := t.Context()
	gs, err := p.Graph.Stats(ctx, corpus)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("graph on Neo4j: %+v; LLM usage %+v", gs, p.LLM.Usage())
	// A 135M model extracts little (its relationships rarely name its entities exactly);
	// this test checks the machinery on real servers, not the model's quality.
	if gs.Entities < 5 || gs.Relationships < 1 || gs.Communities < 1 {
		t.Fatalf("graph too small: %+v", gs)
	}
	reports, err := p.Vectors.Get(ctx, schema.Collection(corpus, schema.Communities), communityIDs(t, p, corpus))
	if err != nil || len(reports) != gs.Communities {
		t.Fatalf("reports in Milvus: %d (%v), communities %d", len(reports), err, gs.Communities)
	}
	byModel := 0
	for _, r := range reports {
		if strings.HasPrefix(r.Attrs[schema.ReportMethod], "llm/") {
			byModel++
		} else {
			t.Logf("report %s written by %q (the model's output was invalid)", r.ID, r.Attrs[schema.ReportMethod])
		}
	}
	// Which reports the model managed varies run to run with a 135M model (its JSON is
	// often cut at max tokens, and then the extractive report stands in); that the model
	// generated text at all, and that every community has a report, must hold.
	t.Logf("%d of %d reports written by the model", byModel, len(reports))
	if u := p.LLM.Usage(); u.CompletionTokens == 0 {
		t.Errorf("the model generated nothing: %+v", u)
	}
	local, err := st.Asker.Query(ctx, ask.Request{Corpus: corpus, Query: "Who chaired the Storm Hester inquiry?", Mode: ask.ModeLocal}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("local answer: %s", local.Answer)
	if local.Answer == "" || len(local.Context.Chunks) == 0 {
		t.Errorf("local answer %q with %d chunks", local.Answer, len(local.Context.Chunks))
	}
	global, err := st.Asker.Query(ctx, ask.Request{Corpus: corpus, Query: "What are the main themes across the corpus?", Mode: ask.ModeGlobal}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("global answer: %s (%d partial answers)", global.Answer, len(global.Partials))
	if global.Answer == "" || len(global.Context.Communities) == 0 {
		t.Errorf("global answer %q over %d communities", global.Answer, len(global.Context.Communities))
	}
}

func communityIDs(t *testing.T, p *platform.Platform, corpus string) []string {
	t.Helper()
	cs, err := p.Graph.Communities(t.Context(), corpus, -1)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return ids
}

// TestIntegrationGDSAbsentFallback: on Neo4j without GDS the grapher runs Leiden and
// PageRank in Go on the graph read out of Neo4j, with the same results contract.
func TestIntegrationGDSAbsentFallback(t *testing.T) {
	env := needEnv(t, "GRAPHRAG_TEST_NEO4J_NOGDS_URI")
	p := testPlatform(t, t.TempDir(), neo4jFlags(env["GRAPHRAG_TEST_NEO4J_NOGDS_URI"])...)
	if ok, err := p.Algorithms.Available(t.Context()); err != nil || ok {
		t.Fatalf("GDS reported available on the server without it: %v %v", ok, err)
	}
	startStack(t, p, fastConfig())
	corpus := uniqueCorpus("nogds")
	indexSample(t, p, corpus, 10*time.Minute)
	gs, err := p.Graph.Stats(t.Context(), corpus)
	if err != nil {
		t.Fatal(err)
	}
	if gs.Levels < 2 || gs.Communities < 2 {
		t.Fatalf("communities without GDS: %+v", gs)
	}
	en, err := p.Graph.Entity(t.Context(), corpus, "ada quillane")
	if err != nil || en.PageRank <= 0 || len(en.Communities) == 0 {
		t.Fatalf("ada quillane: %+v %v", en, err)
	}
}

// TestIntegrationMilvusOutage stops the real Milvus once the chunker has written the
// first documents' chunks, for -milvus-outage, and starts it again on its port and data:
// nothing is dead-lettered, status names the vector store while it is down, questions
// meanwhile answer 503 with Retry-After, and indexing completes with every chunk in
// Milvus. It logs how long after the server's return the pipeline went on.
func TestIntegrationMilvusOutage(t *testing.T) {
	env := needEnv(t, "GRAPHRAG_TEST_MILVUS_ADDR", "GRAPHRAG_TEST_INTEGRATION_DIR", "GRAPHRAG_TEST_RUN_DIR")
	p := testPlatform(t, t.TempDir(), "-vector-store", "milvus", "-milvus-address", env["GRAPHRAG_TEST_MILVUS_ADDR"])
	st := startStack(t, p, fastConfig())
	mux := http.NewServeMux()
	st.Query.Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	corpus := uniqueCorpus("restart")
	sum, err := publishPaths(t.Context(), p.Bus, corpus, []string{"../../examples/corpus"}, publishOptions{})
	if err != nil || sum.Published != 14 {
		t.Fatalf("publish: %+v %v", sum, err)
	}
	server := storeoutage.Server{Scripts: filepath.Join(env["GRAPHRAG_TEST_INTEGRATION_DIR"], "milvus"),
		RunDir: filepath.Join(env["GRAPHRAG_TEST_RUN_DIR"], "milvus"), Stderr: os.Stderr}
	// Once the first documents' chunks are in: the rest land during and after the outage.
	rep, err := storeoutage.Run(t.Context(), storeoutage.Config{
		Server: server, For: *milvusOutageFor, Store: "vector store",
		Status: func(ctx context.Context) (pipeline.Status, error) { return pipeline.GetStatus(ctx, p.Bus, corpus) },
		Begin:  func(st pipeline.Status) bool { return st.Stages[0].Done >= 2 },
		Ask: func(ctx context.Context) storeoutage.Answer {
			return storeoutage.Ask(ctx, srv.Client(), srv.URL, corpus, "Who keeps Gullhead Lighthouse?")
		},
		AskEvery: 10 * time.Second,
		Log:      slog.New(slog.NewTextHandler(t.Output(), nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Milvus stopped with %s; down %s; questions: %s", storeoutage.Line(rep.Before), rep.Down.Round(time.Second), storeoutage.Codes(rep.Answers))
	if len(rep.Answers) == 0 {
		t.Errorf("no question was answered during the outage")
	}
	for _, a := range rep.Answers {
		if a.Code != http.StatusServiceUnavailable || a.RetryAfter == "" || !strings.Contains(a.Body, "vector store is unavailable") {
			t.Errorf("query during the outage: %d, Retry-After %q, %s (%v): want 503 naming the vector store", a.Code, a.RetryAfter, a.Body, a.Err)
		}
	}
	if rep.Paused.Stage == "" {
		t.Errorf("status during the outage never named the vector store: %+v", rep.During)
	}
	if rep.Resumed < 0 {
		t.Fatalf("nothing went on in 5 minutes after Milvus was back: %s", storeoutage.Line(rep.During))
	}
	t.Logf("the pause ended %s and the pipeline went on %s after Milvus was back", rep.Unpaused.Round(100*time.Millisecond), rep.Resumed.Round(100*time.Millisecond))
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	final, err := pipeline.WaitComplete(ctx, p.Bus, corpus, time.Second, nil)
	if err != nil {
		t.Fatalf("indexing after the outage: %v (%+v)", err, final)
	}
	for _, s := range final.Stages {
		if s.DeadLettered != 0 {
			t.Errorf("stage %s dead-lettered %d messages across the outage", s.Stage, s.DeadLettered)
		}
	}
	n, err := p.Vectors.Count(ctx, schema.Collection(corpus, schema.Chunks))
	if err != nil || uint64(n) != final.Stages[1].Total {
		t.Fatalf("chunks in Milvus after the outage: %d (%v), chunk events %d", n, err, final.Stages[1].Total)
	}
}
