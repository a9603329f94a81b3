package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/graphrag/graphrag/pkg/costestimate"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
	"github.com/graphrag/graphrag/pkg/offlinextract"
	"github.com/graphrag/graphrag/pkg/prompts"
)

// workCounter is a fake model that answers the indexing prompts as the counting endpoint
// of pkg/llm/llmtest (chatcount) does, from the prompt alone, and counts the calls and
// tokens of each kind at one token per 4 bytes.
type workCounter struct {
	mu    sync.Mutex
	chat  map[string]*costestimate.ChatLine
	embed map[string]*costestimate.EmbedLine
}

func newWorkCounter() *workCounter {
	return &workCounter{chat: map[string]*costestimate.ChatLine{}, embed: map[string]*costestimate.EmbedLine{}}
}

func countTokens(s string) int64 { return int64(len(s)/4 + 1) }

func (c *workCounter) reply(req openai.ChatCompletionRequest) string {
	kind, schema := "query", ""
	if rf := req.ResponseFormat; rf != nil && rf.JSONSchema != nil {
		schema = rf.JSONSchema.Name
	}
	last := req.Messages[len(req.Messages)-1].Content
	var answer string
	switch {
	case schema == prompts.ExtractionSchemaName && len(req.Messages) > 2:
		kind, answer = costestimate.KindGleaning, `{"entities":[],"relationships":[]}`
	case schema == prompts.ExtractionSchemaName:
		kind, answer = costestimate.KindExtraction, fakeExtraction(last)
	case schema == prompts.ReportSchemaName:
		kind = costestimate.KindReport
		name := "Community"
		if _, rest, ok := strings.Cut(last, "## Entities\n- "); ok {
			name, _, _ = strings.Cut(rest, " (")
		}
		b, _ := json.Marshal(map[string]any{"title": "The " + name + " community", "summary": fmt.Sprintf("A community around %s (context %x).", name, sha256.Sum256([]byte(last))),
			"findings": []any{}, "rating": 5, "rating_explanation": "Central."})
		answer = string(b)
	case strings.HasPrefix(last, "Entity: "):
		// The first sentences of the first three descriptions, as chatcount answers.
		_, list, _ := strings.Cut(last, "\nDescriptions:\n- ")
		ds := strings.Split(list, "\n- ")
		kind, answer = costestimate.KindDescription, strings.Join(ds[:min(3, len(ds))], " ")
	default:
		answer = "{}"
	}
	prompt := int64(0)
	for _, m := range req.Messages {
		prompt += countTokens(m.Content)
	}
	if rf := req.ResponseFormat; rf != nil && rf.JSONSchema != nil {
		b, _ := json.Marshal(rf.JSONSchema.Schema)
		prompt += countTokens(string(b))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.chat[kind]
	if l == nil {
		l = &costestimate.ChatLine{Kind: kind}
		c.chat[kind] = l
	}
	l.Calls++
	l.PromptTokens += prompt
	l.CompletionTokens += countTokens(answer)
	return answer
}

// fakeExtraction answers an extraction prompt with what the offline extractor finds in
// its text, within the prompt's caps, descriptions cut to their first sentence.
func fakeExtraction(prompt string) string {
	head, text, _ := strings.Cut(prompt, "\nText:\n")
	maxEnt, maxRel, title := 25, 40, ""
	for line := range strings.SplitSeq(head, "\n") {
		if _, err := fmt.Sscanf(line, "Extract at most %d entities and %d relationships.", &maxEnt, &maxRel); err == nil {
			continue
		}
		if q, ok := strings.CutPrefix(line, "The text comes from the document titled "); ok {
			title, _ = strconv.Unquote(strings.TrimSuffix(q, "."))
		}
	}
	ents, rels := offlinextract.Extract(title, text, offlinextract.WithMaxEntities(maxEnt), offlinextract.WithMaxRelationships(maxRel))
	return costestimate.ExtractionAnswer(ents, rels)
}

// embedded counts one embedded text: a chunk's text opens with its document's title
// and a blank line, a report's holds a blank line otherwise, an entity's none.
func (c *workCounter) embedded(titles map[string]bool) func(string) []float32 {
	return func(t string) []float32 {
		kind := costestimate.KindEntity
		if head, _, ok := strings.Cut(t, "\n\n"); ok {
			kind = costestimate.KindReport
			if title, _, _ := strings.Cut(head, " › "); titles[title] {
				kind = costestimate.KindChunk
			}
		}
		c.mu.Lock()
		l := c.embed[kind]
		if l == nil {
			l = &costestimate.EmbedLine{Kind: kind}
			c.embed[kind] = l
		}
		l.Texts++
		l.Tokens += countTokens(t)
		c.mu.Unlock()
		v := make([]float32, 32)
		for i := range len(t) {
			v[int(t[i])%32]++
		}
		return v
	}
}

// TestEstimateWithinFifteenPercentOfIndexing estimates the sample corpus, indexes it
// through the whole pipeline against a counting fake model, and holds every kind of
// work the estimate names to within ±15 % of what the model was asked (calls, texts and
// tokens), with one gleaning pass and 200-token chunks so that each setting is the one
// the pipeline ran with.
func TestEstimateWithinFifteenPercentOfIndexing(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	cfg := fastConfig()
	cfg.Extractor.ChunkTokens, cfg.Extractor.ChunkOverlap, cfg.Extractor.Gleanings = 200, 20, 1
	// Detection once, after the last extraction, as on a corpus published at once.
	cfg.Grapher.Debounce = 3 * time.Second

	var out bytes.Buffer
	if err := runEstimate(t.Context(), []string{"-json", "-chunk-tokens", "200", "-chunk-overlap", "20", "-gleanings", "1",
		"../../examples/corpus"}, &out, &out); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	var est costestimate.Estimate
	if err := json.Unmarshal(out.Bytes(), &est); err != nil {
		t.Fatal(err)
	}

	titles := map[string]bool{}
	files, _ := collect([]string{"../../examples/corpus"})
	if err := readDocuments(t.Context(), files, "", func(f documentFile) error {
		titles[f.doc.Title] = true
		return f.err
	}); err != nil {
		t.Fatal(err)
	}
	counter := newWorkCounter()
	srv := llmtest.NewServer(llmtest.WithChatReply(counter.reply), llmtest.WithEmbedder(counter.embedded(titles)))
	t.Cleanup(srv.Close)
	p := testPlatform(t, t.TempDir(), "-llm-base-url", srv.URL(), "-llm-chat-model", "fake", "-llm-embed-model", "fake-embed")
	startStack(t, p, cfg)
	if _, err := publishPaths(t.Context(), p.Bus, "cost", []string{"../../examples/corpus"}, publishOptions{}); err != nil {
		t.Fatal(err)
	}
	waitIndexed(t, p, "cost") // every stage, reports included

	within := func(what string, got, want int64) {
		t.Helper()
		if want == 0 && got == 0 {
			return
		}
		if d := math.Abs(float64(got-want)) / float64(max(want, 1)); d > 0.15 {
			t.Errorf("%s: estimated %d, measured %d (%+.0f %%)", what, got, want, 100*float64(got-want)/float64(max(want, 1)))
		} else {
			t.Logf("%s: estimated %d, measured %d (%+.1f %%)", what, got, want, 100*float64(got-want)/float64(max(want, 1)))
		}
	}
	counter.mu.Lock()
	defer counter.mu.Unlock()
	for _, l := range est.Chat {
		m := counter.chat[l.Kind]
		if m == nil {
			m = &costestimate.ChatLine{}
		}
		within(l.Kind+" calls", l.Calls, m.Calls)
		within(l.Kind+" prompt tokens", l.PromptTokens, m.PromptTokens)
		if l.Kind == costestimate.KindExtraction || l.Kind == costestimate.KindGleaning {
			// The fake's report and description answers are not a model's (nor the
			// estimate's); its extraction answers are.
			within(l.Kind+" completion tokens", l.CompletionTokens, m.CompletionTokens)
		}
	}
	for _, l := range est.Embeddings {
		m := counter.embed[l.Kind]
		if m == nil {
			m = &costestimate.EmbedLine{}
		}
		within(l.Kind+" texts", l.Texts, m.Texts)
		if l.Kind != costestimate.KindReport {
			within(l.Kind+" tokens", l.Tokens, m.Tokens)
		}
	}
	if est.Chat[0].Calls == 0 || len(est.Chat) != 4 || len(est.Embeddings) != 3 {
		t.Errorf("estimate %+v", est)
	}
}
