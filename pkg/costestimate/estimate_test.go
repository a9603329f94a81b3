package costestimate

import (
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/prompts"
)

const passage = "Ada Quillane studied the algae bloom of Marrow Bay with the Marine Institute in 2019. " +
	"The Marine Institute hired Tomas Reyburn after the bloom. Tomas Reyburn and Ada Quillane wrote the Storm Hester report."

func estimate(t *testing.T, o Options, docs ...Document) Estimate {
	t.Helper()
	e, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if err := e.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	est, err := e.Estimate(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return est
}

func line(est Estimate, kind string) ChatLine {
	for _, l := range est.Chat {
		if l.Kind == kind {
			return l
		}
	}
	return ChatLine{}
}

func TestExtractionPromptIsTheRenderedTemplate(t *testing.T) {
	o := DefaultOptions()
	est := estimate(t, o, Document{ID: "a.md", Title: "Bloom", Text: passage})
	ext := line(est, KindExtraction)
	want := tokens(prompts.ExtractionSystem) + schemaTokens(prompts.ExtractionSchema(25, 40)) +
		tokens(prompts.Extraction("Bloom", passage, nil, 25, 40))
	if est.Chunks != 1 || ext.Calls != 1 || ext.PromptTokens != want || ext.CompletionTokens <= 0 {
		t.Fatalf("extraction %+v, %d chunks; want 1 call of %d prompt tokens", ext, est.Chunks, want)
	}
	if est.Entities < 4 || est.Relationships < 2 {
		t.Errorf("offline graph: %d entities, %d relationships", est.Entities, est.Relationships)
	}
}

func TestOptionsChangeTheWork(t *testing.T) {
	doc := Document{ID: "a.md", Title: "Bloom", Text: strings.Repeat(passage+" ", 30)}
	base := estimate(t, DefaultOptions(), doc)

	small := DefaultOptions()
	small.ChunkTokens, small.ChunkOverlap = 100, 10
	if got := estimate(t, small, doc); got.Chunks <= base.Chunks || line(got, KindExtraction).Calls != int64(got.ExtractedChunks) {
		t.Errorf("100-token chunks: %d chunks against %d", got.Chunks, base.Chunks)
	}

	glean := DefaultOptions()
	glean.Gleanings = 2
	g := estimate(t, glean, doc)
	gl, ex := line(g, KindGleaning), line(g, KindExtraction)
	// One pass a chunk (a pass that finds nothing ends the loop), resending the prompt
	// and the first answer.
	if gl.Calls != ex.Calls || gl.PromptTokens != ex.PromptTokens+ex.CompletionTokens+gl.Calls*tokens(prompts.Gleaning) {
		t.Errorf("gleaning %+v after extraction %+v", gl, ex)
	}
	if line(base, KindGleaning).Calls != 0 || len(base.Chat) != 3 {
		t.Errorf("no gleaning by default: %+v", base.Chat)
	}

	name := DefaultOptions()
	name.EntityEmbed, name.ReportEmbed = EntityEmbedName, ReportEmbedSummary
	n := estimate(t, name, doc)
	full := DefaultOptions()
	full.ReportEmbed = ReportEmbedFull
	f := estimate(t, full, doc)
	if n.Embeddings[1].Tokens >= base.Embeddings[1].Tokens || n.Embeddings[2].Tokens >= f.Embeddings[2].Tokens ||
		n.Embeddings[1].Texts != base.Embeddings[1].Texts {
		t.Errorf("-entity-embed name -report-embed summary: %+v against %+v", n.Embeddings, f.Embeddings)
	}
	// By default the model embeds no report.
	if r := base.Embeddings[2]; r.Kind != KindReport || r.Requests != 0 || r.Texts != 0 || r.Tokens != 0 || n.Embeddings[2].Tokens == 0 {
		t.Errorf("reports embedded by default: %+v", base.Embeddings)
	}

	offline := DefaultOptions()
	offline.Chat, offline.Embed = false, false
	if o := estimate(t, offline, doc); len(o.Chat) != 0 || len(o.Embeddings) != 0 || o.ChatTotal.Calls != 0 {
		t.Errorf("offline: %+v %+v", o.Chat, o.Embeddings)
	}
}

func TestDescriptionSummariesFromManyDescriptions(t *testing.T) {
	var docs []Document
	for i, place := range []string{"Gullhead", "Sellen", "Reyburn Point", "Dunmore", "Hester Bank", "Quill Cove", "Northway", "Brackwater", "Eastholm"} {
		docs = append(docs, Document{ID: string(rune('a' + i)), Title: place,
			Text: "Marrow Bay lies beside " + place + " on the northern coast. Marrow Bay trades with " + place + " every spring."})
	}
	o := DefaultOptions()
	few := estimate(t, o, docs[:7]...)
	many := estimate(t, o, docs...)
	if line(few, KindDescription).Calls != 0 || line(many, KindDescription).Calls < 1 {
		t.Errorf("summaries: %+v with 7 documents, %+v with 9", line(few, KindDescription), line(many, KindDescription))
	}
}

func TestPrices(t *testing.T) {
	e, err := New(DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Add(Document{ID: "a", Title: "Bloom", Text: passage}); err != nil {
		t.Fatal(err)
	}
	p := Prices{ChatInput: 1, ChatOutput: 4, Embed: 0.1}
	est, err := e.Estimate(t.Context(), &p)
	if err != nil {
		t.Fatal(err)
	}
	c := est.Cost
	want := float64(est.ChatTotal.PromptTokens)/1e6 + 4*float64(est.ChatTotal.CompletionTokens)/1e6 + 0.1*float64(est.EmbedTotal.Tokens)/1e6
	if c == nil || c.Total != c.ChatInput+c.ChatOutput+c.Embed || c.Total < want*0.999999 || c.Total > want*1.000001 {
		t.Errorf("cost %+v, want %v", c, want)
	}
	for _, bad := range []Prices{{ChatInput: -1}, {Embed: -0.5}} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestBadInput(t *testing.T) {
	o := DefaultOptions()
	o.ChunkOverlap, o.EntityEmbed, o.MaxEntities = 600, "names", 0
	_, err := New(o)
	for _, name := range []string{"chunk-overlap", "entity-embed", "max-entities"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("options %+v: %v, want %s named", o, err, name)
		}
	}
	e, err := New(DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Add(Document{ID: "bad", Text: "Caf\xe9"}); err == nil {
		t.Fatal("invalid UTF-8 accepted")
	}
	est, err := e.Estimate(t.Context(), nil)
	if err != nil || len(est.Skipped) != 1 || est.Skipped[0].ID != "bad" || est.Documents != 0 {
		t.Errorf("estimate %+v %v", est, err)
	}
}
