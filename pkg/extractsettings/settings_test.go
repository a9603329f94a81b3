package extractsettings

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/prompts"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
)

const settingsYAML = `# settings of the storms corpus
entity_types: [STORM, RESEARCHER, PLACE]
domain: Reports of inquiries into coastal storms.
examples:
  - text: Prof. Lin Oake studied Storm Brannagh at Marrow Bay.
    output:
      entities:
        - {name: Lin Oake, type: RESEARCHER, description: A professor.}
        - {name: Storm Brannagh, type: STORM, description: A storm.}
      relationships:
        - {source: Lin Oake, target: Storm Brannagh, type: STUDIED, description: She studied it., strength: 8}
system_prompt: |
  You read storm inquiry reports.
`

func TestParseYAML(t *testing.T) {
	s, err := ParseYAML([]byte(settingsYAML))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.EntityTypes, []string{"STORM", "RESEARCHER", "PLACE"}) || len(s.Examples) != 1 ||
		s.Examples[0].Output.Relationships[0].Strength != 8 || s.SystemPrompt != "You read storm inquiry reports.\n" {
		t.Fatalf("parsed %+v", s)
	}
	// What YAML writes, ParseYAML reads back the same.
	out, err := s.YAML()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseYAML(out)
	if err != nil || !reflect.DeepEqual(back, s) {
		t.Fatalf("round trip: %+v, %v\n%s", back, err, out)
	}
	for _, tc := range []struct{ name, yaml, want string }{
		{"unknown key", "entity_type: [STORM]\n", `line 1: unknown key "entity_type"`},
		{"empty file", "# nothing\n", "no settings in the file"},
		{"invalid", "entity_types: [storm]\n", `"storm" is not an upper-case name`},
		{"example output not an object", "examples:\n  - text: t\n    output: [a]\n", "cannot unmarshal"},
	} {
		_, err := ParseYAML([]byte(tc.yaml))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrInvalid with %q", tc.name, err, tc.want)
		}
	}
}

func testBus(t *testing.T) (*bus.Bus, bus.KV) {
	t.Helper()
	b, err := bus.New(bustest.Connect(t, bustest.StartServer(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := pipeline.Provision(t.Context(), b, pipeline.DefaultTopology()); err != nil {
		t.Fatal(err)
	}
	kv, err := b.KV(t.Context(), schema.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	return b, kv
}

// TestSaveVersions: each change is the next version, the same settings saved again
// keep theirs, invalid ones change nothing, corpora are apart.
func TestSaveVersions(t *testing.T) {
	_, kv := testBus(t)
	ctx := t.Context()
	if r, err := Load(ctx, kv, "storms"); err != nil || r.Version != 0 || !r.Settings.IsZero() {
		t.Fatalf("before any save: %+v, %v", r, err)
	}
	s, err := ParseYAML([]byte(settingsYAML))
	if err != nil {
		t.Fatal(err)
	}
	r1, err := Save(ctx, kv, "storms", s)
	if err != nil || r1.Version != 1 || r1.UpdatedAt.IsZero() {
		t.Fatalf("first save: %+v, %v", r1, err)
	}
	if r, err := Save(ctx, kv, "storms", s); err != nil || r.Version != 1 {
		t.Fatalf("the same settings again: %+v, %v", r, err)
	}
	s.Domain = "Reports of river floods."
	if r, err := Save(ctx, kv, "storms", s); err != nil || r.Version != 2 {
		t.Fatalf("a change: %+v, %v", r, err)
	}
	if _, err := Save(ctx, kv, "storms", Settings{EntityTypes: []string{"bad type"}}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("invalid settings saved: %v", err)
	}
	if r, err := Save(ctx, kv, "storms", Settings{}); err != nil || r.Version != 3 || !r.Settings.IsZero() {
		t.Fatalf("back to the built-in prompt: %+v, %v", r, err)
	}
	if r, err := Load(ctx, kv, "other"); err != nil || r.Version != 0 {
		t.Fatalf("another corpus: %+v, %v", r, err)
	}
}

// TestGuide: the settings' examples reach the prompt as JSON answers of the
// extraction's format.
func TestGuide(t *testing.T) {
	s, err := ParseYAML([]byte(settingsYAML))
	if err != nil {
		t.Fatal(err)
	}
	g := s.Guide()
	var out struct {
		Entities      []map[string]any `json:"entities"`
		Relationships []map[string]any `json:"relationships"`
	}
	if err := json.Unmarshal([]byte(g.Examples[0].Output), &out); err != nil || len(out.Entities) != 2 || out.Relationships[0]["strength"] != 8.0 {
		t.Fatalf("example output %s: %v", g.Examples[0].Output, err)
	}
	sys := prompts.ExtractionSystemWith(g)
	for _, want := range []string{"You read storm inquiry reports.", prompts.OutputContract, s.Domain, "STORM, RESEARCHER, PLACE", s.Examples[0].Text} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, sys)
		}
	}
}

// chunkStore writes the chunk records of one indexed document and its record, as the
// chunker does, and returns the store.
func chunkStore(t *testing.T, kv bus.KV, corpus string, bodies []string, skip int) *embedded.Store {
	t.Helper()
	ctx := t.Context()
	vs, err := embedded.Open(filepath.Join(t.TempDir(), "v"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = vs.Close() })
	coll := schema.Collection(corpus, schema.Chunks)
	if err := vs.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: coll, Dim: 4, Lexical: true}); err != nil {
		t.Fatal(err)
	}
	set := pipeline.ChunkSet{Version: "7"}
	var recs []vectorstore.Record
	for i, body := range bodies {
		h := events.Hash(body)[:12]
		set.Hashes += h
		attrs := map[string]string{schema.ChunkDocumentID: "storms.md", schema.ChunkTitle: "Storms", schema.ChunkSection: "Inquiry",
			schema.ChunkPosition: string(rune('0' + i)), schema.ChunkSubject: "Storm Hester", schema.ChunkSubjectAliases: "Hester\nThe storm"}
		if i == skip {
			attrs[schema.ChunkSkip] = "low information"
		}
		recs = append(recs, vectorstore.Record{ID: pipeline.ChunkID("storms.md", i, h, "7"), Vector: []float32{1, float32(i), 0, 1},
			Text: schema.ChunkText("Storms", "Inquiry", body), Attrs: attrs})
	}
	if err := vs.Upsert(ctx, coll, recs); err != nil {
		t.Fatal(err)
	}
	rec := pipeline.DocumentRecord{ID: "storms.md", Seq: 7, State: pipeline.StateIndexed, Chunks: set, Title: "Storms"}
	if _, err := pipeline.StoreDocument(ctx, kv, corpus, rec, 0); err != nil {
		t.Fatal(err)
	}
	// A deleted document: nothing of it is published.
	if _, err := pipeline.StoreDocument(ctx, kv, corpus, pipeline.DocumentRecord{ID: "gone.md", Seq: 9, Deleted: true, State: pipeline.StateDeleted}, 0); err != nil {
		t.Fatal(err)
	}
	return vs
}

// TestReindex: every extracted chunk of the indexed document is published again as the
// chunker published it (same id, version, text, subject), skipped ones are not, and
// publishing again under the same settings version is a duplicate.
func TestReindex(t *testing.T) {
	b, kv := testBus(t)
	ctx := t.Context()
	bodies := []string{"Storm Hester reached Marrow Bay.", "Ok.", "Dr Ada Quillane chaired the inquiry."}
	vs := chunkStore(t, kv, "storms", bodies, 1)
	if _, err := Save(ctx, kv, "storms", Settings{EntityTypes: []string{"STORM"}}); err != nil {
		t.Fatal(err)
	}
	res, err := Reindex(ctx, b, kv, vs, "storms")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Reindexed{Corpus: "storms", SettingsVersion: 1, Documents: 1, Chunks: 2, Skipped: 1}); res != want {
		t.Fatalf("reindexed %+v, want %+v", res, want)
	}
	msgs := bustest.Messages(t, b, pipeline.StreamName(events.KindChunks), events.Subject(events.KindChunks, "storms"))
	if len(msgs) != 2 {
		t.Fatalf("%d chunk events, want 2", len(msgs))
	}
	var c events.Chunk
	if err := events.Decode(msgs[1], &c); err != nil {
		t.Fatal(err)
	}
	want := events.Chunk{Schema: events.SchemaChunk, Corpus: "storms", ID: pipeline.ChunkID("storms.md", 2, events.Hash(bodies[2])[:12], "7"),
		DocumentID: "storms.md", DocumentTitle: "Storms", Subject: "Storm Hester", SubjectAliases: []string{"Hester", "The storm"},
		Position: 2, Total: 3, Section: "Inquiry", Text: bodies[2], Tokens: c.Tokens, DocumentVersion: "7"}
	if c.Tokens == 0 || !reflect.DeepEqual(c, want) {
		t.Fatalf("chunk event\n%+v\nwant\n%+v", c, want)
	}
	if _, err := Reindex(ctx, b, kv, vs, "storms"); err != nil {
		t.Fatal(err)
	}
	if n := len(bustest.Messages(t, b, pipeline.StreamName(events.KindChunks), events.Subject(events.KindChunks, "storms"))); n != 2 {
		t.Errorf("%d chunk events after the same reindex again, want 2 (duplicates)", n)
	}
	if _, err := Save(ctx, kv, "storms", Settings{EntityTypes: []string{"STORM", "PERSON"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := Reindex(ctx, b, kv, vs, "storms"); err != nil {
		t.Fatal(err)
	}
	if n := len(bustest.Messages(t, b, pipeline.StreamName(events.KindChunks), events.Subject(events.KindChunks, "storms"))); n != 4 {
		t.Errorf("%d chunk events after a reindex under new settings, want 4", n)
	}
}

// TestPropose: a sample of the corpus goes to the model under the settings' response
// schema; its answer comes back in the settings' form, with what does not validate
// dropped and said.
func TestPropose(t *testing.T) {
	_, kv := testBus(t)
	vs := chunkStore(t, kv, "storms", []string{"Storm Hester reached Marrow Bay.", "Ok.", "Dr Ada Quillane chaired the inquiry."}, 1)
	passages, err := Sample(t.Context(), vs, "storms", 5)
	if err != nil || len(passages) != 2 || passages[0] != "Storm Hester reached Marrow Bay." {
		t.Fatalf("sample %q, %v", passages, err)
	}
	if _, err := Sample(t.Context(), vs, "none", 5); !errors.Is(err, ErrNoChunks) {
		t.Errorf("sample of an empty corpus: %v", err)
	}
	srv := llmtest.NewServer(llmtest.WithRequestLog(), llmtest.WithChatReply(func(req openai.ChatCompletionRequest) string {
		if req.ResponseFormat == nil || req.ResponseFormat.JSONSchema == nil || req.ResponseFormat.JSONSchema.Name != prompts.SettingsSchemaName {
			return "not asked for settings"
		}
		return `{"domain":"Coastal storm inquiries.","entity_types":["Storm","researcher","Storm","place name"],
			"examples":[{"text":"Storm Hester reached Marrow Bay.","output":{"entities":[{"name":"Storm Hester","type":"storm","description":"A storm."},{"name":"Marrow Bay","type":"Place Name","description":"A bay."}],
				"relationships":[{"source":"Storm Hester","target":"Marrow Bay","type":"reached","description":"It reached the bay.","strength":7.6}]}},
			{"text":"Dr Ada Quillane chaired the inquiry.","output":{"entities":[{"name":"Ada Quillane","type":"JUDGE","description":"A doctor."}],"relationships":[]}}]}`
	}))
	t.Cleanup(srv.Close)
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), ChatModel: "fake", MaxRetries: 1}, llm.WithSleeper(func(context.Context, time.Duration) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Propose(t.Context(), c, passages)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.Settings.EntityTypes, []string{"STORM", "RESEARCHER", "PLACE_NAME"}) || p.Settings.Domain != "Coastal storm inquiries." ||
		len(p.Settings.Examples) != 1 || p.Settings.Examples[0].Output.Relationships[0] != (Relationship{Source: "Storm Hester", Target: "Marrow Bay", Type: "REACHED", Description: "It reached the bay.", Strength: 8}) {
		t.Fatalf("proposal %+v", p)
	}
	if len(p.Dropped) != 1 || !strings.Contains(p.Dropped[0], `"JUDGE" is not one of entity_types`) || p.Passages != 2 || p.Model != "fake" {
		t.Errorf("proposal %+v", p)
	}
	if err := p.Settings.Validate(); err != nil {
		t.Errorf("the proposal does not validate: %v", err)
	}
	user := srv.Requests()[0].Chat.Messages[1].Content
	if !strings.Contains(user, passages[0]) || !strings.Contains(user, passages[1]) {
		t.Errorf("the sample is not in the prompt:\n%s", user)
	}
}

// TestExampleFile: the sample corpus's settings file, which the documentation tells
// users to save, is valid.
func TestExampleFile(t *testing.T) {
	data, err := os.ReadFile("../../examples/extraction-settings.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseYAML(data)
	if err != nil || len(s.EntityTypes) == 0 || len(s.Examples) == 0 || s.Domain == "" {
		t.Fatalf("%+v, %v", s, err)
	}
}
