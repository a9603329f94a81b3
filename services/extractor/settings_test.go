package extractor

import (
	"encoding/json"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/graphrag/graphrag/pkg/extractsettings"
)

// TestExtractionSettingsReachThePrompt checks that a corpus's extraction settings are
// in the prompt of every chunk extracted after they are saved (domain, examples, a
// replaced system text, the types as the schema's only ones), and that the extraction
// records the version it was prompted with.
func TestExtractionSettingsReachThePrompt(t *testing.T) {
	f := newFixture(t, func(req openai.ChatCompletionRequest) string {
		return `{"entities":[{"name":"Ada Quillane","type":"RESEARCHER","description":"Chaired the inquiry."}],"relationships":[]}`
	})
	ctx := t.Context()
	text := "Dr Ada Quillane chaired the Storm Hester Inquiry in 1999."
	// Before any settings: the built-in prompt, version 0.
	if err := f.svc.handleChunk(ctx, "demo", chunkMsg(t, text)); err != nil {
		t.Fatal(err)
	}
	if x := lastExtraction(t, f.bus); x.SettingsVersion != 0 {
		t.Fatalf("settings version %d before any settings", x.SettingsVersion)
	}
	set := extractsettings.Settings{
		EntityTypes:  []string{"RESEARCHER", "STORM"},
		Domain:       "Reports of coastal storm inquiries.",
		SystemPrompt: "You read inquiry reports and list who investigated which storm.",
		Examples: []extractsettings.Example{{Text: "Prof. Lin Oake studied Storm Brannagh.", Output: extractsettings.Output{
			Entities: []extractsettings.Entity{{Name: "Lin Oake", Type: "RESEARCHER", Description: "A professor."},
				{Name: "Storm Brannagh", Type: "STORM", Description: "A storm."}},
			Relationships: []extractsettings.Relationship{{Source: "Lin Oake", Target: "Storm Brannagh", Type: "STUDIED", Description: "She studied it.", Strength: 8}}}}},
	}
	rec, err := extractsettings.Save(ctx, f.svc.state, "demo", set)
	if err != nil || rec.Version != 1 {
		t.Fatalf("save: %+v, %v", rec, err)
	}
	if err := f.svc.handleChunk(ctx, "demo", chunkMsg(t, text)); err != nil {
		t.Fatal(err)
	}
	if x := lastExtraction(t, f.bus); x.SettingsVersion != 1 || len(x.Entities) == 0 {
		t.Fatalf("extraction under settings 1: %+v", x)
	}
	reqs := f.llms.Requests()
	last := reqs[len(reqs)-1].Chat
	system := last.Messages[0].Content
	for _, want := range []string{set.SystemPrompt, set.Domain, "use only these types: RESEARCHER, STORM", "Prof. Lin Oake studied Storm Brannagh.",
		`"name":"Storm Brannagh","type":"STORM"`, "Return JSON only"} {
		if !strings.Contains(system, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, system)
		}
	}
	if strings.Contains(system, "You extract a knowledge graph from text.") {
		t.Errorf("the replaced system text is still there:\n%s", system)
	}
	schema, err := json.Marshal(last.ResponseFormat.JSONSchema.Schema)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(schema), `"enum":["RESEARCHER","STORM"]`) {
		t.Errorf("response schema does not restrict the types: %s", schema)
	}
	// New settings: the next chunk is extracted under version 2, with the new domain.
	set.Domain = "Reports of river flood inquiries."
	if rec, err := extractsettings.Save(ctx, f.svc.state, "demo", set); err != nil || rec.Version != 2 {
		t.Fatalf("second save: %+v, %v", rec, err)
	}
	if err := f.svc.handleChunk(ctx, "demo", chunkMsg(t, text)); err != nil {
		t.Fatal(err)
	}
	if x := lastExtraction(t, f.bus); x.SettingsVersion != 2 {
		t.Fatalf("settings version %d after the change, want 2", x.SettingsVersion)
	}
	reqs = f.llms.Requests()
	if system := reqs[len(reqs)-1].Chat.Messages[0].Content; !strings.Contains(system, "river flood") {
		t.Errorf("system prompt after the change:\n%s", system)
	}
}

// TestOfflineExtractionIgnoresSettings: without a model, settings change nothing and
// the extraction records no settings version.
func TestOfflineExtractionIgnoresSettings(t *testing.T) {
	f := newFixture(t, nil)
	ctx := t.Context()
	if _, err := extractsettings.Save(ctx, f.svc.state, "demo", extractsettings.Settings{EntityTypes: []string{"STORM"}}); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.handleChunk(ctx, "demo", chunkMsg(t, "Dr Ada Quillane chaired the Storm Hester Inquiry in 1999.")); err != nil {
		t.Fatal(err)
	}
	if x := lastExtraction(t, f.bus); x.SettingsVersion != 0 || x.Method != offlineMethod || len(x.Entities) == 0 {
		t.Fatalf("offline extraction %+v", x)
	}
}
