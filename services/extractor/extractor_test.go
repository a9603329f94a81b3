package extractor

import (
	"context"
	"github.com/graphrag/graphrag/pkg/offlinextract"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
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
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
)

func TestCapAndClean(t *testing.T) {
	ents := []events.ExtractedEntity{
		{Name: "Ada Quillane", Type: "person", Description: "short"},
		{Name: "the Ada Quillane", Type: "PERSON", Description: "a longer description"}, // same key: merged
		{Name: "  ", Type: "X"},                  // empty: dropped
		{Name: "Marrow Bay", Type: "place name"}, // type upper-cased with underscores
		{Name: "Storm Hester", Type: ""},         // default type
		{Name: "Over the cap", Type: "CONCEPT"},  // beyond the cap of 3
	}
	rels := []events.ExtractedRelationship{
		{Source: "Ada Quillane", Target: "Marrow Bay", Type: "lives in", Strength: 0.4},
		{Source: "Ada Quillane", Target: "ada quillane", Strength: 1}, // self loop after normalization
		{Source: "Storm Hester", Target: "Marrow Bay", Strength: 7},   // clamped to 1
		{Source: "Storm Hester", Target: "Marrow Bay", Strength: 0.2}, // duplicate pair
	}
	e, r := capAndClean(ents, rels, 3, 10)
	if len(e) != 3 || e[0].Description != "a longer description" || e[1].Type != "PLACE_NAME" || e[2].Type != "CONCEPT" {
		t.Fatalf("entities %+v", e)
	}
	if len(r) != 2 || r[0].Strength != 1 || r[0].Type != "RELATED_TO" || r[1].Type != "LIVES_IN" {
		t.Fatalf("relationships %+v", r)
	}
}

type fixture struct {
	svc  *Service
	bus  *bus.Bus
	llms *llmtest.Server
}

// newBusAndVectors starts an in-process NATS with the pipeline's streams and opens an
// embedded vector store, both closed when the test ends.
func newBusAndVectors(t *testing.T) (*bus.Bus, *embedded.Store) {
	t.Helper()
	b, err := bus.New(bustest.Connect(t, bustest.StartServer(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := pipeline.Provision(t.Context(), b, pipeline.DefaultTopology()); err != nil {
		t.Fatal(err)
	}
	vs, err := embedded.Open(filepath.Join(t.TempDir(), "v"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = vs.Close() })
	return b, vs
}

// newFixture builds an extractor on an in-process NATS and an embedded vector store,
// with an LLM endpoint that answers with reply (or offline when reply is nil).
func newFixture(t *testing.T, reply func(openai.ChatCompletionRequest) string) fixture {
	t.Helper()
	b, vs := newBusAndVectors(t)
	f := fixture{bus: b}
	deps := Deps{Bus: b, Vectors: vs, Embedder: hashembed.New(64), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if reply != nil {
		f.llms = llmtest.NewServer(llmtest.WithChatReply(reply), llmtest.WithRequestLog())
		t.Cleanup(f.llms.Close)
		c, err := llm.New(llm.Config{BaseURL: f.llms.URL(), ChatModel: "test", MaxRetries: 1},
			llm.WithSleeper(func(context.Context, time.Duration) error { return nil }))
		if err != nil {
			t.Fatal(err)
		}
		deps.LLM = c
	}
	s, err := New(DefaultConfig(), deps)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.openBuckets(t.Context()); err != nil {
		t.Fatal(err)
	}
	f.svc = s
	return f
}

func chunkMsg(t *testing.T, text string) *bus.Message {
	t.Helper()
	c := &events.Chunk{Schema: events.SchemaChunk, Corpus: "demo", ID: "d1:0:abc", DocumentID: "d1", DocumentTitle: "Storm Hester",
		Total: 1, Text: text, Tokens: 20}
	b, err := events.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	return &bus.Message{Subject: events.Subject(events.KindChunks, "demo"), Data: b}
}

func lastExtraction(t *testing.T, b *bus.Bus) events.Extraction {
	t.Helper()
	msgs := bustest.Messages(t, b, pipeline.StreamName(events.KindExtractions), events.Subject(events.KindExtractions, "demo"))
	if len(msgs) == 0 {
		t.Fatal("no extraction published")
	}
	var x events.Extraction
	if err := events.Decode(msgs[len(msgs)-1], &x); err != nil {
		t.Fatal(err)
	}
	return x
}

func TestLLMExtraction(t *testing.T) {
	f := newFixture(t, func(req openai.ChatCompletionRequest) string {
		if req.ResponseFormat == nil || req.ResponseFormat.JSONSchema == nil {
			return "not asked for structured output"
		}
		return `{"entities":[{"name":"Ada Quillane","type":"scientist","description":"Chaired the inquiry."},{"name":"Storm Hester Inquiry","type":"event","description":"The 1999 inquiry."}],
			"relationships":[{"source":"Ada Quillane","target":"Storm Hester Inquiry","type":"chaired","description":"She chaired it.","strength":9}]}`
	})
	if err := f.svc.handleChunk(t.Context(), "demo", chunkMsg(t, "Dr Ada Quillane chaired the Storm Hester Inquiry in 1999.")); err != nil {
		t.Fatal(err)
	}
	x := lastExtraction(t, f.bus)
	if x.Method != "llm/test" || len(x.Entities) != 3 || len(x.Relationships) != 1 {
		t.Fatalf("extraction %+v", x)
	}
	// The model left out the document's subject; the extractor adds it first.
	if x.Entities[0].Name != "Storm Hester" {
		t.Errorf("first entity %+v, want the document's subject Storm Hester", x.Entities[0])
	}
	if r := x.Relationships[0]; r.Type != "CHAIRED" || r.Strength != 0.9 {
		t.Fatalf("relationship %+v (strength 1..10 scaled to 0.1..1)", r)
	}
	// The prompt named the document's title and asked for the per-chunk caps.
	if !strings.Contains(f.llms.Requests()[0].Chat.Messages[1].Content, `"Storm Hester"`) {
		t.Errorf("prompt lacks the document title")
	}
}

// A gleaning pass is sent only when the first answer leaves room under the per-chunk
// caps: its prompt carries the first answer, and at both caps it could add no entity.
func TestGleaningOnlyBelowTheCaps(t *testing.T) {
	const first = `{"entities":[{"name":"Ada Quillane","type":"person","description":"Chaired the inquiry."},{"name":"Storm Hester Inquiry","type":"event","description":"The 1999 inquiry."}],
		"relationships":[{"source":"Ada Quillane","target":"Storm Hester Inquiry","type":"chaired","description":"She chaired it.","strength":9}]}`
	const gleaned = `{"entities":[{"name":"Port Ellery","type":"place","description":"Where the inquiry sat."}],"relationships":[]}`
	for _, tc := range []struct {
		name           string
		maxEnt, maxRel int
		wantCalls      int64
		wantGleaned    bool
	}{
		{"both caps filled", 2, 1, 1, false},
		{"entity cap filled, room for relationships", 2, 2, 2, false},
		{"room for entities", 4, 1, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, func(req openai.ChatCompletionRequest) string {
				if len(req.Messages) > 2 {
					return gleaned
				}
				return first
			})
			f.svc.cfg.Gleanings, f.svc.cfg.MaxEntities, f.svc.cfg.MaxRelationships = 1, tc.maxEnt, tc.maxRel
			if err := f.svc.handleChunk(t.Context(), "demo", chunkMsg(t, "Dr Ada Quillane chaired the Storm Hester Inquiry at Port Ellery in 1999.")); err != nil {
				t.Fatal(err)
			}
			if got := f.llms.ChatCalls(); got != tc.wantCalls {
				t.Errorf("%d chat calls, want %d", got, tc.wantCalls)
			}
			x := lastExtraction(t, f.bus)
			got := slices.ContainsFunc(x.Entities, func(e events.ExtractedEntity) bool { return e.Name == "Port Ellery" })
			if got != tc.wantGleaned {
				t.Errorf("gleaned entity kept: %v, want %v (entities %+v)", got, tc.wantGleaned, x.Entities)
			}
		})
	}
}

// Invalid JSON is retried, then the chunk is extracted offline, and the event says so:
// the chunk still reaches the graph.
func TestLLMGarbageFallsBackToOffline(t *testing.T) {
	f := newFixture(t, func(openai.ChatCompletionRequest) string { return "this is not JSON {" })
	if err := f.svc.handleChunk(t.Context(), "demo", chunkMsg(t, "Dr Ada Quillane chaired the Storm Hester Inquiry in 1999.")); err != nil {
		t.Fatalf("handler: %v, want the offline fallback", err)
	}
	if calls := f.llms.ChatCalls(); calls < 2 {
		t.Fatalf("invalid JSON was not retried (%d calls)", calls)
	}
	x := lastExtraction(t, f.bus)
	if x.Method != offlineMethod || !slices.ContainsFunc(x.Entities, func(e events.ExtractedEntity) bool { return e.Name == "Ada Quillane" }) {
		t.Fatalf("extraction %+v, want the offline one", x)
	}
}

func TestOfflineExtractionAndSkips(t *testing.T) {
	f := newFixture(t, nil)
	if err := f.svc.handleChunk(t.Context(), "demo", chunkMsg(t, "Dr Ada Quillane chaired the Storm Hester Inquiry in Marrow Bay.")); err != nil {
		t.Fatal(err)
	}
	x := lastExtraction(t, f.bus)
	if x.Method != "offline/v1" || len(x.Entities) < 2 {
		t.Fatalf("offline extraction %+v", x)
	}
	// A skipped (low-information) chunk still yields exactly one extraction event.
	c := &events.Chunk{Schema: events.SchemaChunk, Corpus: "demo", ID: "d1:1:def", DocumentID: "d1", Total: 2, Position: 1,
		Text: "| 1 | 2 | 3 |", Skip: "low information"}
	b, _ := events.Encode(c)
	if err := f.svc.handleChunk(t.Context(), "demo", &bus.Message{Data: b}); err != nil {
		t.Fatal(err)
	}
	if x := lastExtraction(t, f.bus); x.Skipped != "low information" || len(x.Entities) != 0 {
		t.Fatalf("skipped chunk extraction %+v", x)
	}
	// A chunk whose corpus disagrees with its subject is poison.
	if err := f.svc.handleChunk(t.Context(), "other", chunkMsg(t, "x y z")); !bus.IsPermanent(err) {
		t.Fatalf("corpus mismatch: %v", err)
	}
}

// A new version of a document retires the chunks that disappeared: they leave the vector
// store and a removal extraction tells the grapher to drop their contribution.
func TestDocumentReplacementRetiresChunks(t *testing.T) {
	f := newFixture(t, nil)
	if err := f.svc.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.svc.Stop(context.Background()) })
	publish := func(text string) {
		if _, err := pipeline.PublishDocument(t.Context(), f.bus, events.Document{Corpus: "demo", ID: "d1", Title: "T", Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("Ada Quillane studied the estuary near Marrow Bay for many years. ", 120)
	publish(long)
	waitStage(t, f.bus, 1)
	publish("Ada Quillane now studies the lighthouse.")
	waitStage(t, f.bus, 2)
	removed := 0
	for _, d := range bustest.Messages(t, f.bus, pipeline.StreamName(events.KindExtractions), events.Subject(events.KindExtractions, "demo")) {
		var x events.Extraction
		if events.Decode(d, &x) == nil && x.Method == "removed" {
			removed++
		}
	}
	if removed == 0 {
		t.Fatal("no removal extraction for the retired chunks")
	}
}

func waitStage(t *testing.T, b *bus.Bus, docs uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		st, err := pipeline.GetStatus(ctx, b, "demo")
		if err != nil {
			t.Fatal(err)
		}
		if st.Stages[0].Done >= docs && st.Stages[1].Pending == 0 && st.Stages[1].InFlight == 0 {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("timed out: %+v", st.Stages)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestWithSubject(t *testing.T) {
	ents := []events.ExtractedEntity{{Name: "Stephen King", Type: "PERSON"}, {Name: "Emilio Estevez", Type: "PERSON"}}
	text := "Maximum Overdrive is a 1986 horror film written and directed by Stephen King."
	got := withSubject(ents, offlinextract.DocumentSubject{Name: "Maximum Overdrive (film)"}, text, 10)
	if len(got) != 3 || got[0].Name != "Maximum Overdrive" || got[0].Type == "" {
		t.Fatalf("got %+v, want Maximum Overdrive (without the qualifier) first", got)
	}
	// Already there (under another surface form of the same key): unchanged.
	with := append([]events.ExtractedEntity{{Name: "maximum overdrive", Type: "WORK"}}, ents...)
	if got := withSubject(with, offlinextract.DocumentSubject{Name: "Maximum Overdrive (film)"}, text, 10); len(got) != 3 || got[0].Type != "WORK" {
		t.Fatalf("got %+v, want the model's own entity kept", got)
	}
	// At the cap, the subject takes the last slot.
	if got := withSubject(ents, offlinextract.DocumentSubject{Name: "Maximum Overdrive"}, text, 2); len(got) != 2 || got[0].Name != "Maximum Overdrive" || got[1].Name != "Stephen King" {
		t.Fatalf("got %+v, want [Maximum Overdrive, Stephen King]", got)
	}
	if got := withSubject(ents, offlinextract.DocumentSubject{}, text, 10); len(got) != 2 {
		t.Fatalf("no title: got %+v", got)
	}
}
