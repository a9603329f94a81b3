package extractor

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
	"github.com/graphrag/graphrag/pkg/pipeline"
)

const validExtraction = `{"entities":[{"name":"Ada Quillane","type":"PERSON","description":"A scientist."}],"relationships":[]}`

// startLLMExtractor runs the extractor's stages against the fake model srv, with fast
// retries and probes, and redeliveries that would dead-letter a failing chunk within
// a second.
func startLLMExtractor(t *testing.T, srv *llmtest.Server, timeout time.Duration) *bus.Bus {
	t.Helper()
	b, vs := newBusAndVectors(t)
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), ChatModel: "test", MaxRetries: 2, Timeout: timeout},
		llm.WithBackoff(time.Millisecond, 5*time.Millisecond), llm.WithProbeInterval(20*time.Millisecond, 100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	cfg := DefaultConfig()
	for _, st := range []*pipeline.StageConfig{&cfg.Chunker, &cfg.Extract} {
		st.MaxDeliver, st.Backoff, st.Workers = 2, []time.Duration{10 * time.Millisecond}, 2
	}
	s, err := New(cfg, Deps{Bus: b, Vectors: vs, Embedder: hashembed.New(64), LLM: c, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	return b
}

// waitStatus polls the corpus's status until ok says so.
func waitStatus(t *testing.T, b *bus.Bus, corpus, what string, ok func(pipeline.Status) bool) pipeline.Status {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := pipeline.GetStatus(t.Context(), b, corpus)
		if err != nil {
			t.Fatal(err)
		}
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %+v", what, st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An outage of the model pauses extraction: nothing is dead-lettered however long it
// lasts (here many times what MaxDeliver redeliveries take), status says the corpus is
// paused, and when the model answers again every chunk is extracted by it.
func TestModelOutagePausesExtraction(t *testing.T) {
	srv := llmtest.NewServer(llmtest.WithChatReply(func(openai.ChatCompletionRequest) string { return validExtraction }))
	t.Cleanup(srv.Close)
	b := startLLMExtractor(t, srv, 10*time.Second)
	srv.Down()
	const docs = 6
	for i := range docs {
		d := events.Document{Corpus: "demo", ID: fmt.Sprintf("d%d", i), Title: "Ada", Text: fmt.Sprintf("Ada Quillane wrote report %d about Marrow Bay.", i)}
		if _, err := pipeline.PublishDocument(t.Context(), b, d); err != nil {
			t.Fatal(err)
		}
	}
	st := waitStatus(t, b, "demo", "the pause", func(st pipeline.Status) bool { return st.State == pipeline.StatePaused })
	if len(st.Paused) == 0 || st.Paused[0].Stage != pipeline.StageExtractor {
		t.Fatalf("paused %+v", st.Paused)
	}
	time.Sleep(time.Second) // 50 redelivery backoffs
	st = waitStatus(t, b, "demo", "the pause", func(st pipeline.Status) bool { return st.State == pipeline.StatePaused })
	for _, s := range st.Stages {
		if s.DeadLettered != 0 {
			t.Fatalf("%s dead-lettered %d messages during the outage", s.Stage, s.DeadLettered)
		}
	}
	if ex := st.Stages[1]; ex.Done != 0 {
		t.Fatalf("extractor done %d during the outage", ex.Done)
	}
	srv.Up()
	st = waitStatus(t, b, "demo", "extraction after the outage", func(st pipeline.Status) bool {
		ex := st.Stages[1]
		return st.Stages[0].Done == docs && ex.Total >= docs && ex.Done == ex.Total
	})
	waitStatus(t, b, "demo", "the end of the pause", func(st pipeline.Status) bool { return st.State != pipeline.StatePaused })
	for _, s := range st.Stages[:2] {
		if s.DeadLettered != 0 {
			t.Errorf("%s dead-lettered %d messages", s.Stage, s.DeadLettered)
		}
	}
	for _, data := range bustest.Messages(t, b, pipeline.StreamName(events.KindExtractions), events.Subject(events.KindExtractions, "demo")) {
		var x events.Extraction
		if err := events.Decode(data, &x); err != nil {
			t.Fatal(err)
		}
		if x.Method != "llm/test" {
			t.Errorf("chunk %s extracted by %s, want the model", x.ChunkID, x.Method)
		}
	}
}

// A model that answers its probe but never within the largest time budget does not
// stall the corpus: the chunk is extracted offline, and the event says so.
func TestModelTooSlowFallsBackToOffline(t *testing.T) {
	srv := llmtest.NewServer(llmtest.WithLatency(time.Hour))
	t.Cleanup(srv.Close)
	b := startLLMExtractor(t, srv, 20*time.Millisecond)
	if _, err := pipeline.PublishDocument(t.Context(), b, events.Document{Corpus: "demo", ID: "d1", Title: "Ada",
		Text: "Ada Quillane wrote a report about Marrow Bay."}); err != nil {
		t.Fatal(err)
	}
	st := waitStatus(t, b, "demo", "extraction", func(st pipeline.Status) bool {
		ex := st.Stages[1]
		return ex.Total > 0 && ex.Done == ex.Total
	})
	if st.Stages[1].DeadLettered != 0 {
		t.Fatalf("dead-lettered: %+v", st.Stages[1])
	}
	msgs := bustest.Messages(t, b, pipeline.StreamName(events.KindExtractions), events.Subject(events.KindExtractions, "demo"))
	var x events.Extraction
	if len(msgs) == 0 || events.Decode(msgs[0], &x) != nil || x.Method != offlineMethod || !strings.Contains(fmt.Sprint(x.Entities), "Ada Quillane") {
		t.Fatalf("extraction %+v, want the offline one", x)
	}
}

// An outage of the embedding endpoint pauses the chunker, which embeds the chunks, and
// status names that stage, not the extractor (which has no model here).
func TestEmbedderOutagePausesTheChunker(t *testing.T) {
	srv := llmtest.NewServer(llmtest.WithDimension(16))
	t.Cleanup(srv.Close)
	b, vs := newBusAndVectors(t)
	emb, err := llm.New(llm.Config{BaseURL: srv.URL(), EmbedModel: "e", MaxRetries: 1},
		llm.WithBackoff(time.Millisecond, 5*time.Millisecond), llm.WithProbeInterval(20*time.Millisecond, 100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emb.Close() })
	s, err := New(DefaultConfig(), Deps{Bus: b, Vectors: vs, Embedder: emb, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil { // probes the dimension while the endpoint is up
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	srv.Down()
	d := events.Document{Corpus: "demo", ID: "d0", Title: "Ada", Text: "Ada Quillane wrote a report about Marrow Bay."}
	if _, err := pipeline.PublishDocument(t.Context(), b, d); err != nil {
		t.Fatal(err)
	}
	st := waitStatus(t, b, "demo", "the pause", func(st pipeline.Status) bool { return st.State == pipeline.StatePaused })
	for _, p := range st.Paused {
		if p.Stage != pipeline.StageChunker {
			t.Errorf("paused %+v: the stage that waits for the embedder is the chunker", p)
		}
	}
	srv.Up()
	waitStatus(t, b, "demo", "chunking after the outage", func(st pipeline.Status) bool { return st.Stages[0].Done == 1 })
}
