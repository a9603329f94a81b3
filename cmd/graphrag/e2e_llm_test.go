package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/graphrag/graphrag/pkg/llm/llmtest"
	"github.com/graphrag/graphrag/pkg/offlinextract"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/services/query/ask"
)

// fakeModel answers every prompt the pipeline sends with well-formed output: extraction
// (from the offline extractor run on the prompt's text, so the graph is real), community
// reports, map-phase partial answers, classifications and free-text answers citing [1].
func fakeModel(req openai.ChatCompletionRequest) string {
	last := req.Messages[len(req.Messages)-1].Content
	first := ""
	for _, m := range req.Messages {
		if m.Role == openai.ChatMessageRoleUser {
			first = m.Content
			break
		}
	}
	schema := ""
	if req.ResponseFormat != nil && req.ResponseFormat.JSONSchema != nil {
		schema = req.ResponseFormat.JSONSchema.Name
	}
	switch schema {
	case "extraction":
		if strings.HasPrefix(last, "Some entities") { // gleaning pass: nothing missed
			return `{"entities":[],"relationships":[]}`
		}
		text := first
		if i := strings.Index(text, "Text:\n"); i >= 0 {
			text = text[i+len("Text:\n"):]
		}
		ents, rels := offlinextract.Extract("", text)
		type e struct{ Name, Type, Description string }
		type r struct {
			Source, Target, Type, Description string
			Strength                          int
		}
		out := struct {
			Entities      []e `json:"entities"`
			Relationships []r `json:"relationships"`
		}{Entities: []e{}, Relationships: []r{}}
		for _, x := range ents {
			out.Entities = append(out.Entities, e{x.Name, x.Type, x.Description})
		}
		for _, x := range rels {
			out.Relationships = append(out.Relationships, r{x.Source, x.Target, "RELATED_TO", x.Description, 1 + int(x.Strength*9)})
		}
		b, _ := json.Marshal(out)
		return strings.NewReplacer(`"Name"`, `"name"`, `"Type"`, `"type"`, `"Description"`, `"description"`,
			`"Source"`, `"source"`, `"Target"`, `"target"`, `"Strength"`, `"strength"`).Replace(string(b))
	case "community_report":
		name := "Community"
		if _, rest, ok := strings.Cut(last, "## Entities\n- "); ok {
			name = strings.TrimSpace(rest[:strings.IndexAny(rest, "(\n")])
		}
		return fmt.Sprintf(`{"title":"The %s community","summary":"A community around %s.","findings":[{"summary":"%s is central","explanation":"It has the highest PageRank."}],"rating":6.5,"rating_explanation":"Central to the corpus."}`, name, name, name)
	case "partial_answer":
		return `{"answer":"The storm, the fishing cooperative and the marine institute recur [1].","score":70}`
	case "query_entities":
		return `{"entities":[]}`
	case "scope":
		return `{"scope":"local"}`
	}
	return "According to the passages, the answer is in the first passage [1]."
}

// TestEndToEndWithLLM runs the whole pipeline and both query modes through an
// OpenAI-compatible endpoint (an in-test fake; the real model server is in the
// integration tests): LLM extraction, LLM reports, LLM answers, LLM embeddings.
func TestEndToEndWithLLM(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	srv := llmtest.NewServer(llmtest.WithChatReply(fakeModel), llmtest.WithDimension(64))
	t.Cleanup(srv.Close)
	p := testPlatform(t, t.TempDir(), "-llm-base-url", srv.URL(), "-llm-chat-model", "fake", "-llm-embed-model", "fake-embed")
	cfg := fastConfig()
	// Detection once per corpus, after its last extraction: a detection run while the
	// documents stream in sees a partial graph that depends on timing, so its
	// communities (and report prompts) would differ between the two indexings below,
	// and the cache check at the end would be about timing, not about the cache.
	cfg.Grapher.Debounce = 3 * time.Second
	st := startStack(t, p, cfg)
	ctx := t.Context()
	if _, err := publishPaths(ctx, p.Bus, "llm", []string{"../../examples/corpus"}, publishOptions{}); err != nil {
		t.Fatal(err)
	}
	status := waitIndexed(t, p, "llm")
	for _, s := range status.Stages {
		if s.DeadLettered != 0 {
			t.Errorf("stage %s dead-lettered %d", s.Stage, s.DeadLettered)
		}
	}
	gs, err := p.Graph.Stats(ctx, "llm")
	if err != nil || gs.Entities < 50 || gs.Communities == 0 {
		t.Fatalf("graph %+v %v", gs, err)
	}
	// Reports were written by the model.
	cs, _ := p.Graph.Communities(ctx, "llm", -1)
	recs, err := p.Vectors.Get(ctx, schema.Collection("llm", schema.Communities), []string{cs[0].ID})
	if err != nil || len(recs) != 1 || recs[0].Attrs[schema.ReportMethod] != "llm/fake" || !strings.HasPrefix(recs[0].Attrs[schema.ReportTitle], "The ") {
		t.Fatalf("report %+v %v", recs, err)
	}
	usage := p.LLM.Usage()
	if usage.Calls == 0 || usage.PromptTokens == 0 {
		t.Fatalf("usage %+v", usage)
	}

	local, err := st.Asker.Query(ctx, ask.Request{Corpus: "llm", Query: "Who chaired the Storm Hester inquiry?", Mode: ask.ModeLocal}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(local.Answer, "[1]") || len(local.Citations) != 1 || local.Citations[0].ChunkID != local.Context.Chunks[0].ID {
		t.Fatalf("local answer %q citations %+v", local.Answer, local.Citations)
	}
	// The generation prompt carried the community context (defect 6 of seeds/002).
	if len(local.Context.Communities) == 0 || !strings.Contains(local.Prompt, local.Context.Communities[0].Title) {
		t.Fatalf("community context missing from the prompt")
	}
	var streamed strings.Builder
	global, err := st.Asker.Query(ctx, ask.Request{Corpus: "llm", Query: "What are the main themes across the corpus?"},
		func(d string) error { streamed.WriteString(d); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if global.Mode != ask.ModeGlobal || len(global.Partials) == 0 || streamed.String() != global.Answer {
		t.Fatalf("global: mode %s, %d partials, streamed %q vs %q", global.Mode, len(global.Partials), streamed.String(), global.Answer)
	}
	for _, phase := range []string{"select", "map", "reduce"} {
		if _, ok := global.Timings[phase]; !ok {
			t.Errorf("no %s timing: %v", phase, global.Timings)
		}
	}

	// Re-indexing unchanged chunks makes zero LLM calls: every response is in the
	// JetStream KV cache the replicas share. Republish under a new corpus name.
	before := p.LLM.Usage()
	if _, err := publishPaths(ctx, p.Bus, "llm_again", []string{"../../examples/corpus"}, publishOptions{}); err != nil {
		t.Fatal(err)
	}
	waitIndexed(t, p, "llm_again")
	after := p.LLM.Usage()
	// Extraction and embeddings of identical chunks hit the cache; reports of identical
	// communities too. (Query-time calls above are not repeated here.)
	if after.Calls != before.Calls {
		t.Errorf("re-indexing identical content made %d model calls (cache hits %d)", after.Calls-before.Calls, after.CacheHits-before.CacheHits)
	}
}

// TestEndToEndWithEmbeddingModelOnly: an embedding endpoint without a chat model gives
// semantic vectors to every stage while extraction, reports and answers stay offline
// (the cheap configuration: embedding models cost little next to chat models).
func TestEndToEndWithEmbeddingModelOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	srv := llmtest.NewServer(llmtest.WithDimension(48))
	t.Cleanup(srv.Close)
	p := testPlatform(t, t.TempDir(), "-llm-embed-base-url", srv.URL(), "-llm-embed-model", "fake-embed")
	if p.LLM != nil || p.Embeddings == nil || p.OfflineEmbedder {
		t.Fatalf("platform: LLM %v, embeddings %v, offline embedder %v; want no chat client, an embedding client",
			p.LLM != nil, p.Embeddings != nil, p.OfflineEmbedder)
	}
	st := startStack(t, p, fastConfig())
	ctx := t.Context()
	if _, err := publishPaths(ctx, p.Bus, "emb", []string{"../../examples/corpus"}, publishOptions{}); err != nil {
		t.Fatal(err)
	}
	waitIndexed(t, p, "emb")
	if srv.ChatCalls() != 0 || srv.EmbedCalls() == 0 {
		t.Fatalf("endpoint calls: chat %d, embeddings %d; want embeddings only", srv.ChatCalls(), srv.EmbedCalls())
	}
	// Indexing the same documents again (under another corpus name, so that every stage
	// runs) sends the endpoint nothing: chunks and entities are answered by the shared
	// cache, and no report is embedded by the model.
	embedCalls := srv.EmbedCalls()
	if _, err := publishPaths(ctx, p.Bus, "emb_again", []string{"../../examples/corpus"}, publishOptions{}); err != nil {
		t.Fatal(err)
	}
	waitIndexed(t, p, "emb_again")
	if n := srv.EmbedCalls() - embedCalls; n != 0 || srv.ChatCalls() != 0 {
		t.Errorf("indexing the same documents again: %d embedding and %d chat calls, want none", n, srv.ChatCalls())
	}
	recs, err := p.Vectors.Get(ctx, schema.Collection("emb", schema.Entities), []string{"ada quillane"})
	if err != nil || len(recs) != 1 || len(recs[0].Vector) != 48 {
		t.Fatalf("entity vector from the model: %+v %v", recs, err)
	}
	cs, _ := p.Graph.Communities(ctx, "emb", -1)
	reps, err := p.Vectors.Get(ctx, schema.Collection("emb", schema.Communities), []string{cs[0].ID})
	if err != nil || len(reps) != 1 || !strings.HasPrefix(reps[0].Attrs[schema.ReportMethod], "extractive") {
		t.Fatalf("report %+v %v, want an extractive report", reps, err)
	}
	// The query engine takes the semantic defaults (the dense list on).
	if w := st.Engine.Config().Weights.Dense; w != 1 {
		t.Errorf("dense weight %v with an embedding model, want 1", w)
	}
	resp, err := st.Asker.Query(ctx, ask.Request{Corpus: "emb", Query: "Who chaired the Storm Hester inquiry?", Mode: ask.ModeLocal}, nil)
	if err != nil || len(resp.Context.Chunks) == 0 || resp.Answer == "" {
		t.Fatalf("local answer %q, %d chunks, %v", resp.Answer, len(resp.Context.Chunks), err)
	}
}
