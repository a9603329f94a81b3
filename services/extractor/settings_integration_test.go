//go:build integration

package extractor

import (
	"os"
	"slices"
	"testing"

	"github.com/graphrag/graphrag/pkg/extractsettings"
	"github.com/graphrag/graphrag/pkg/llm"
)

// TestIntegrationSettingsTypesHoldOnARealModel extracts one chunk with a real model
// server (scripts/integration/llm) under settings that allow two types: the response
// schema's enum holds a grammar-constrained decoder to them, so every entity the model
// gives has one of them (the document's subject, which the extractor adds itself, keeps
// the offline extractor's type), and the extraction records the settings version.
func TestIntegrationSettingsTypesHoldOnARealModel(t *testing.T) {
	base, model := os.Getenv("GRAPHRAG_TEST_LLM_BASE_URL"), os.Getenv("GRAPHRAG_TEST_LLM_CHAT_MODEL")
	if base == "" || model == "" {
		t.Skip("GRAPHRAG_TEST_LLM_BASE_URL and GRAPHRAG_TEST_LLM_CHAT_MODEL are not set: start a model server with scripts/integration/llm/start.sh")
	}
	f := newFixture(t, nil)
	c, err := llm.New(llm.Config{BaseURL: base, ChatModel: model})
	if err != nil {
		t.Fatal(err)
	}
	f.svc.deps.LLM = c
	// A short answer: the small test model decodes a few tokens a second on a busy machine.
	f.svc.cfg.MaxEntities, f.svc.cfg.MaxRelationships = 4, 3
	types := []string{"PERSON", "STORM"}
	if _, err := extractsettings.Save(t.Context(), f.svc.state, "demo", extractsettings.Settings{EntityTypes: types,
		Domain: "Reports of inquiries into coastal storms."}); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.handleChunk(t.Context(), "demo", chunkMsg(t, "Dr Ada Quillane chaired the inquiry into Storm Hester, which struck Marrow Bay in 1998.")); err != nil {
		t.Fatal(err)
	}
	x := lastExtraction(t, f.bus)
	if x.Method != "llm/"+model || x.SettingsVersion != 1 {
		t.Fatalf("extraction by %s under settings %d, want llm/%s under 1 (the model gave no valid JSON?)", x.Method, x.SettingsVersion, model)
	}
	for _, e := range x.Entities {
		if e.Name != "Storm Hester" && !slices.Contains(types, e.Type) {
			t.Errorf("entity %+v has a type outside %v", e, types)
		}
	}
	t.Logf("entities: %+v", x.Entities)
}
