package prompts

import (
	"fmt"
	"strings"
)

// ExtractionSchemaName, ReportSchemaName: the names of the response formats, by which a
// request's kind can be told.
const (
	ExtractionSchemaName = "extraction"
	ReportSchemaName     = "community_report"
)

// Completion bounds (max_tokens) of the indexing requests.
const (
	ExtractionMaxTokens  = 2048
	DescriptionMaxTokens = 300
	ReportMaxTokens      = 1500
)

// ExtractionSchema is the structured output the model must return. Strength is 1..10 in
// the prompt (models grade integers better than fractions) and scaled to (0, 1]. The
// per-chunk caps are in the schema (maxItems), so a constrained decoder cannot run past
// them and a small model cannot loop until max_tokens cuts its JSON.
func ExtractionSchema(maxEnt, maxRel int) map[string]any {
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

// ExtractionSystem is the extractor's system prompt.
const ExtractionSystem = `You extract a knowledge graph from text. Return JSON only, matching the schema.
Entities: the people, places, organizations, works, events, and key concepts the text is about. Use the most complete name that appears in the text. Give each a type (an upper-case label) and a one-sentence description based only on the text.
Relationships: pairs of extracted entities that the text explicitly relates. Give a short upper-case type (e.g. WORKS_AT, LOCATED_IN, CAUSES), a one-sentence description of the evidence, and a strength from 1 (weak) to 10 (explicit, central).
Never invent facts that are not in the text.`

// Extraction is the extractor's user prompt for one chunk of the document titled title;
// types are the corpus's consolidated entity types (none before its first taxonomy).
func Extraction(title, text string, types []string, maxEnt, maxRel int) string {
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

// Gleaning is the user message of a gleaning pass, sent after the model's earlier answer.
const Gleaning = `Some entities or relationships in the text may have been missed. Return only the additional ones, in the same JSON format (empty lists if nothing was missed).`

// DescriptionSystem is the system prompt of the grapher's description summaries.
const DescriptionSystem = `You merge several descriptions of the same entity, taken from different passages, into one comprehensive description of at most three sentences. Resolve contradictions if possible, keep every distinct fact, write in the third person, and do not add facts.`

// Description is the user prompt that asks for one summary of an entity's descriptions.
func Description(name string, descriptions []string) string {
	return "Entity: " + name + "\nDescriptions:\n- " + strings.Join(descriptions, "\n- ")
}

// ReportSchema is the structured output of a community report.
func ReportSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"title":   map[string]any{"type": "string"},
			"summary": map[string]any{"type": "string"},
			"findings": map[string]any{"type": "array", "maxItems": 7, "items": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"summary":     map[string]any{"type": "string"},
					"explanation": map[string]any{"type": "string"},
				},
				"required":             []string{"summary", "explanation"},
				"additionalProperties": false,
			}},
			"rating":             map[string]any{"type": "number", "minimum": 0, "maximum": 10},
			"rating_explanation": map[string]any{"type": "string"},
		},
		"required":             []string{"title", "summary", "findings", "rating", "rating_explanation"},
		"additionalProperties": false,
	}
}

// ReportSystem is the summarizer's system prompt; the user prompt is the community's
// context (entities, relationships, sub-community reports) within the context budget.
const ReportSystem = `You are an analyst writing a report about a community of entities in a knowledge graph.
Given its entities, relationships and sub-community reports, write:
- title: a short, specific name for the community naming its key entities;
- summary: an executive summary of its structure, how its entities relate, and what matters about it;
- findings: 3 to 7 key insights, each a one-line summary and an explanation grounded in the data;
- rating: importance from 0 to 10, and a one-sentence rating_explanation.
Use only the data provided. Return JSON only.`

// ExtractionGuide is what a corpus's extraction settings add to the extraction prompt
// (package extractsettings): the zero value adds nothing.
type ExtractionGuide struct {
	// System replaces ExtractionSystem when not empty; OutputContract follows it, so
	// the answer's format cannot be lost.
	System string
	// Domain says what the corpus is about.
	Domain string
	// Types are the only entity types the model may use (none: open types).
	Types []string
	// Examples are worked examples: a text and the JSON answer expected for it.
	Examples []ExtractionExample
}

// ExtractionExample is one worked example of a guide; Output is its JSON answer.
type ExtractionExample struct {
	Text   string
	Output string
}

// OutputContract ends a replaced extraction system prompt: the format the extractor
// parses, which the response schema enforces as well.
const OutputContract = `Return JSON only, matching the schema: "entities" (name, type, description) and "relationships" (source, target, type, description, strength from 1 to 10). Never invent facts that are not in the text.`

// ExtractionSystemWith is the extraction system prompt under a guide: the guide's
// system text (or ExtractionSystem), the domain, the allowed types and the examples.
func ExtractionSystemWith(g ExtractionGuide) string {
	var b strings.Builder
	if g.System != "" {
		b.WriteString(strings.TrimSpace(g.System))
		b.WriteString("\n")
		b.WriteString(OutputContract)
	} else {
		b.WriteString(ExtractionSystem)
	}
	if g.Domain != "" {
		fmt.Fprintf(&b, "\n\nDomain of the texts: %s", strings.TrimSpace(g.Domain))
	}
	if len(g.Types) > 0 {
		fmt.Fprintf(&b, "\n\nEntity types: use only these types: %s.", strings.Join(g.Types, ", "))
	}
	for i, ex := range g.Examples {
		fmt.Fprintf(&b, "\n\nExample %d.\nText:\n%s\nAnswer:\n%s", i+1, strings.TrimSpace(ex.Text), ex.Output)
	}
	return b.String()
}

// ExtractionSchemaTypes is ExtractionSchema with the entity types restricted to types
// (an enum), so that a constrained decoder cannot answer another one; ExtractionSchema
// when types is empty.
func ExtractionSchemaTypes(maxEnt, maxRel int, types []string) map[string]any {
	s := ExtractionSchema(maxEnt, maxRel)
	if len(types) == 0 {
		return s
	}
	ents := s["properties"].(map[string]any)["entities"].(map[string]any)
	props := ents["items"].(map[string]any)["properties"].(map[string]any)
	props["type"] = map[string]any{"type": "string", "enum": types}
	return s
}

// SettingsSchemaName names the response format of a settings proposal.
const SettingsSchemaName = "extraction_settings"

// SettingsMaxTokens bounds a settings proposal.
const SettingsMaxTokens = 3000

// SettingsSystem is the system prompt of a settings proposal (graphrag prompt-tune):
// the user prompt is a sample of the corpus's passages.
const SettingsSystem = `You configure the entity and relationship extraction of a knowledge graph for a corpus of documents. From the sample passages given, propose:
- domain: one or two sentences saying what the corpus is about and what matters in it;
- entity_types: 4 to 12 entity types that cover what the passages talk about, each an upper-case label with underscores (e.g. PERSON, PROTEIN, LEGAL_CASE);
- examples: 2 or 3 worked examples, each a short passage copied from the sample and the extraction expected from it: its entities (name, type from entity_types, one-sentence description) and relationships (source and target among those entities, an upper-case type, a one-sentence description, a strength from 1 to 10).
Return JSON only, matching the schema.`

// SettingsSchema is the structured output of a settings proposal: the settings'
// format (domain, entity_types, examples with their extraction).
func SettingsSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"domain":       map[string]any{"type": "string"},
			"entity_types": map[string]any{"type": "array", "maxItems": 20, "items": map[string]any{"type": "string"}},
			"examples": map[string]any{"type": "array", "maxItems": 3, "items": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"text":   map[string]any{"type": "string"},
					"output": ExtractionSchema(10, 10),
				},
				"required":             []string{"text", "output"},
				"additionalProperties": false,
			}},
		},
		"required":             []string{"domain", "entity_types", "examples"},
		"additionalProperties": false,
	}
}

// Settings is the user prompt of a settings proposal: the sample passages.
func Settings(passages []string) string {
	var b strings.Builder
	b.WriteString("Sample passages of the corpus:\n")
	for i, p := range passages {
		fmt.Fprintf(&b, "\n[%d]\n%s\n", i+1, strings.TrimSpace(p))
	}
	return b.String()
}
