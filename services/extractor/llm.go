package extractor

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/extractsettings"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/normalize"
	"github.com/graphrag/graphrag/pkg/offlinextract"
	"github.com/graphrag/graphrag/pkg/prompts"
	"github.com/graphrag/graphrag/pkg/taxonomy"
)

// extractionSchema, extractionSystem, extractionPrompt and gleaningPrompt are package
// prompts', where package costestimate renders them too.
var extractionSchema = prompts.ExtractionSchema

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

const (
	extractionSystem = prompts.ExtractionSystem
	gleaningPrompt   = prompts.Gleaning
)

var extractionPrompt = prompts.Extraction

// extractLLM asks the model for entities and relationships, with optional gleaning passes.
// Invalid JSON is retried by llm.ChatJSON; after that the error matches llm.ErrInvalidJSON.
//
// The corpus's settings (set) add a domain, worked examples and a replaced system text
// to the system prompt; their entity types, when set, are the only ones the response
// schema allows, and the taxonomy's preferred types (types) are then not sent.
func (s *Service) extractLLM(ctx context.Context, title string, subject offlinextract.DocumentSubject, text string, types []string, set extractsettings.Settings) ([]events.ExtractedEntity, []events.ExtractedRelationship, error) {
	system, schema := extractionSystem, extractionSchema(s.cfg.MaxEntities, s.cfg.MaxRelationships)
	if !set.IsZero() {
		system = prompts.ExtractionSystemWith(set.Guide())
		schema = prompts.ExtractionSchemaTypes(s.cfg.MaxEntities, s.cfg.MaxRelationships, set.EntityTypes)
	}
	req := llm.ChatRequest{
		Stage:       "extractor",
		System:      system,
		User:        extractionPrompt(title, text, types, s.cfg.MaxEntities, s.cfg.MaxRelationships),
		Temperature: 0,
		MaxTokens:   prompts.ExtractionMaxTokens,
		JSONSchema:  &llm.Schema{Name: prompts.ExtractionSchemaName, Schema: schema, Strict: true},
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
