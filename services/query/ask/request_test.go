package ask

import (
	"errors"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/services/query/engine"
)

// A request is checked whole: the engine's part (corpus, query, top_k, level, weights,
// graph ranking) and the answering part (mode, response_type, user_prompt); every
// error is a bad request naming the field.
func TestRequestValidation(t *testing.T) {
	lvl := 40
	for field, r := range map[string]Request{
		"query":         {Corpus: "demo", Query: "   "},
		"corpus":        {Corpus: "Demo", Query: "x"},
		"mode":          {Corpus: "demo", Query: "x", Mode: "sideways"},
		"top_k":         {Corpus: "demo", Query: "x", TopK: engine.MaxTopK + 1},
		"level":         {Corpus: "demo", Query: "x", Level: &lvl},
		"response_type": {Corpus: "demo", Query: "x", ResponseType: strings.Repeat("x", MaxResponseTypeBytes+1)},
		"user_prompt":   {Corpus: "demo", Query: "x", UserPrompt: "stop\x00"},
		"weights":       {Corpus: "demo", Query: "x", Weights: &engine.Weights{}},
		"graph_ranking": {Corpus: "demo", Query: "x", GraphRanking: "random"},
	} {
		err := r.Validate()
		if !errors.Is(err, engine.ErrBadRequest) || !strings.HasPrefix(err.Error(), field+":") {
			t.Errorf("%s: Validate() = %v, want a bad request about %s", field, err, field)
		}
	}
	for _, mode := range Modes {
		r := Request{Corpus: "demo", Query: "x", Mode: mode, UserPrompt: "Answer in French.\nBe brief."}
		if err := r.Validate(); err != nil {
			t.Errorf("mode %s: %v", mode, err)
		}
	}
}
