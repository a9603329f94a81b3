package costestimate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/graphrag/graphrag/pkg/chunking"
	"github.com/graphrag/graphrag/pkg/normalize"
	"github.com/graphrag/graphrag/pkg/offlinextract"
	"github.com/graphrag/graphrag/pkg/prompts"
	"github.com/graphrag/graphrag/pkg/schema"
)

// What Options.EntityEmbed and Options.ReportEmbed may say is embedded (the grapher's
// -entity-embed and the summarizer's -report-embed).
const (
	EntityEmbedDescription = "description"
	EntityEmbedName        = "name"
	ReportEmbedNone        = "none"
	ReportEmbedFull        = "full"
	ReportEmbedSummary     = "summary"
)

// Options are the settings of the services that decide what indexing asks of the models.
// Each field is the flag of the same name of graphrag up and the services.
type Options struct {
	// ChunkTokens, ChunkOverlap and MinInformation: the extractor's -chunk-tokens,
	// -chunk-overlap and -min-information.
	ChunkTokens    int     `json:"chunk_tokens"`
	ChunkOverlap   int     `json:"chunk_overlap"`
	MinInformation float64 `json:"min_information"`
	// MaxEntities, MaxRelationships and Gleanings: the extractor's -max-entities,
	// -max-relationships and -gleanings.
	MaxEntities      int `json:"max_entities"`
	MaxRelationships int `json:"max_relationships"`
	Gleanings        int `json:"gleanings"`
	// SummarizeAfter and EntityEmbed: the grapher's -summarize-descriptions-after and
	// -entity-embed.
	SummarizeAfter int    `json:"summarize_descriptions_after"`
	EntityEmbed    string `json:"entity_embed"`
	// ReportContextTokens and ReportEmbed: the summarizer's -report-context-tokens and
	// -report-embed.
	ReportContextTokens int    `json:"report_context_tokens"`
	ReportEmbed         string `json:"report_embed"`
	// EmbedBatchSize is the texts of one embedding request (-llm-embed-batch-size).
	EmbedBatchSize int `json:"embed_batch_size"`
	// Chat and Embed say whether a chat model and an embedding model are configured:
	// without a chat model extraction and reports are offline, without an embedding
	// model vectors are the offline hashing embedder's, and neither costs a call.
	Chat  bool `json:"chat"`
	Embed bool `json:"embed"`
}

// DefaultOptions are the services' defaults, with both models configured.
func DefaultOptions() Options {
	return Options{ChunkTokens: 600, ChunkOverlap: 100, MinInformation: 0.35, MaxEntities: 25, MaxRelationships: 40,
		SummarizeAfter: 8, EntityEmbed: EntityEmbedDescription, ReportContextTokens: 8000, ReportEmbed: ReportEmbedNone,
		EmbedBatchSize: 64, Chat: true, Embed: true}
}

// Validate names every invalid option.
func (o Options) Validate() error {
	var errs []error
	bad := func(name string, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{name}, args...)...))
	}
	if o.ChunkTokens < 1 {
		bad("chunk-tokens", "must be at least 1, got %d", o.ChunkTokens)
	}
	if o.ChunkOverlap < 0 || o.ChunkOverlap >= o.ChunkTokens {
		bad("chunk-overlap", "must be in [0, %d), got %d", o.ChunkTokens, o.ChunkOverlap)
	}
	if o.MinInformation < 0 || o.MinInformation > 1 || math.IsNaN(o.MinInformation) {
		bad("min-information", "must be in [0, 1], got %v", o.MinInformation)
	}
	for _, f := range []struct {
		name  string
		v, lo int
	}{{"max-entities", o.MaxEntities, 1}, {"max-relationships", o.MaxRelationships, 1}, {"gleanings", o.Gleanings, 0},
		{"summarize-descriptions-after", o.SummarizeAfter, 1}, {"report-context-tokens", o.ReportContextTokens, 1},
		{"llm-embed-batch-size", o.EmbedBatchSize, 1}} {
		if f.v < f.lo {
			bad(f.name, "must be at least %d, got %d", f.lo, f.v)
		}
	}
	if o.EntityEmbed != EntityEmbedDescription && o.EntityEmbed != EntityEmbedName {
		bad("entity-embed", "must be %s or %s, got %q", EntityEmbedDescription, EntityEmbedName, o.EntityEmbed)
	}
	if o.ReportEmbed != ReportEmbedNone && o.ReportEmbed != ReportEmbedFull && o.ReportEmbed != ReportEmbedSummary {
		bad("report-embed", "must be %s, %s or %s, got %q", ReportEmbedNone, ReportEmbedFull, ReportEmbedSummary, o.ReportEmbed)
	}
	return errors.Join(errs...)
}

// Prices are what the models cost, in US dollars per million tokens.
type Prices struct {
	ChatInput  float64 `json:"chat_input"`
	ChatOutput float64 `json:"chat_output"`
	Embed      float64 `json:"embed"`
}

// Validate refuses negative or non-finite prices.
func (p Prices) Validate() error {
	for name, v := range map[string]float64{"price-chat-input": p.ChatInput, "price-chat-output": p.ChatOutput, "price-embed": p.Embed} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s: must be a price of at least 0 (USD per million tokens), got %v", name, v)
		}
	}
	return nil
}

// The kinds of work, as Estimate names them.
const (
	KindExtraction  = "extraction"
	KindGleaning    = "gleaning"
	KindDescription = "description"
	KindReport      = "report"
	KindChunk       = "chunk"
	KindEntity      = "entity"
)

// ChatLine is the chat model's work of one kind.
type ChatLine struct {
	Kind             string `json:"kind"`
	Calls            int64  `json:"calls"`
	PromptTokens     int64  `json:"prompt_tokens"`
	CompletionTokens int64  `json:"completion_tokens"`
}

// EmbedLine is the embedding model's work of one kind. Chunk and entity requests
// assume no two calls share a request; calls made while another is sent do share them
// (ADR 0050), so a busy pipeline sends fewer. Report requests are calibrated.
type EmbedLine struct {
	Kind     string `json:"kind"`
	Requests int64  `json:"requests"`
	Texts    int64  `json:"texts"`
	Tokens   int64  `json:"tokens"`
}

// Cost is the price of the estimate, in US dollars.
type Cost struct {
	Prices     Prices  `json:"prices"`
	ChatInput  float64 `json:"chat_input_usd"`
	ChatOutput float64 `json:"chat_output_usd"`
	Embed      float64 `json:"embed_usd"`
	Total      float64 `json:"total_usd"`
}

// Skipped is a document the estimate could not read, with the reason.
type Skipped struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// Estimate is what indexing the documents is expected to ask of the models. Tokens are
// counted at one per 4 bytes of text, as the project's counters and graphrag eval count
// them (a BPE tokenizer gives about as many on English prose).
type Estimate struct {
	Documents       int `json:"documents"`
	Chunks          int `json:"chunks"`
	ExtractedChunks int `json:"extracted_chunks"`
	// ChunkTextTokens are the chunks' own text; Entities and Relationships the distinct
	// ones the offline extractor finds, which the structural figures are scaled from.
	ChunkTextTokens int64       `json:"chunk_text_tokens"`
	Entities        int         `json:"entities"`
	Relationships   int         `json:"relationships"`
	Chat            []ChatLine  `json:"chat"`
	Embeddings      []EmbedLine `json:"embeddings"`
	ChatTotal       ChatLine    `json:"chat_total"`
	EmbedTotal      EmbedLine   `json:"embed_total"`
	Cost            *Cost       `json:"cost,omitempty"`
	Skipped         []Skipped   `json:"skipped,omitempty"`
	Options         Options     `json:"options"`
}

// Document is one document as it is published: its id, title and text.
type Document struct {
	ID, Title, Text string
}

// Estimator gathers documents and estimates what indexing them costs. It is not safe for
// concurrent use.
type Estimator struct {
	opts Options

	docs, chunks, extracted int
	chunkTokens             int64
	// chunk embedding requests (one call per document batch of 128 chunks)
	chunkRequests, chunkTexts, chunkEmbedTokens int64
	extraction, gleaning                        ChatLine
	entities                                    map[string]*entity
	pairs                                       map[[2]string]*relation
	skipped                                     []Skipped
}

type entity struct {
	name, typ string
	descs     map[string]bool
	// line and summary are set by graph: the entity's line in a report context and
	// the first sentence of its description.
	line    int64
	summary string
}

type relation struct {
	typ      string
	desc     string
	strength float64
	line     int64 // its line in a report context, set by graph
}

// New returns an estimator for the options.
func New(opts Options) (*Estimator, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Estimator{opts: opts, entities: map[string]*entity{}, pairs: map[[2]string]*relation{},
		extraction: ChatLine{Kind: KindExtraction}, gleaning: ChatLine{Kind: KindGleaning}}, nil
}

// tokens is the counting rule: one token per 4 bytes, at least one.
func tokens(s string) int64 { return int64(len(s)/4 + 1) }

func schemaTokens(s map[string]any) int64 {
	b, _ := json.Marshal(s) // maps of strings, numbers and slices: cannot fail
	return tokens(string(b))
}

// chunkBatch is the extractor's batch of chunks embedded at a time (services/extractor).
const chunkBatch = 128

// Add chunks one document as the extractor will and counts what its chunks ask of the
// models. A document the chunker refuses (invalid UTF-8) is recorded as skipped, and
// returned as an error, as the extractor would dead-letter it.
func (e *Estimator) Add(d Document) error {
	chunks, err := chunking.Split(d.ID, d.Text, chunking.WithSize(e.opts.ChunkTokens), chunking.WithOverlap(e.opts.ChunkOverlap))
	if err != nil {
		e.skipped = append(e.skipped, Skipped{ID: d.ID, Reason: err.Error()})
		return fmt.Errorf("document %s: chunking: %w", d.ID, err)
	}
	e.docs++
	e.chunks += len(chunks)
	for lo := 0; lo < len(chunks); lo += chunkBatch {
		n := min(len(chunks)-lo, chunkBatch)
		e.chunkRequests += int64((n + e.opts.EmbedBatchSize - 1) / e.opts.EmbedBatchSize)
	}
	subject := offlinextract.Subject(d.Title, d.Text)
	sysTokens, schTokens := tokens(prompts.ExtractionSystem), schemaTokens(prompts.ExtractionSchema(e.opts.MaxEntities, e.opts.MaxRelationships))
	for _, c := range chunks {
		e.chunkTexts++
		e.chunkEmbedTokens += tokens(schema.ChunkText(d.Title, c.Section, c.Text))
		if chunking.LowInformation(chunking.Information(c.Text), e.opts.MinInformation) {
			continue
		}
		e.extracted++
		e.chunkTokens += tokens(c.Text)
		ents, rels := offlinextract.Extract(subject.Name, c.Text, offlinextract.WithMaxEntities(e.opts.MaxEntities),
			offlinextract.WithMaxRelationships(e.opts.MaxRelationships))
		prompt := sysTokens + schTokens + tokens(prompts.Extraction(d.Title, c.Text, nil, e.opts.MaxEntities, e.opts.MaxRelationships))
		answer := min(answerTokens(ents, rels), prompts.ExtractionMaxTokens)
		e.extraction.Calls++
		e.extraction.PromptTokens += prompt
		e.extraction.CompletionTokens += answer
		full := len(ents) >= e.opts.MaxEntities && len(rels) >= e.opts.MaxRelationships
		if e.opts.Gleanings > 0 && !full {
			// One pass: a pass that finds nothing ends the loop. It resends the prompt
			// and the first answer.
			e.gleaning.Calls++
			e.gleaning.PromptTokens += prompt + answer + tokens(prompts.Gleaning)
			e.gleaning.CompletionTokens += tokens(emptyAnswer)
		}
		e.addGraph(ents, rels)
	}
	return nil
}

// Skip records a document that could not be read (it costs nothing).
func (e *Estimator) Skip(id, reason string) {
	e.skipped = append(e.skipped, Skipped{ID: id, Reason: reason})
}

const emptyAnswer = `{"entities":[],"relationships":[]}`

// answerTokens sizes an extraction answer that lists what the offline extractor finds.
func answerTokens(ents []offlinextract.Entity, rels []offlinextract.Relationship) int64 {
	return tokens(ExtractionAnswer(ents, rels))
}

// ExtractionAnswer is the extraction prompt's JSON answer listing ents and rels, each
// description cut to its first sentence as the prompt asks, strengths on its 1–10 scale:
// the answer the estimate sizes, and what a fake model answers in tests that measure it.
func ExtractionAnswer(ents []offlinextract.Entity, rels []offlinextract.Relationship) string {
	type ent struct {
		Name        string `json:"name"`
		Type        string `json:"type"`
		Description string `json:"description"`
	}
	type rel struct {
		Source      string `json:"source"`
		Target      string `json:"target"`
		Type        string `json:"type"`
		Description string `json:"description"`
		Strength    int    `json:"strength"`
	}
	out := struct {
		Entities      []ent `json:"entities"`
		Relationships []rel `json:"relationships"`
	}{Entities: []ent{}, Relationships: []rel{}}
	for _, x := range ents {
		out.Entities = append(out.Entities, ent{x.Name, x.Type, firstSentence(x.Description)})
	}
	for _, x := range rels {
		s := int(math.Ceil(x.Strength * 10))
		out.Relationships = append(out.Relationships, rel{x.Source, x.Target, x.Type, firstSentence(x.Description), min(max(s, 1), 10)})
	}
	b, _ := json.Marshal(out) // strings and ints: cannot fail
	return string(b)
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// addGraph merges a chunk's entities and relationships by their keys, as the grapher does.
func (e *Estimator) addGraph(ents []offlinextract.Entity, rels []offlinextract.Relationship) {
	for _, x := range ents {
		k := normalize.Name(x.Name)
		if k == "" {
			continue
		}
		en := e.entities[k]
		if en == nil {
			en = &entity{name: x.Name, typ: x.Type, descs: map[string]bool{}}
			e.entities[k] = en
		}
		d := x.Description
		if e.opts.Chat {
			d = firstSentence(d) // as the prompt asks of a model
		}
		if d != "" {
			en.descs[d] = true
		}
	}
	for _, r := range rels {
		a, b := normalize.Name(r.Source), normalize.Name(r.Target)
		if a == "" || b == "" || a == b {
			continue
		}
		if b < a {
			a, b = b, a
		}
		p := [2]string{a, b}
		rel := e.pairs[p]
		if rel == nil {
			rel = &relation{typ: r.Type}
			e.pairs[p] = rel
		}
		// The weight of a pair sums its strengths, which the extraction answer gives
		// in tenths.
		rel.strength += float64(min(max(int(math.Ceil(r.Strength*10)), 1), 10)) / 10
		if d := firstSentence(r.Description); len(d) > len(rel.desc) {
			rel.desc = d
		}
	}
}

// Estimate returns the estimate for the documents added so far, priced when prices is
// not nil.
func (e *Estimator) Estimate(ctx context.Context, prices *Prices) (Estimate, error) {
	o := e.opts
	g, err := e.graph(ctx)
	if err != nil {
		return Estimate{}, err
	}
	est := Estimate{Documents: e.docs, Chunks: e.chunks, ExtractedChunks: e.extracted, ChunkTextTokens: e.chunkTokens,
		Entities: g.entities, Relationships: g.relationships, Skipped: e.skipped, Options: o,
		Chat: []ChatLine{}, Embeddings: []EmbedLine{}}
	reports := g.reports
	if o.Chat {
		est.Chat = append(est.Chat, e.extraction)
		if o.Gleanings > 0 {
			est.Chat = append(est.Chat, e.gleaning)
		}
		est.Chat = append(est.Chat, ChatLine{Kind: KindDescription, Calls: g.descriptionCalls, PromptTokens: g.descriptionPrompt,
			CompletionTokens: g.descriptionAnswer})
		overhead := tokens(prompts.ReportSystem) + schemaTokens(prompts.ReportSchema())
		context := g.reportContext
		est.Chat = append(est.Chat, ChatLine{Kind: KindReport, Calls: reports, PromptTokens: reports*overhead + context,
			CompletionTokens: reports * min(reportAnswerTokens, prompts.ReportMaxTokens)})
	}
	if o.Embed {
		batch := int64(o.EmbedBatchSize)
		est.Embeddings = append(est.Embeddings, EmbedLine{Kind: KindChunk, Requests: e.chunkRequests, Texts: e.chunkTexts, Tokens: e.chunkEmbedTokens})
		texts := int64(g.entities)
		est.Embeddings = append(est.Embeddings, EmbedLine{Kind: KindEntity, Requests: ceilDiv(texts, batch), Texts: texts, Tokens: g.entityTexts})
		perReport, summary := reportTextPerAnswer*reportAnswerTokens, summaryPerFull
		if !o.Chat {
			perReport, summary = extractiveReportText, extractiveSummaryPerFull
		}
		if o.ReportEmbed == ReportEmbedSummary {
			perReport *= summary
		}
		rep := EmbedLine{Kind: KindReport} // ReportEmbedNone: the model embeds no report
		if o.ReportEmbed != ReportEmbedNone {
			rep = EmbedLine{Kind: KindReport, Requests: int64(math.Ceil(float64(reports) / reportTextsPerRequest)), Texts: reports,
				Tokens: int64(perReport * float64(reports))}
		}
		est.Embeddings = append(est.Embeddings, rep)
	}
	for _, c := range est.Chat {
		est.ChatTotal.Calls += c.Calls
		est.ChatTotal.PromptTokens += c.PromptTokens
		est.ChatTotal.CompletionTokens += c.CompletionTokens
	}
	est.ChatTotal.Kind = "total"
	for _, l := range est.Embeddings {
		est.EmbedTotal.Requests += l.Requests
		est.EmbedTotal.Texts += l.Texts
		est.EmbedTotal.Tokens += l.Tokens
	}
	est.EmbedTotal.Kind = "total"
	if prices != nil {
		c := &Cost{Prices: *prices}
		c.ChatInput = float64(est.ChatTotal.PromptTokens) / 1e6 * prices.ChatInput
		c.ChatOutput = float64(est.ChatTotal.CompletionTokens) / 1e6 * prices.ChatOutput
		c.Embed = float64(est.EmbedTotal.Tokens) / 1e6 * prices.Embed
		c.Total = c.ChatInput + c.ChatOutput + c.Embed
		est.Cost = c
	}
	return est, nil
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }
