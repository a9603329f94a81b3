package engine

import (
	"context"

	"github.com/graphrag/graphrag/pkg/llm"
)

// Names are candidate names of a question's entities, found one way.
type Names struct {
	By    string  // how they were found: an Entity's LinkedBy ("llm", "proper_noun")
	Score float64 // the link score of each (an exact name links with 1)
	Names []string
}

// EntityLister names the entities a question mentions, for linking when neither its
// exact names nor the embeddings link any (fallbackLinks). The engine is given one
// (Deps.Entities), chosen once: ModelEntities when there is a model, ProperNounEntities
// otherwise.
type EntityLister interface {
	// QueryEntities returns lists of candidate names in the order to try them: a list
	// is checked against the graph only when those before it linked nothing. With an
	// error it returns the lists that remain usable.
	QueryEntities(ctx context.Context, query string) ([]Names, error)
}

// ProperNounEntities lists a question's capitalized phrases (ProperNouns), linked with
// score 0.8 as "proper_noun".
type ProperNounEntities struct{}

// QueryEntities returns the proper nouns of query.
func (ProperNounEntities) QueryEntities(_ context.Context, query string) ([]Names, error) {
	return []Names{properNouns(query)}, nil
}

func properNouns(query string) Names {
	return Names{By: "proper_noun", Score: 0.8, Names: ProperNouns(query)}
}

// ModelEntities returns the lister that asks the model for the named entities and key
// concepts of a question (linked with score 0.9 as "llm"), then falls back to its proper
// nouns (ProperNounEntities), also when the model's call fails.
func ModelEntities(client *llm.Client) EntityLister { return modelEntities{client: client} }

type modelEntities struct{ client *llm.Client }

var queryEntitiesSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"entities": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
	},
	"required":             []string{"entities"},
	"additionalProperties": false,
}

func (m modelEntities) QueryEntities(ctx context.Context, query string) ([]Names, error) {
	out, _, err := llm.ChatJSON[struct {
		Entities []string `json:"entities"`
	}](ctx, m.client, llm.ChatRequest{
		Stage:      "query",
		System:     "List the named entities and key concepts mentioned in the user's question, as they are written. Return JSON only.",
		User:       query,
		MaxTokens:  200,
		JSONSchema: &llm.Schema{Name: "query_entities", Schema: queryEntitiesSchema, Strict: true},
	})
	return []Names{{By: "llm", Score: 0.9, Names: out.Entities}, properNouns(query)}, err
}
