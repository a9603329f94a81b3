package extractor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/extractsettings"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/normalize"
	"github.com/graphrag/graphrag/pkg/offlinextract"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

func (s *Service) handleChunk(ctx context.Context, corpus string, m *bus.Message) error {
	var c events.Chunk
	if err := events.Decode(m.Data, &c); err != nil {
		return bus.Permanent(fmt.Errorf("decoding chunk: %w", err))
	}
	if c.Corpus != corpus {
		return bus.Permanent(&events.FieldError{Field: "corpus", Problem: fmt.Sprintf("%q does not match subject corpus %q", c.Corpus, corpus)})
	}
	if current, err := pipeline.IsCurrent(ctx, s.state, corpus, c.DocumentID, c.DocumentVersion); err != nil || !current {
		return err // a chunk of a superseded version: the grapher would drop its extraction
	}
	ctx = llm.WithCacheScope(ctx, schema.CacheScope(corpus, c.DocumentID))
	x := &events.Extraction{Schema: events.SchemaExtraction, Corpus: corpus, ChunkID: c.ID, DocumentID: c.DocumentID,
		Method: s.Method(), Entities: []events.ExtractedEntity{}, Relationships: []events.ExtractedRelationship{}, DocumentVersion: c.DocumentVersion}
	// The document's subject is the chunk's title entity. Events written before the
	// chunker named it carry only the title.
	subject := offlinextract.DocumentSubject{Name: c.Subject, Aliases: c.SubjectAliases}
	if subject.Name == "" {
		subject = offlinextract.Subject(c.DocumentTitle, c.Text)
	}
	switch {
	case c.Skip != "":
		x.Skipped = c.Skip
	case s.deps.LLM == nil:
		s.noteOfflineSettings(ctx, corpus)
		x.Entities, x.Relationships = offline(subject, c.Text, s.cfg.MaxEntities, s.cfg.MaxRelationships)
	default:
		// The corpus's settings as they are now, read for every chunk: a model call
		// costs far more than the read, and a re-extraction ordered right after a
		// change must see it.
		set, err := extractsettings.Load(ctx, s.state, corpus)
		if err != nil {
			return fmt.Errorf("chunk %s: %w", c.ID, err)
		}
		var types []string
		if len(set.Settings.EntityTypes) == 0 {
			if types, err = s.tax.Types(ctx); err != nil {
				s.log.WarnContext(ctx, "reading taxonomy; extracting with open types", "err", err)
			}
		}
		ents, rels, err := s.extractLLM(ctx, c.DocumentTitle, subject, c.Text, types, set.Settings)
		switch {
		case fallback(err) != "":
			// The model could not produce valid JSON after its retries, or no answer
			// within its largest time budget. A chunk without an extraction would be
			// missing from the graph, and redelivery would ask the same question again:
			// extract it offline instead, and say so in the method (as the summarizer
			// writes an extractive report).
			s.log.WarnContext(ctx, fallback(err)+"; extracting offline", "corpus", corpus, "chunk", c.ID, "err", err)
			x.Method = offlineMethod
			x.Entities, x.Relationships = offline(subject, c.Text, s.cfg.MaxEntities, s.cfg.MaxRelationships)
		case err != nil:
			return fmt.Errorf("chunk %s: extracting: %w", c.ID, err)
		default:
			x.Entities, x.Relationships, x.SettingsVersion = ents, rels, set.Version
		}
	}
	instruments().extracted.Add(ctx, 1, metric.WithAttributes(attribute.String("method", x.Method)))
	return s.publish(ctx, events.KindExtractions, corpus, x, x.MsgID())
}

// noteOfflineSettings logs once per corpus and process that offline extraction
// ignores the corpus's extraction settings, when it has any: the rule-based extractor
// has no prompt, and its few heuristic types (PERSON, PLACE, ORGANIZATION, CONCEPT)
// cannot be mapped onto types a corpus names (docs/adr/0068-extraction-settings-per-corpus.md).
func (s *Service) noteOfflineSettings(ctx context.Context, corpus string) {
	if _, seen := s.offlineNoted.LoadOrStore(corpus, true); seen {
		return
	}
	set, err := extractsettings.Load(ctx, s.state, corpus)
	if err != nil {
		s.offlineNoted.Delete(corpus) // try again with the next chunk
		return
	}
	if !set.Settings.IsZero() {
		s.log.InfoContext(ctx, "offline extraction ignores the corpus's extraction settings (they apply to a chat model)",
			"corpus", corpus, "settings_version", set.Version)
	}
}

// fallback says why a failed model call is answered without the model, or "" when it
// is not (an outage waits, other errors are retried by redelivery).
func fallback(err error) string {
	switch {
	case errors.Is(err, llm.ErrInvalidJSON):
		return "the model gave no valid extraction"
	case errors.Is(err, llm.ErrTimeout) && !errors.Is(err, llm.ErrOutage):
		return "the model gave no answer within its largest time budget"
	}
	return ""
}

// offline runs the deterministic extractor and caps its output.
func offline(subject offlinextract.DocumentSubject, text string, maxEnt, maxRel int) ([]events.ExtractedEntity, []events.ExtractedRelationship) {
	ents, rels := offlinextract.Extract(subject.Name, text, offlinextract.WithMaxEntities(maxEnt), offlinextract.WithMaxRelationships(maxRel),
		offlinextract.WithAliases(subject.Aliases...))
	outE := make([]events.ExtractedEntity, 0, len(ents))
	for _, e := range ents {
		outE = append(outE, events.ExtractedEntity{Name: e.Name, Type: e.Type, Description: clip(e.Description, 1000)})
	}
	outR := make([]events.ExtractedRelationship, 0, len(rels))
	for _, r := range rels {
		outR = append(outR, events.ExtractedRelationship{Source: r.Source, Target: r.Target, Type: r.Type,
			Description: clip(r.Description, 1000), Strength: clampStrength(r.Strength)})
	}
	return outE, outR
}

func clampStrength(v float64) float64 {
	switch {
	case v <= 0:
		return 0.1
	case v > 1:
		return 1
	}
	return v
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut]
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// capAndClean drops empty and unnamed items, de-duplicates entities by normalized name,
// keeps relationships whose ends are distinct, and applies the per-chunk caps.
func capAndClean(ents []events.ExtractedEntity, rels []events.ExtractedRelationship, maxEnt, maxRel int) ([]events.ExtractedEntity, []events.ExtractedRelationship) {
	seen := map[string]int{}
	outE := []events.ExtractedEntity{}
	for _, e := range ents {
		e.Name = strings.TrimSpace(e.Name)
		k := normalize.Name(e.Name)
		if k == "" {
			continue
		}
		if i, ok := seen[k]; ok {
			if len(e.Description) > len(outE[i].Description) {
				outE[i].Description = e.Description
			}
			continue
		}
		if len(outE) >= maxEnt {
			continue
		}
		e.Type = strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(e.Type), " ", "_"))
		if e.Type == "" {
			e.Type = "CONCEPT"
		}
		e.Description = clip(e.Description, 1000)
		seen[k] = len(outE)
		outE = append(outE, e)
	}
	type pair struct{ a, b string }
	rs := map[pair]bool{}
	outR := []events.ExtractedRelationship{}
	sort.SliceStable(rels, func(i, j int) bool { return rels[i].Strength > rels[j].Strength })
	for _, r := range rels {
		a, b := normalize.Name(r.Source), normalize.Name(r.Target)
		if a == "" || b == "" || a == b || rs[pair{a, b}] || len(outR) >= maxRel {
			continue
		}
		rs[pair{a, b}] = true
		r.Strength = clampStrength(r.Strength)
		r.Type = strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(r.Type), " ", "_"))
		if r.Type == "" {
			r.Type = "RELATED_TO"
		}
		r.Description = clip(r.Description, 1000)
		outR = append(outR, r)
	}
	return outE, outR
}

// pauses makes the extractor's stages pause while their model endpoint or the vector
// store is down instead of failing their messages: handlers run with calls that wait
// out outages (a worker waiting holds its message, so a consumer with all workers
// waiting pulls nothing more), and the pause is recorded for status under the stage
// that waits: the chunker for the vector store and the embedder, the extractor for
// the chat model.
type pauses struct {
	chunker, extractor pipeline.AnyOutage
	stores             *pipeline.Dependencies
	stopping           chan struct{}
	once               sync.Once
	mu                 sync.Mutex
	stopRep            []func()
}

// newPauses watches the vector store, and whichever of the chat client and the
// embedder is a model endpoint.
func newPauses(chat *llm.Client, embedder llm.Embedder, vectors VectorStore, log *slog.Logger) *pauses {
	p := &pauses{stopping: make(chan struct{}),
		stores: pipeline.NewDependencies(map[string]pipeline.Probe{vectorstore.Dependency: pipeline.ProbeOf(vectors)}, log)}
	p.chunker = append(p.chunker, p.stores)
	if src, ok := embedder.(pipeline.OutageSource); ok { // the chat client too, when it embeds
		p.chunker = append(p.chunker, src)
	}
	if chat != nil {
		p.extractor = append(p.extractor, chat)
	}
	return p
}

// handler runs h with calls that wait out model outages until the service stops, and
// runs it again when the vector store it found down answers again; an outage error
// that still reaches the bus (the service is stopping) keeps the message.
func (p *pauses) handler(h pipeline.Handler) pipeline.Handler {
	h = p.stores.Handler(h)
	return func(ctx context.Context, corpus string, m *bus.Message) error {
		err := h(llm.WaitOutOutages(ctx, p.stopping), corpus, m)
		if errors.Is(err, llm.ErrOutage) {
			return bus.Unavailable(err)
		}
		return err
	}
}

// report records each stage paused while one of its sources is down
// (pipeline.ReportPauses).
func (p *pauses) report(ctx context.Context, b *bus.Bus, log *slog.Logger) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopRep != nil {
		return
	}
	for _, st := range []struct {
		stage   string
		sources pipeline.AnyOutage
	}{{pipeline.StageChunker, p.chunker}, {pipeline.StageExtractor, p.extractor}} {
		if len(st.sources) > 0 {
			p.stopRep = append(p.stopRep, pipeline.ReportPauses(ctx, b, st.stage, st.sources, log))
		}
	}
}

// stop ends the waits for the model and the pause record; safe twice.
func (p *pauses) stop() {
	p.once.Do(func() { close(p.stopping) })
	p.stores.Stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, stop := range p.stopRep {
		stop()
	}
	p.stopRep = nil
}
