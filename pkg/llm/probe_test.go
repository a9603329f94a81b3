package llm

import (
	"context"
	"errors"
	"testing"
)

type fixedEmbedder struct {
	vecs [][]float32
	err  error
}

func (f fixedEmbedder) Embed(context.Context, []string) ([][]float32, error) { return f.vecs, f.err }

func TestProbeDimension(t *testing.T) {
	if d, err := ProbeDimension(t.Context(), fixedEmbedder{vecs: [][]float32{make([]float32, 7)}}); err != nil || d != 7 {
		t.Fatalf("ProbeDimension = %d, %v", d, err)
	}
	boom := errors.New("boom")
	if _, err := ProbeDimension(t.Context(), fixedEmbedder{err: boom}); !errors.Is(err, boom) {
		t.Fatalf("error not wrapped: %v", err)
	}
	if _, err := ProbeDimension(t.Context(), fixedEmbedder{}); err == nil {
		t.Fatal("no vector accepted")
	}
}
