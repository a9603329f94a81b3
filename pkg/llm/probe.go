package llm

import (
	"context"
	"errors"
	"fmt"
)

// Embedder is anything that embeds texts: the Client, or the offline embedder.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// ProbeDimension embeds one short text to learn the size of an embedder's vectors, which
// sizes the vector collections a service creates.
func ProbeDimension(ctx context.Context, e Embedder) (int, error) {
	vecs, err := e.Embed(ctx, []string{"dimension probe"})
	switch {
	case err != nil:
		return 0, fmt.Errorf("probing the embedding dimension: %w", err)
	case len(vecs) != 1 || len(vecs[0]) == 0:
		return 0, errors.New("probing the embedding dimension: the embedder returned no vector")
	}
	return len(vecs[0]), nil
}
