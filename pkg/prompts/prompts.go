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
