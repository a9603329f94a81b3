package engine

import (
	"fmt"
	"slices"
	"testing"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// bridgeChunk is a passage of the bridge fixture with the entities its extraction names.
type bridgeChunk struct {
	id, title, text string
	entities        []string
}

// bridgeFixture is a two-hop question in miniature: the question's words point at the
// Leland passage and at distractors; the answer is in the passage about the film the
// Leland passage mentions, which shares almost no words with the question.
var bridgeFixture = []bridgeChunk{
	{"leland", "Leland, North Carolina", "Leland is a town in Brunswick County, North Carolina. The 1986 film Maximum Overdrive was shot in and around Leland.",
		[]string{"Leland, North Carolina", "Brunswick County", "Maximum Overdrive"}},
	{"overdrive", "Maximum Overdrive (film)", "Maximum Overdrive is a horror picture that Stephen King wrote and made, starring Emilio Estevez.",
		[]string{"Maximum Overdrive", "Stephen King", "Emilio Estevez"}},
	// Mentions the film but is about something else: not a passage about the film.
	{"review", "Drive-in reviews", "Critics panned Maximum Overdrive and several other drive-in features of the decade.",
		[]string{"Maximum Overdrive", "Drive-in"}},
}

// newBridgeEngine builds an engine with the offline defaults (pool 5) over stores
// holding the bridge fixture and its distractors, and returns the stores too.
func newBridgeEngine(t *testing.T) (*Engine, querytest.Stores) {
	t.Helper()
	s := querytest.Open(t)
	chunks := slices.Clone(bridgeFixture)
	// Distractors that share the question's words (film, shot, North Carolina, 1986).
	for i := range 8 {
		chunks = append(chunks, bridgeChunk{fmt.Sprintf("noise%d", i), fmt.Sprintf("North Carolina film list %d", i),
			fmt.Sprintf("A film shot in North Carolina in 1986, number %d of the state's film productions.", i),
			[]string{"North Carolina"}})
	}
	cfg := DefaultConfig()
	cfg.Pool = 5
	return newChunkEngine(t, s, chunks, cfg), s
}

// newChunkEngine writes chunks and their extractions to s's demo corpus and returns an
// engine over s with cfg.
func newChunkEngine(t testing.TB, s querytest.Stores, chunks []bridgeChunk, cfg Config) *Engine {
	t.Helper()
	var passages []querytest.Passage
	var exts []graphstore.ChunkExtraction
	for _, c := range chunks {
		passages = append(passages, querytest.Passage{ID: c.id, Doc: c.id, Title: c.title, Text: c.text})
		x := graphstore.ChunkExtraction{ChunkID: c.id, DocumentID: c.id}
		for _, name := range c.entities {
			x.Entities = append(x.Entities, querytest.Mention(name, "OTHER", name))
		}
		exts = append(exts, x)
	}
	s.WriteChunks(t, "demo", passages)
	if err := s.Graph.Merge(t.Context(), "demo", exts); err != nil {
		t.Fatal(err)
	}
	e, err := New(cfg, Deps{Graph: s.Graph, Vectors: s.Vectors, Embedder: s.Embedder, OfflineEmbedder: true, Logger: querytest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func rankOf(c Retrieved, id string) int {
	return slices.IndexFunc(c.Chunks, func(ch Chunk) bool { return ch.ID == id }) + 1
}

// The passage about the entity the best passage mentions reaches the top 5, which the
// lexical list alone does not give it; the passage that merely mentions the film does not
// come in through the subject list.
func TestSubjectListFindsTheSecondHop(t *testing.T) {
	e, _ := newBridgeEngine(t)
	q := "Who directed the film that was shot in or around Leland, North Carolina in 1986?"
	bm25, _, err := contextOf(e.Retrieve(t.Context(), Request{Corpus: "demo", Query: q, TopK: 10, Weights: &Weights{Lexical: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	if r := rankOf(bm25, "overdrive"); r >= 1 && r <= 5 {
		t.Fatalf("the lexical list alone ranks the second hop %d: the fixture does not need the hop", r)
	}
	got, _, err := contextOf(e.Retrieve(t.Context(), Request{Corpus: "demo", Query: q, TopK: 10}))
	if err != nil {
		t.Fatal(err)
	}
	r := rankOf(got, "overdrive")
	if r < 1 || r > 5 {
		t.Fatalf("second hop ranked %d, want 1..5; ranking %v", r, chunkIDs(got))
	}
	ch := got.Chunks[r-1]
	if !slices.ContainsFunc(ch.Lists, func(h ListHit) bool { return h.List == "subject" && h.Rank == 2 }) {
		t.Errorf("second hop lists %+v, want subject rank 2 (after Leland, which the question names)", ch.Lists)
	}
	if want := []string{"leland north carolina", "maximum overdrive"}; !slices.Equal(ch.GraphPath, want) {
		t.Errorf("second hop path %v, want %v (the first hop's subject, the bridge)", ch.GraphPath, want)
	}
	for _, c := range got.Chunks {
		if c.ID == "review" && slices.ContainsFunc(c.Lists, func(h ListHit) bool { return h.List == "subject" }) {
			t.Errorf("a passage that only mentions the film is in the subject list: %+v", c.Lists)
		}
	}
}

// Entities the question names come first, then those of the best passages in rank
// order; a seed passage is not its own second hop.
func TestSubjectListOrder(t *testing.T) {
	e, _ := newBridgeEngine(t)
	ctx := t.Context()
	linked := []linkedEntity{{key: "stephen king", score: 1}, {key: "maximum overdrive", score: 1}}
	res, err := e.subjectList(ctx, "demo", "", linked, []passageSeed{{id: "leland"}, {id: "overdrive"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// "stephen king" has no passage about it; "maximum overdrive" does; the Leland
	// passage's own subject is Leland (itself), the overdrive seed mentions nothing new.
	if want := []string{"overdrive"}; !slices.Equal(res.ids, want) {
		t.Fatalf("subject list %v, want %v", res.ids, want)
	}
	res, err = e.subjectList(ctx, "demo", "", nil, []passageSeed{{id: "overdrive"}, {id: "leland"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// From the Leland passage: the film's passage; the Leland passage itself is excluded
	// as the source; nothing is about Brunswick County.
	if want := []string{"overdrive"}; !slices.Equal(res.ids, want) {
		t.Fatalf("subject list %v, want %v", res.ids, want)
	}
	res, err = e.subjectList(ctx, "demo", "", []linkedEntity{{key: "leland north carolina", score: 1}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A named entity's own passage, then the second hop from it.
	if want := []string{"leland", "overdrive"}; !slices.Equal(res.ids, want) {
		t.Fatalf("subject list %v, want %v (a named entity's own passage, then its hop)", res.ids, want)
	}
}

func chunkIDs(c Retrieved) []string {
	out := make([]string, len(c.Chunks))
	for i, ch := range c.Chunks {
		out[i] = ch.ID
	}
	return out
}

// A document of several chunks shares its subject among them: the list gives the best
// chunk about each linked entity, then the second hops (the best chunk about a hop's
// entity counting most), and only then the linked entities' other chunks. Before, a long
// document about the question's entity filled the list ahead of every second hop.
func TestSubjectListLongDocuments(t *testing.T) {
	leland, film, port := "Leland, North Carolina", "Maximum Overdrive (film)", "Wilmington"
	chunks := []bridgeChunk{
		{"leland", leland, "Leland is a town. The 1986 film Maximum Overdrive was shot there, near Wilmington.", []string{leland, "Maximum Overdrive", port}},
		{"leland2", leland, "Leland grew in the twentieth century along the river.", []string{leland}},
		{"leland3", leland, "Leland has a town council of five members.", []string{leland}},
		{"overdrive", film, "Maximum Overdrive is a horror picture that Stephen King made.", []string{"Maximum Overdrive"}},
		{"overdrive2", film, "Maximum Overdrive was released in July 1986.", []string{"Maximum Overdrive"}},
		{"overdrive3", film, "Maximum Overdrive was later remade for television.", []string{"Maximum Overdrive"}},
		{"wilmington", port, "Wilmington is a port city on the Cape Fear River.", []string{port}},
	}
	e := newChunkEngine(t, querytest.Open(t), chunks, DefaultConfig())
	res, err := e.subjectList(t.Context(), "demo", "", []linkedEntity{{key: "leland north carolina", score: 1}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"leland", "overdrive", "wilmington", "overdrive2", "overdrive3", "leland2", "leland3"}
	if !slices.Equal(res.ids, want) {
		t.Fatalf("subject list %v, want %v", res.ids, want)
	}
}
