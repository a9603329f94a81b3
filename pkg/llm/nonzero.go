package llm

import (
	"context"
	"math"

	"github.com/graphrag/graphrag/pkg/hashembed"
)

// NonZero returns an embedder that maps every non-empty text to a non-zero, finite
// vector: where e returns the zero vector (the offline embedder for a text of stopwords
// or punctuation only, "The Who", "?!") or a non-finite component, the text gets
// hashembed.Fallback's vector of the same length instead. Vector stores refuse such
// vectors (cosine similarity is undefined for them), and a stage that writes records
// wraps its embedder so that no text can be a record the store refuses. The query
// service does not: a question without features has no direction to search in.
func NonZero(e Embedder) Embedder { return nonZero{e} }

type nonZero struct{ Embedder }

func (n nonZero) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := n.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	for i, v := range vecs {
		if i < len(texts) && texts[i] != "" && len(v) > 0 && !hasDirection(v) {
			vecs[i] = hashembed.Fallback(texts[i], len(v))
		}
	}
	return vecs, nil
}

// hasDirection reports whether v is finite and not the zero vector.
func hasDirection(v []float32) bool {
	var sum float64
	for _, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return false
		}
		sum += f * f
	}
	return sum > 0
}
