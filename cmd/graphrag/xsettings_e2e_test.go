package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/extractsettings"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/platform"
)

// settingsModel is fakeModel, which obeys the extraction settings: under "use only these
// types: T, ...", every entity it extracts has type T. It proposes fixed settings.
func settingsModel(req openai.ChatCompletionRequest) string {
	if req.ResponseFormat != nil && req.ResponseFormat.JSONSchema != nil && req.ResponseFormat.JSONSchema.Name == "extraction_settings" {
		return `{"domain":"A fishing town on a stormy coast: its lighthouse, storms and institutions.","entity_types":["place","Person","organization"],
			"examples":[{"text":"Orla Venn keeps Gullhead Lighthouse.","output":{"entities":[{"name":"Orla Venn","type":"person","description":"The keeper."},
				{"name":"Gullhead Lighthouse","type":"PLACE","description":"A lighthouse."}],"relationships":[{"source":"Orla Venn","target":"Gullhead Lighthouse","type":"keeps","description":"She keeps it.","strength":9}]}}]}`
	}
	out := fakeModel(req)
	_, rest, ok := strings.Cut(req.Messages[0].Content, "use only these types: ")
	if !ok || req.ResponseFormat == nil || req.ResponseFormat.JSONSchema == nil || req.ResponseFormat.JSONSchema.Name != "extraction" {
		return out
	}
	typ := rest[:strings.IndexAny(rest, ",.")]
	var x map[string][]map[string]any
	if err := json.Unmarshal([]byte(out), &x); err != nil {
		return out
	}
	for _, e := range x["entities"] {
		e["type"] = typ
	}
	b, _ := json.Marshal(x)
	return string(b)
}

// graphState is what the corpus's graph holds: every entity with its mentions, chunks
// and type, and every edge's weight.
type graphState struct {
	entities map[string]graphstore.Entity
	edges    []graphstore.Edge
}

func readGraph(t *testing.T, p *platform.Platform, corpus string) graphState {
	t.Helper()
	snap, err := p.Graph.Snapshot(t.Context(), corpus)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := p.Graph.Entities(t.Context(), corpus, snap.Keys)
	if err != nil {
		t.Fatal(err)
	}
	g := graphState{entities: map[string]graphstore.Entity{}, edges: snap.Edges}
	for _, e := range ents {
		slices.Sort(e.ChunkIDs)
		g.entities[e.Key] = e
	}
	return g
}

// TestExtractionSettingsEndToEnd goes through the CLI and the API on the whole pipeline
// with a model: prompt-tune proposes settings, extraction-settings saves them (which
// re-extracts nothing), reindex extracts every chunk again under them, and the graph is
// the same graph with the new types: no entity, mention or edge weight doubled.
func TestExtractionSettingsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	model := llmtest.NewServer(llmtest.WithChatReply(settingsModel), llmtest.WithDimension(64), llmtest.WithRequestLog())
	t.Cleanup(model.Close)
	p := testPlatform(t, t.TempDir(), "-llm-base-url", model.URL(), "-llm-chat-model", "fake", "-llm-embed-model", "fake-embed")
	st := startStack(t, p, fastConfig())
	mux := http.NewServeMux()
	st.Query.Mount(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx := t.Context()
	const corpus = "coast"
	docs := []string{"../../examples/corpus/01_marrow_bay_overview.md", "../../examples/corpus/02_gullhead_lighthouse.md", "../../examples/corpus/05_marine_institute.md"}
	if _, err := publishPaths(ctx, p.Bus, corpus, docs, publishOptions{}); err != nil {
		t.Fatal(err)
	}
	waitIndexed(t, p, corpus)
	before := readGraph(t, p, corpus)
	if len(before.entities) < 10 {
		t.Fatalf("%d entities", len(before.entities))
	}
	extractions := func() []events.Extraction {
		var out []events.Extraction
		for _, m := range bustest.Messages(t, p.Bus, pipeline.StreamName(events.KindExtractions), events.Subject(events.KindExtractions, corpus)) {
			var x events.Extraction
			if err := events.Decode(m, &x); err != nil {
				t.Fatal(err)
			}
			out = append(out, x)
		}
		return out
	}
	first := extractions()
	cli := func(args ...string) string {
		t.Helper()
		var out, errw bytes.Buffer
		if err := dispatch(ctx, append(args[:1:1], append([]string{"-api", srv.URL}, args[1:]...)...), &out, &errw); err != nil {
			t.Fatalf("graphrag %s: %v\n%s", strings.Join(args, " "), err, errw.String())
		}
		return out.String()
	}

	// prompt-tune: the model's proposal in the settings' form, as YAML.
	file := filepath.Join(t.TempDir(), "settings.yaml")
	if out := cli("prompt-tune", "-corpus", corpus, "-sample", "3", "-out", file); !strings.Contains(out, "3 entity types, 1 examples") {
		t.Fatalf("prompt-tune: %s", out)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	proposed, err := extractsettings.ParseYAML(data)
	if err != nil || !slices.Equal(proposed.EntityTypes, []string{"PLACE", "PERSON", "ORGANIZATION"}) {
		t.Fatalf("proposal %+v, %v\n%s", proposed, err, data)
	}
	reqs := model.Requests()
	tune := reqs[len(reqs)-1].Chat
	if n := strings.Count(tune.Messages[1].Content, "\n["); n != 3 {
		t.Errorf("the proposal was asked with %d passages, want 3:\n%s", n, tune.Messages[1].Content)
	}

	// extraction-settings -file saves them as version 1 and re-extracts nothing.
	if out := cli("extraction-settings", "-corpus", corpus, "-file", file); !strings.Contains(out, "version 1 saved") {
		t.Fatalf("extraction-settings -file: %s", out)
	}
	if out := cli("extraction-settings", "-corpus", corpus, "-file", file); !strings.Contains(out, "unchanged (version 1)") {
		t.Fatalf("the same file again: %s", out)
	}
	if out := cli("extraction-settings", "-corpus", corpus); !strings.Contains(out, "version 1, saved") || !strings.Contains(out, "- PLACE") {
		t.Fatalf("extraction-settings: %s", out)
	}
	if n := len(extractions()); n != len(first) {
		t.Fatalf("saving settings published %d extractions", n-len(first))
	}

	// reindex: every extracted chunk again, under version 1.
	out := cli("reindex", "-corpus", corpus)
	var chunks int
	for _, x := range first {
		if x.Skipped == "" {
			chunks++
		}
	}
	if want := "chunks of 3 documents published for extraction under settings version 1"; !strings.Contains(out, want) || !strings.Contains(out, ": "+itoa(chunks)+" chunks") {
		t.Fatalf("reindex: %s (want %d chunks)", out, chunks)
	}
	waitIndexed(t, p, corpus)
	var again int
	for _, x := range extractions()[len(first):] {
		if x.SettingsVersion != 1 || x.Method != "llm/fake" {
			t.Errorf("re-extraction %s: version %d, method %s", x.ChunkID, x.SettingsVersion, x.Method)
		}
		again++
	}
	if again != chunks {
		t.Errorf("%d re-extractions, want %d", again, chunks)
	}
	after := readGraph(t, p, corpus)
	if !slices.Equal(slices.Sorted(maps.Keys(after.entities)), slices.Sorted(maps.Keys(before.entities))) {
		t.Fatalf("entities changed: %d before, %d after", len(before.entities), len(after.entities))
	}
	typed := 0
	for k, b := range before.entities {
		a := after.entities[k]
		if a.MentionCount != b.MentionCount || !slices.Equal(a.ChunkIDs, b.ChunkIDs) {
			t.Errorf("entity %s: %d mentions in %v, before %d in %v", k, a.MentionCount, a.ChunkIDs, b.MentionCount, b.ChunkIDs)
		}
		if a.Type == "PLACE" {
			typed++
		}
	}
	// The document's subject the extractor adds itself keeps the offline type.
	if typed < len(after.entities)-len(docs) {
		t.Errorf("%d of %d entities typed PLACE after the re-extraction", typed, len(after.entities))
	}
	if !slices.Equal(after.edges, before.edges) {
		t.Errorf("edges changed: %d before, %d after", len(before.edges), len(after.edges))
	}
	// Every re-extraction prompted the model with the settings.
	withDomain := 0
	for _, r := range model.Requests() {
		if r.Chat != nil && r.Chat.ResponseFormat != nil && r.Chat.ResponseFormat.JSONSchema.Name == "extraction" &&
			strings.Contains(r.Chat.Messages[0].Content, proposed.Domain) {
			withDomain++
		}
	}
	if withDomain != chunks {
		t.Errorf("%d extraction prompts carry the settings' domain, want %d", withDomain, chunks)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
