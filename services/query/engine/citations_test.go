package engine

import (
	"slices"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

func TestRenumber(t *testing.T) {
	for _, tc := range []struct {
		in, want  string
		sources   int
		wantOrder []int
	}{
		{"A [3]. B [1][3]. C [2].", "A [1]. B [2][1]. C [3].", 3, []int{3, 1, 2}},
		{"gap [2] then [5]", "gap [1] then [2]", 5, []int{2, 5}},
		{"invented [9] and [0] dropped, [1] kept", "invented  and  dropped, [1] kept", 3, []int{1}},
		{"not markers: [a] [] [12x] a[1", "not markers: [a] [] [12x] a[1", 20, nil},
		{"nested [[2]] and [2020]", "nested [[1]] and ", 3, []int{2}},
		{"", "", 3, nil},
	} {
		got, order := renumber(tc.in, tc.sources)
		if got != tc.want || !slices.Equal(order, tc.wantOrder) {
			t.Errorf("renumber(%q) = %q %v, want %q %v", tc.in, got, order, tc.want, tc.wantOrder)
		}
		// Streamed in pieces of any size, the same text comes out.
		for size := 1; size <= 4; size++ {
			r := newRenumberer(tc.sources)
			var b strings.Builder
			for i := 0; i < len(tc.in); i += size {
				b.WriteString(r.write(tc.in[i:min(i+size, len(tc.in))]))
			}
			b.WriteString(r.flush())
			if b.String() != tc.want {
				t.Errorf("renumber(%q) in pieces of %d = %q, want %q", tc.in, size, b.String(), tc.want)
			}
		}
	}
}

// citedEngine answers with a model that cites passages out of order and with a gap.
func citedEngine(t *testing.T, reply func(openai.ChatCompletionRequest) string) *Engine {
	t.Helper()
	srv := llmtest.NewServer(llmtest.WithChatReply(reply))
	t.Cleanup(srv.Close)
	client, err := llm.New(llm.Config{BaseURL: srv.URL(), ChatModel: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	st := querytest.DemoWithReports(t)
	e, err := New(Config{}, Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, LLM: client, Logger: querytest.Logger()})
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

// checkMarkers: the markers of the answer, in order of first appearance, are 1, 2, 3, …,
// one citation each.
func checkMarkers(t *testing.T, resp *Response) {
	t.Helper()
	var seen []string
	r := newRenumberer(1 << 20)
	r.write(resp.Answer)
	for _, n := range r.order {
		seen = append(seen, string(rune('0'+n)))
	}
	for i, m := range seen {
		if m != string(rune('1'+i)) {
			t.Errorf("answer %q: markers in order of first use %v, want 1, 2, …", resp.Answer, seen)
			break
		}
	}
	if len(resp.Citations) != len(seen) {
		t.Errorf("answer %q: %d markers, %d citations", resp.Answer, len(seen), len(resp.Citations))
	}
}
