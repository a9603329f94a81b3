package llm_test

import (
	"context"
	"math"
	"testing"

	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/llm"
)

// fixedEmbedder returns the same vector for every text.
type fixedEmbedder []float32

func (f fixedEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = append([]float32(nil), f...)
	}
	return out, nil
}

func TestNonZero(t *testing.T) {
	nan := float32(math.NaN())
	tests := []struct {
		name  string
		inner llm.Embedder
		text  string
		zero  bool // the empty text keeps whatever it got
	}{
		{"offline stopwords", hashembed.New(32), "What is it about?", false},
		{"offline acronym", hashembed.New(32), "ALL", false},
		{"offline punctuation", hashembed.New(32), "?!", false},
		{"offline emoji", hashembed.New(32), "🩸", false},
		{"zero from a model", fixedEmbedder{0, 0, 0}, "anything", false},
		{"NaN from a model", fixedEmbedder{nan, 1, 0}, "anything", false},
		{"empty text", hashembed.New(32), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vecs, err := llm.NonZero(tt.inner).Embed(t.Context(), []string{tt.text})
			if err != nil {
				t.Fatal(err)
			}
			var n float64
			for _, x := range vecs[0] {
				n += float64(x) * float64(x)
			}
			if tt.zero != (n == 0) || math.IsNaN(n) {
				t.Errorf("squared norm %v, want zero %v", n, tt.zero)
			}
		})
	}
}

func TestNonZeroKeepsGoodVectors(t *testing.T) {
	inner := hashembed.New(32)
	text := "Acute lymphoblastic leukemia"
	want, _ := inner.Embed(t.Context(), []string{text})
	got, err := llm.NonZero(inner).Embed(t.Context(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	for i := range want[0] {
		if got[0][i] != want[0][i] {
			t.Fatalf("component %d changed: %v, want %v", i, got[0][i], want[0][i])
		}
	}
}
