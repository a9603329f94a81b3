package answer_test

import (
	"slices"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
	"github.com/graphrag/graphrag/services/query/ask"
	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// modelFixture is an engine over the demo corpus with its reports and a fake model that
// records every chat call (system prompt, last user message) and answers each kind.
type modelFixture struct {
	e   *ask.Asker
	srv *llmtest.Server
	mu  sync.Mutex
	// calls are the chat calls: system prompt, then user message.
	calls [][2]string
	// followUps is the reply to a follow-up call.
	followUps string
}

func newModelFixture(t *testing.T, cfg engine.Config) *modelFixture {
	t.Helper()
	st := querytest.DemoWithReports(t)
	f := &modelFixture{followUps: `{"questions": ["Who translated the memoir by Luigi Menabrea?", "Who designed the Analytical Engine?"]}`}
	f.srv = llmtest.NewServer(llmtest.WithChatReply(func(r openai.ChatCompletionRequest) string {
		system, user := r.Messages[0].Content, r.Messages[len(r.Messages)-1].Content
		f.mu.Lock()
		f.calls = append(f.calls, [2]string{system, user})
		reply := f.followUps
		f.mu.Unlock()
		switch {
		case strings.Contains(system, "one community report"):
			return `{"answer": "Lovelace wrote the first algorithm.", "score": 70}`
		case strings.Contains(system, "follow-up questions"):
			return reply
		case strings.Contains(system, "Classify the question"):
			return `{"scope": "local"}`
		}
		return "Lovelace wrote the first published algorithm [1]."
	}))
	t.Cleanup(f.srv.Close)
	client, err := llm.New(llm.Config{BaseURL: f.srv.URL(), ChatModel: "m", MaxConcurrency: 4}, llm.WithLogger(querytest.Logger()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	if f.e, err = ask.New(cfg, ask.Config{}, engine.Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, Logger: querytest.Logger()}, client); err != nil {
		t.Fatal(err)
	}
	return f
}

// users returns the user messages of the calls whose system prompt holds system.
func (f *modelFixture) users(system string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if strings.Contains(c[0], system) {
			out = append(out, c[1])
		}
	}
	return out
}

const (
	localSystem  = "You answer questions using only the context provided"
	reduceSystem = "You synthesize partial answers"
)

// The response type and the user's instructions reach the prompt that writes the answer,
// local or global, after the question; without them the prompt has neither section.
func TestStyleReachesTheAnswerPrompt(t *testing.T) {
	f := newModelFixture(t, engine.Config{})
	const rt, up = "Bullet Points", "Answer in French and name the year."
	q := "What did Ada Lovelace write for the Analytical Engine?"
	for _, tc := range []struct{ mode, system string }{
		{ask.ModeLocal, localSystem}, {ask.ModeNaive, localSystem}, {ask.ModeHybrid, localSystem},
		{ask.ModeMix, localSystem}, {ask.ModeDrift, localSystem}, {ask.ModeGlobal, reduceSystem},
	} {
		before := len(f.users(tc.system))
		if _, err := f.e.Query(t.Context(), ask.Request{Corpus: "demo", Query: q, Mode: tc.mode, ResponseType: rt, UserPrompt: up}, nil); err != nil {
			t.Fatalf("%s: %v", tc.mode, err)
		}
		prompts := f.users(tc.system)
		if len(prompts) != before+1 {
			t.Fatalf("%s: %d answer calls, want 1", tc.mode, len(prompts)-before)
		}
		p := prompts[len(prompts)-1]
		qi, ri, ui := strings.Index(p, q), strings.Index(p, "## Response type\n"+rt), strings.Index(p, "## Additional instructions\n"+up)
		if qi < 0 || ri < qi || ui < ri {
			t.Errorf("%s: the prompt does not hold the question, then the response type, then the instructions:\n%s", tc.mode, p)
		}
	}
	if _, err := f.e.Query(t.Context(), ask.Request{Corpus: "demo", Query: q, Mode: ask.ModeLocal}, nil); err != nil {
		t.Fatal(err)
	}
	prompts := f.users(localSystem)
	if p := prompts[len(prompts)-1]; strings.Contains(p, "## Response type") || strings.Contains(p, "## Additional instructions") {
		t.Errorf("a request without style has style sections:\n%s", p)
	}
}

// With only_context no mode calls the model: no classification, map, follow-up or
// answer call (the question links entities by name, so retrieval needs none either).
func TestOnlyContextCallsNoModel(t *testing.T) {
	f := newModelFixture(t, engine.Config{})
	for _, mode := range ask.Modes {
		resp, err := f.e.Query(t.Context(), ask.Request{Corpus: "demo", Query: "What did Ada Lovelace write for the Analytical Engine?", Mode: mode, OnlyContext: true}, nil)
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if resp.Answer != "" {
			t.Errorf("%s: answer %q with only_context", mode, resp.Answer)
		}
		if len(resp.Context.Chunks)+len(resp.Context.Communities) == 0 {
			t.Errorf("%s: empty context", mode)
		}
	}
	if n := f.srv.ChatCalls(); n != 0 {
		t.Errorf("%d chat calls with only_context, want 0", n)
	}
	// The same questions answered call the model.
	if _, err := f.e.Query(t.Context(), ask.Request{Corpus: "demo", Query: "What did Ada Lovelace write for the Analytical Engine?", Mode: ask.ModeLocal}, nil); err != nil {
		t.Fatal(err)
	}
	if f.srv.ChatCalls() == 0 {
		t.Error("no chat call for an answer: the fixture does not count")
	}
}

// Drift with a model asks it for follow-up questions from the primer reports, searches
// each, and answers from the union; a reply without follow-ups falls back to the top
// report's key entities.
func TestDriftAsksTheModelForFollowUps(t *testing.T) {
	f := newModelFixture(t, engine.Config{DriftFollowUps: 2})
	resp, err := f.e.Query(t.Context(), ask.Request{Corpus: "demo", Query: "What did Ada Lovelace write?", Mode: ask.ModeDrift}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Who translated the memoir by Luigi Menabrea?", "Who designed the Analytical Engine?"}
	if !slices.Equal(resp.FollowUps, want) {
		t.Fatalf("follow-ups %q, want the model's %q", resp.FollowUps, want)
	}
	asks := f.users("follow-up questions")
	if len(asks) != 1 || !strings.Contains(asks[0], "## Community reports") || !strings.Contains(asks[0], "What did Ada Lovelace write?") {
		t.Fatalf("follow-up calls %q: want one, with the primer reports and the question", asks)
	}
	// c2 (the Menabrea translation) and c3 (Babbage designed the engine) answer the
	// follow-ups; they reach the context and the answer prompt.
	answers := f.users(localSystem)
	for _, id := range []string{"c2", "c3"} {
		if !slices.ContainsFunc(resp.Context.Chunks, func(c engine.Chunk) bool { return c.ID == id }) {
			t.Errorf("context lacks %s, which answers a follow-up", id)
		}
		if !strings.Contains(answers[len(answers)-1], "("+id+")") {
			t.Errorf("answer prompt lacks passage %s", id)
		}
	}

	f.mu.Lock()
	f.followUps = `{"questions": []}`
	f.mu.Unlock()
	resp, err = f.e.Query(t.Context(), ask.Request{Corpus: "demo", Query: "What did Ada Lovelace write?", Mode: ask.ModeDrift}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.FollowUps) == 0 {
		t.Fatal("no follow-ups when the model gave none: want the key entities")
	}
	for _, fu := range resp.FollowUps {
		if !slices.ContainsFunc(querytest.DemoReports, func(r querytest.Report) bool { return slices.Contains(r.Members, fu) }) {
			t.Errorf("fallback follow-up %q is not a report member", fu)
		}
	}
}
