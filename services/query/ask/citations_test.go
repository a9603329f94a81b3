package ask

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// citedEngine answers with a model that cites passages out of order and with a gap.
func citedEngine(t *testing.T, reply func(openai.ChatCompletionRequest) string) *Asker {
	t.Helper()
	srv := llmtest.NewServer(llmtest.WithChatReply(reply))
	t.Cleanup(srv.Close)
	client, err := llm.New(llm.Config{BaseURL: srv.URL(), ChatModel: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	st := querytest.DemoWithReports(t)
	e, err := New(engine.Config{}, Config{}, engine.Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, Logger: querytest.Logger()}, client)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Markers in an answer count up in order of first use, in model answers (streamed or
// not) and extractive ones alike, and each names the source it cites (issue 12, item 8).
func TestCitationsInOrderOfFirstUse(t *testing.T) {
	e := citedEngine(t, func(openai.ChatCompletionRequest) string {
		return "Babbage designed it [3]. Lovelace wrote for it [1][3]. Invented [7]."
	})
	for _, stream := range []bool{false, true} {
		var streamed strings.Builder
		var onDelta func(string) error
		if stream {
			onDelta = func(d string) error { streamed.WriteString(d); return nil }
		}
		resp, err := e.Query(t.Context(), Request{Corpus: "demo", Query: "Who designed the Analytical Engine?", Mode: ModeLocal, TopK: 3}, onDelta)
		if err != nil {
			t.Fatal(err)
		}
		if want := "Babbage designed it [1]. Lovelace wrote for it [2][1]. Invented ."; resp.Answer != want {
			t.Errorf("stream %v: answer %q, want %q", stream, resp.Answer, want)
		}
		if stream && streamed.String() != resp.Answer {
			t.Errorf("streamed %q, final answer %q", streamed.String(), resp.Answer)
		}
		chunks := resp.Context.Chunks
		if len(chunks) != 3 || len(resp.Citations) != 2 {
			t.Fatalf("%d chunks, citations %+v: want 3 chunks, 2 citations", len(chunks), resp.Citations)
		}
		for i, want := range []string{chunks[2].ID, chunks[0].ID} {
			if c := resp.Citations[i]; c.Marker != string(rune('1'+i)) || c.ChunkID != want {
				t.Errorf("citation %d = %+v, want marker %d for chunk %s", i, c, i+1, want)
			}
		}
	}
}

func TestGlobalCitationsInOrderOfFirstUse(t *testing.T) {
	// The map phase rates both reports; the reduce cites the second partial answer first.
	e := citedEngine(t, func(r openai.ChatCompletionRequest) string {
		if r.ResponseFormat != nil {
			return `{"answer":"a point","score":50}`
		}
		return "Engines [2]. Algorithms [1]."
	})
	resp, err := e.Query(t.Context(), Request{Corpus: "demo", Query: "What are the main themes across the corpus?", Mode: ModeGlobal}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Partials) != 2 || resp.Answer != "Engines [1]. Algorithms [2]." {
		t.Fatalf("%d partials, answer %q: want 2 partials and the markers renumbered", len(resp.Partials), resp.Answer)
	}
	want := []Citation{{Marker: "1", Community: resp.Partials[1].CommunityID}, {Marker: "2", Community: resp.Partials[0].CommunityID}}
	if !slices.Equal(resp.Citations, want) {
		t.Errorf("citations %+v, want %+v", resp.Citations, want)
	}
}

func TestExtractiveCitationsInOrder(t *testing.T) {
	e := newDemoEngine(t)
	for _, q := range []string{"Who designed the Analytical Engine?", "What did Ada Lovelace write, and with whom did she work?"} {
		resp, err := e.Query(t.Context(), Request{Corpus: "demo", Query: q, Mode: ModeLocal}, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkMarkers(t, resp)
	}
}

// newDemoEngine answers offline with the default configuration over querytest.Demo.
func newDemoEngine(t *testing.T) *Asker {
	t.Helper()
	st := querytest.Demo(t)
	e, err := New(engine.Config{}, Config{}, engine.Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, Logger: querytest.Logger()}, nil)
	if err != nil {
		t.Fatalf("building engine: %v", err)
	}
	return e
}

// checkMarkers: the markers of the answer, in order of first appearance, are 1, 2, 3, …,
// one citation each.
func checkMarkers(t *testing.T, resp *Response) {
	t.Helper()
	var seen []string
	for _, m := range marker.FindAllStringSubmatch(resp.Answer, -1) {
		if !slices.Contains(seen, m[1]) {
			seen = append(seen, m[1])
		}
	}
	for i, m := range seen {
		if m != strconv.Itoa(i+1) {
			t.Errorf("answer %q: markers in order of first use %v, want 1, 2, …", resp.Answer, seen)
			break
		}
	}
	if len(resp.Citations) != len(seen) {
		t.Errorf("answer %q: %d markers, %d citations", resp.Answer, len(seen), len(resp.Citations))
	}
}

// marker matches a citation marker and its number.
var marker = regexp.MustCompile(`\[(\d+)\]`)
