package hashembed

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
)

func cosine(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func embedOne(t testing.TB, e *Embedder, s string) []float32 {
	t.Helper()
	v, err := e.Embed(context.Background(), []string{s})
	if err != nil {
		t.Fatal(err)
	}
	return v[0]
}

func TestNameAndDimension(t *testing.T) {
	tests := []struct {
		dim      int
		wantDim  int
		wantName string
	}{
		{384, 384, "hashembed-v1-384"},
		{0, DefaultDimension, "hashembed-v1-384"},
		{-5, DefaultDimension, "hashembed-v1-384"},
		{64, 64, "hashembed-v1-64"},
	}
	for _, tt := range tests {
		t.Run(tt.wantName, func(t *testing.T) {
			e := New(tt.dim)
			if e.Dimension() != tt.wantDim || e.Name() != tt.wantName {
				t.Errorf("New(%d) = %d %q, want %d %q", tt.dim, e.Dimension(), e.Name(), tt.wantDim, tt.wantName)
			}
			if got := len(embedOne(t, e, "some words")); got != tt.wantDim {
				t.Errorf("vector length %d, want %d", got, tt.wantDim)
			}
		})
	}
}

func TestDeterministicUnitNorm(t *testing.T) {
	e := New(384)
	texts := []string{"Christopher Nolan directed Inception.", "東京は日本の首都です", "a", "x"}
	a, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(384).Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range texts {
		t.Run(texts[i], func(t *testing.T) {
			for k := range a[i] {
				if a[i][k] != b[i][k] {
					t.Fatalf("component %d differs between runs", k)
				}
			}
			var n float64
			for _, x := range a[i] {
				n += float64(x) * float64(x)
			}
			want := 1.0
			if texts[i] == "a" { // only a stopword: no features
				want = 0
			}
			if math.Abs(n-want) > 1e-5 {
				t.Errorf("squared norm %v, want %v", n, want)
			}
		})
	}
}

func TestSimilarity(t *testing.T) {
	e := New(384)
	tests := []struct {
		name              string
		anchor, near, far string
	}{
		{"possessive", "Nolan", "Nolan's", "Spielberg"},
		{"paraphrase", "Christopher Nolan directed the film Inception in 2010.",
			"The film Inception was directed by Christopher Nolan.",
			"Dopamine is a neurotransmitter that affects motivation."},
		{"plural", "The dopamine systems of the brain", "dopamine system in a brain", "the stock market fell sharply"},
		{"topic", "How does dopamine affect motivation?",
			"Dopamine signals reward and drives motivation in animals.",
			"Kolno is a village in the administrative district of Gmina Brańszczyk."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, n, f := embedOne(t, e, tt.anchor), embedOne(t, e, tt.near), embedOne(t, e, tt.far)
			near, far := cosine(a, n), cosine(a, f)
			if near <= far+0.1 {
				t.Errorf("cos(near) = %.3f, cos(far) = %.3f: want near clearly above far", near, far)
			}
		})
	}
}

func TestStem(t *testing.T) {
	tests := []struct{ in, want string }{
		{"films", "film"}, {"games", "game"}, {"studies", "studi"}, {"study", "studi"},
		{"directed", "direct"}, {"running", "runn"}, {"class", "class"}, {"classes", "class"},
		{"virus", "virus"}, {"analysis", "analysis"}, {"churches", "church"}, {"red", "red"},
		{"cats", "cats"}, {"quickly", "quick"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := Stem(tt.in); got != tt.want {
				t.Errorf("Stem(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestEmbedCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New(16).Embed(ctx, []string{"x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func BenchmarkEmbed(b *testing.B) {
	text := strings.Repeat("Christopher Nolan directed the science fiction film Inception, released in 2010 by Warner Bros. ", 20)
	e := New(384)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := e.Embed(context.Background(), []string{text}); err != nil {
			b.Fatal(err)
		}
	}
}
