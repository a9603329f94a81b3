package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream" //nolint:depguard // the test reads the dead-letter stream itself

	"github.com/graphrag/graphrag/cmd/graphrag/internal/stack"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/service"
	"github.com/graphrag/graphrag/services/query/ask"
)

// testPlatform opens embedded backends in a temp dir, as `graphrag up` does.
func testPlatform(t *testing.T, dir string, extra ...string) *platform.Platform {
	t.Helper()
	var c service.CommonFlags
	var b platform.BackendFlags
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	c.Register(fs)
	b.Register(fs, stack.Needs())
	if err := fs.Parse(append([]string{"-data-dir", dir, "-nats-port", "-1"}, extra...)); err != nil {
		t.Fatal(err)
	}
	p, err := platform.Open(context.Background(), c, b, stack.Needs(), "test",
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// startStack runs the four services on p until the test ends.
func startStack(t *testing.T, p *platform.Platform, cfg stack.Config) *stack.Stack {
	t.Helper()
	st, err := stack.New(p, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range st.Components() {
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, c := range st.Components() {
			if err := c.Stop(sctx); err != nil {
				t.Errorf("stopping: %v", err)
			}
		}
	})
	return st
}

func fastConfig() stack.Config {
	cfg := stack.DefaultConfig()
	cfg.Grapher.Debounce = 300 * time.Millisecond
	return cfg
}

func waitIndexed(t *testing.T, p *platform.Platform, corpus string) pipeline.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	st, err := pipeline.WaitComplete(ctx, p.Bus, corpus, 200*time.Millisecond, nil)
	if err != nil {
		t.Fatalf("indexing did not complete: %v (%+v)", err, st)
	}
	return st
}

// TestEndToEndSampleCorpus publishes the sample corpus, waits for `graphrag status` to
// show it complete, and checks the graph, the communities, the reports and both kinds of
// questions.
func TestEndToEndSampleCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	p := testPlatform(t, t.TempDir())
	st := startStack(t, p, fastConfig())
	ctx := context.Background()

	sum, err := publishPaths(ctx, p.Bus, "demo", []string{"../../examples/corpus"}, publishOptions{})
	if err != nil || sum.Published != 14 || len(sum.Skipped) != 0 {
		t.Fatalf("publish: %+v, %v", sum, err)
	}
	status := waitIndexed(t, p, "demo")
	for _, s := range status.Stages {
		if s.DeadLettered != 0 || s.Pending != 0 || s.InFlight != 0 {
			t.Errorf("stage %s not clean: %+v", s.Stage, s)
		}
	}
	if status.Stages[0].Done != 14 {
		t.Errorf("chunker done = %d, want 14", status.Stages[0].Done)
	}

	gs, err := p.Graph.Stats(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("graph: %+v", gs)
	if gs.Entities < 50 || gs.Relationships < 50 {
		t.Errorf("graph too small: %+v", gs)
	}
	if gs.Levels < 2 {
		t.Errorf("communities on %d levels, want at least 2", gs.Levels)
	}
	// Provenance: an entity the corpus names in several documents.
	en, err := p.Graph.Entity(ctx, "demo", "ada quillane")
	if err != nil {
		t.Fatalf("entity ada quillane: %v", err)
	}
	if len(en.ChunkIDs) < 3 || en.MentionCount != len(en.ChunkIDs) || en.PageRank <= 0 || len(en.Communities) == 0 {
		t.Errorf("ada quillane: chunks %d, mentions %d, pagerank %v, communities %v", len(en.ChunkIDs), en.MentionCount, en.PageRank, en.Communities)
	}
	// Every community has a report, and every entity an embedding.
	reports, err := p.Vectors.Count(ctx, schema.Collection("demo", schema.Communities))
	if err != nil || reports != gs.Communities {
		t.Errorf("reports = %d (%v), communities = %d", reports, err, gs.Communities)
	}
	ents, err := p.Vectors.Count(ctx, schema.Collection("demo", schema.Entities))
	if err != nil || ents != gs.Entities {
		t.Errorf("entity embeddings = %d (%v), entities = %d", ents, err, gs.Entities)
	}

	qs, err := readQuestions("../../examples/questions.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		t.Run(q.Mode+"/"+q.Question, func(t *testing.T) {
			resp, err := st.Asker.Query(ctx, ask.Request{Corpus: "demo", Query: q.Question, Mode: q.Mode}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Mode != q.Mode {
				t.Errorf("mode %s, want %s", resp.Mode, q.Mode)
			}
			var text strings.Builder
			text.WriteString(resp.Answer)
			for _, c := range resp.Context.Chunks {
				text.WriteString(c.Text)
			}
			for _, c := range resp.Context.Communities {
				text.WriteString(c.Title + c.Summary)
			}
			for _, pa := range resp.Partials {
				text.WriteString(pa.Answer)
			}
			// A local answer's context must hold every expected fact; a global survey
			// must touch at least one of the expected themes.
			got := strings.ToLower(text.String())
			var missing []string
			for _, want := range q.Expect {
				if !strings.Contains(got, strings.ToLower(want)) {
					missing = append(missing, want)
				}
			}
			if (q.Mode == ask.ModeLocal && len(missing) > 0) || len(missing) == len(q.Expect) {
				t.Errorf("%q missing from the answer and context", missing)
			}
			if q.Mode == ask.ModeGlobal && len(resp.Partials) == 0 {
				t.Errorf("global answer without partial answers")
			}
			if resp.Answer == "" || len(resp.Citations) == 0 {
				t.Errorf("answer %q with %d citations", resp.Answer, len(resp.Citations))
			}
		})
	}

	// Every community level is reachable (defect 5 of seeds/002: only level 0 was used).
	for lvl := 0; lvl < gs.Levels; lvl++ {
		c, _, err := st.Asker.Retrieve(ctx, ask.Request{Corpus: "demo", Query: "Storm Hester and the lighthouse", Level: &lvl})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Communities) == 0 {
			t.Errorf("no community at level %d", lvl)
		}
		for _, cm := range c.Communities {
			if cm.Level != lvl {
				t.Errorf("asked for level %d, got a community at level %d", lvl, cm.Level)
			}
		}
	}

	// Automatic classification: a question about an entity is local, one about the
	// corpus's themes is global.
	for q, want := range map[string]string{
		"Who is Ada Quillane?":                        ask.ModeLocal,
		"What are the main themes across the corpus?": ask.ModeGlobal,
	} {
		resp, err := st.Asker.Query(ctx, ask.Request{Corpus: "demo", Query: q}, nil)
		if err != nil || resp.Mode != want {
			t.Errorf("auto mode for %q: %v, %v; want %s", q, resp, err, want)
		}
	}

	// Re-publishing the same corpus changes nothing.
	sum, err = publishPaths(ctx, p.Bus, "demo", []string{"../../examples/corpus"}, publishOptions{})
	if err != nil || sum.Duplicate != 14 {
		t.Fatalf("republish: %+v, %v", sum, err)
	}
}

// TestBadInputIsDeadLettered: malformed JSON, an unknown schema version, a corpus that
// does not match the subject, invalid UTF-8 and an empty document each land in the
// dead-letter subject with a reason, and a good document after them is still indexed.
func TestBadInputIsDeadLettered(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	p := testPlatform(t, t.TempDir())
	startStack(t, p, fastConfig())
	ctx := context.Background()
	subject := events.Subject(events.KindDocuments, "bad")
	bad := map[string]string{
		"malformed":  `{"schema":`,
		"version":    `{"schema":"graphrag.document.v9","corpus":"bad","id":"a","text":"x"}`,
		"mismatch":   `{"schema":"graphrag.document.v1","corpus":"other","id":"a","text":"x"}`,
		"utf8":       "{\"schema\":\"graphrag.document.v1\",\"corpus\":\"bad\",\"id\":\"a\",\"text\":\"\xff\"}",
		"empty text": `{"schema":"graphrag.document.v1","corpus":"bad","id":"a","text":"   "}`,
	}
	for name, body := range bad {
		if _, err := p.Bus.Publish(ctx, subject, []byte(body)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	good := events.Document{Corpus: "bad", ID: "good", Title: "Good", Text: "Marrow Bay is a town on the coast. Ada Quillane works at the Marrow Bay Marine Institute."}
	if _, err := pipeline.PublishDocument(ctx, p.Bus, good); err != nil {
		t.Fatal(err)
	}
	st := waitIndexed(t, p, "bad")
	if got := st.Stages[0].DeadLettered; got != uint64(len(bad)) {
		t.Fatalf("dead-lettered = %d, want %d (%+v)", got, len(bad), st.Stages[0])
	}
	if _, err := p.Graph.Entity(ctx, "bad", "ada quillane"); err != nil {
		t.Fatalf("the good document was not indexed: %v", err)
	}
	// Each dead letter carries its reason.
	cons, err := p.Bus.JetStream().OrderedConsumer(ctx, pipeline.DLQStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{events.DeadLetterSubject(pipeline.StageChunker, "bad")}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(bad); i++ {
		m, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if reason := m.Headers().Get("Graphrag-Dlq-Reason"); reason == "" || !strings.Contains(reason, "field") {
			t.Errorf("dead letter %d reason %q", i, reason)
		}
	}
}
