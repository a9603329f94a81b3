package extractor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/normalize"
	"github.com/graphrag/graphrag/pkg/offlinextract"
	"github.com/graphrag/graphrag/pkg/taxonomy"
)

// extractionSchema is the structured output the model must return. Strength is 1..10 in
// the prompt (models grade integers better than fractions) and scaled to (0, 1]. The
// per-chunk caps are in the schema (maxItems), so a constrained decoder cannot run past
// them and a small model cannot loop until max_tokens cuts its JSON.
func extractionSchema(maxEnt, maxRel int) map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"entities": map[string]any{"type": "array", "maxItems": maxEnt, "items": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"name":        map[string]any{"type": "string"},
					"type":        map[string]any{"type": "string"},
					"description": map[string]any{"type": "string"},
				},
				"required":             []string{"name", "type", "description"},
				"additionalProperties": false,
			}},
			"relationships": map[string]any{"type": "array", "maxItems": maxRel, "items": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"source":      map[string]any{"type": "string"},
					"target":      map[string]any{"type": "string"},
					"type":        map[string]any{"type": "string"},
					"description": map[string]any{"type": "string"},
					"strength":    map[string]any{"type": "integer", "minimum": 1, "maximum": 10},
				},
				"required":             []string{"source", "target", "type", "description", "strength"},
				"additionalProperties": false,
			}},
		},
		"required":             []string{"entities", "relationships"},
		"additionalProperties": false,
	}
}

type llmExtraction struct {
	Entities []struct {
		Name        string `json:"name"`
		Type        string `json:"type"`
		Description string `json:"description"`
	} `json:"entities"`
	Relationships []struct {
		Source      string  `json:"source"`
		Target      string  `json:"target"`
		Type        string  `json:"type"`
		Description string  `json:"description"`
		Strength    float64 `json:"strength"`
	} `json:"relationships"`
}

const extractionSystem = `You extract a knowledge graph from text. Return JSON only, matching the schema.
Entities: the people, places, organizations, works, events, and key concepts the text is about. Use the most complete name that appears in the text. Give each a type (an upper-case label) and a one-sentence description based only on the text.
Relationships: pairs of extracted entities that the text explicitly relates. Give a short upper-case type (e.g. WORKS_AT, LOCATED_IN, CAUSES), a one-sentence description of the evidence, and a strength from 1 (weak) to 10 (explicit, central).
Never invent facts that are not in the text.`

func extractionPrompt(title, text string, types []string, maxEnt, maxRel int) string {
	var b strings.Builder
	if len(types) > 0 {
		fmt.Fprintf(&b, "Prefer these entity types: %s. Use another type only if none fits.\n", strings.Join(types, ", "))
	}
	fmt.Fprintf(&b, "Extract at most %d entities and %d relationships.\n", maxEnt, maxRel)
	if title != "" {
		fmt.Fprintf(&b, "The text comes from the document titled %q.\n", title)
	}
	b.WriteString("\nText:\n")
	b.WriteString(text)
	return b.String()
}

const gleaningPrompt = `Some entities or relationships in the text may have been missed. Return only the additional ones, in the same JSON format (empty lists if nothing was missed).`

// extractLLM asks the model for entities and relationships, with optional gleaning passes.
// Invalid JSON is retried by llm.ChatJSON; after that the error matches llm.ErrInvalidJSON.
func (s *Service) extractLLM(ctx context.Context, title string, subject offlinextract.DocumentSubject, text string, types []string) ([]events.ExtractedEntity, []events.ExtractedRelationship, error) {
	req := llm.ChatRequest{
		Stage:       "extractor",
		System:      extractionSystem,
		User:        extractionPrompt(title, text, types, s.cfg.MaxEntities, s.cfg.MaxRelationships),
		Temperature: 0,
		MaxTokens:   2048,
		JSONSchema:  &llm.Schema{Name: "extraction", Schema: extractionSchema(s.cfg.MaxEntities, s.cfg.MaxRelationships), Strict: true},
	}
	var ents []events.ExtractedEntity
	var rels []events.ExtractedRelationship
	// One conversation: the prompt, then for each gleaning pass the previous answer and a
	// request for what was missed.
	msgs := []llm.Message{{Role: llm.RoleUser, Content: req.User}}
	req.User = ""
	for pass := 0; pass <= s.cfg.Gleanings; pass++ {
		req.Messages = msgs
		out, resp, err := llm.ChatJSON[llmExtraction](ctx, s.deps.LLM, req)
		if err != nil {
			return nil, nil, err
		}
		msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: resp.Content},
			llm.Message{Role: llm.RoleUser, Content: gleaningPrompt})
		for _, e := range out.Entities {
			ents = append(ents, events.ExtractedEntity{Name: e.Name, Type: e.Type, Description: e.Description})
		}
		for _, r := range out.Relationships {
			rels = append(rels, events.ExtractedRelationship{Source: r.Source, Target: r.Target, Type: r.Type,
				Description: r.Description, Strength: r.Strength / 10})
		}
		if pass > 0 && len(out.Entities) == 0 && len(out.Relationships) == 0 {
			break
		}
		if pass == 0 && s.cfg.Gleanings > 0 && atCaps(ents, rels, s.cfg.MaxEntities, s.cfg.MaxRelationships) {
			break
		}
	}
	ents, rels = capAndClean(ents, rels, s.cfg.MaxEntities, s.cfg.MaxRelationships)
	return withSubject(ents, subject, text, s.cfg.MaxEntities), rels, nil
}

// atCaps says whether a first answer already fills both per-chunk caps once cleaned. A
// gleaning pass then cannot add an entity (the first ones within the cap are kept), only
// swap a stronger relationship for a weaker one, and it costs more than the first pass:
// its prompt carries the first answer (docs/benchmarks.md, "Chat model work by kind").
func atCaps(ents []events.ExtractedEntity, rels []events.ExtractedRelationship, maxEnt, maxRel int) bool {
	e, r := capAndClean(ents, slices.Clone(rels), maxEnt, maxRel) // capAndClean sorts rels
	return len(e) >= maxEnt && len(r) >= maxRel
}

// withSubject makes sure the entity the document is about (its subject) is among a chunk's
// entities, as the offline extractor always does: the query service finds the passages
// about an entity through it (normalize.Subject), and a model often leaves the title out
// of a chunk that speaks of "the film" or "she". The offline extractor names and types it.
func withSubject(ents []events.ExtractedEntity, subject offlinextract.DocumentSubject, text string, maxEnt int) []events.ExtractedEntity {
	title := subject.Name
	key := normalize.Subject(title)
	if key == "" || maxEnt <= 0 {
		return ents
	}
	for _, e := range ents {
		if normalize.Name(e.Name) == key {
			return ents
		}
	}
	found, _ := offlinextract.Extract(title, text, offlinextract.WithMaxEntities(1), offlinextract.WithMaxRelationships(0))
	if len(found) == 0 || normalize.Name(found[0].Name) != key {
		return ents
	}
	// One description for every chunk of the document: it says what the entity is to the
	// document and leaves the facts to the model's own entities, and it does not grow the
	// entity's description set (which would call for LLM summaries the cache cannot serve
	// when chunks arrive in another order).
	subj := events.ExtractedEntity{Name: found[0].Name, Type: found[0].Type, Description: clip(fmt.Sprintf("The subject of the document about %q.", title), 1000)}
	if len(ents) >= maxEnt {
		ents = ents[:maxEnt-1]
	}
	return append([]events.ExtractedEntity{subj}, ents...)
}

// taxonomyCache reads the consolidated types at most once per ttl.
type taxonomyCache struct {
	kv  bus.KV
	ttl time.Duration

	mu    sync.Mutex
	at    time.Time
	types []string
}

func newTaxonomyCache(kv bus.KV, ttl time.Duration) *taxonomyCache {
	return &taxonomyCache{kv: kv, ttl: ttl}
}

func (c *taxonomyCache) Types(ctx context.Context) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.at) < c.ttl {
		return c.types, nil
	}
	t, err := taxonomy.Load(ctx, c.kv)
	if err != nil {
		return c.types, err
	}
	c.types, c.at = t.Types, time.Now()
	return c.types, nil
}
