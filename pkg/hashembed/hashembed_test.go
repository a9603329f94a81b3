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
		{384, 384, "hashembed-v2-384"},
		{0, DefaultDimension, "hashembed-v2-384"},
		{-5, DefaultDimension, "hashembed-v2-384"},
		{64, 64, "hashembed-v2-64"},
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
			if texts[i] == "a" { // only a stopword: no features (see Fallback)
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

// TestFallback: Fallback gives every non-empty text a unit vector, also one without a
// feature of its own (vector stores refuse the zero vector); the empty text alone
// gets zero.
func TestFallback(t *testing.T) {
	e := New(64)
	tests := []struct {
		name, text string
		want       float64 // squared norm
	}{
		{"empty", "", 0},
		{"acronym stopword", "ALL", 1},
		{"lower stopword", "all", 1},
		{"stopwords only", "What is it? About all of them", 1},
		{"punctuation only", "?!… — ()", 1},
		{"emoji only", "🧬🩸", 1},
		{"spaces only", " \t\n", 1},
		{"invalid UTF-8", "\xff\xfe", 1},
		{"long stopword run", strings.Repeat("and the ", 1<<16), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n float64
			for _, x := range Fallback(tt.text, e.Dimension()) {
				n += float64(x) * float64(x)
			}
			if math.Abs(n-tt.want) > 1e-5 {
				t.Errorf("squared norm %v, want %v", n, tt.want)
			}
		})
	}
}

// TestAcronymKeepsIdentity: a stopword written in capitals (two letters or more) is a
// name: "ALL" (the leukemia) is a feature of a text, "all" is not.
func TestAcronymKeepsIdentity(t *testing.T) {
	e := New(384)
	q := embedOne(t, e, "What is ALL?")
	about := embedOne(t, e, "ALL is the most common cancer diagnosed in children.")
	other := embedOne(t, e, "It is the most common cancer diagnosed in children.")
	if near, far := cosine(q, about), cosine(q, other); near <= far+0.1 {
		t.Errorf("cos(ALL text) = %.3f, cos(text without ALL) = %.3f: want the first clearly above", near, far)
	}
	if a, b := embedOne(t, e, "all the children"), embedOne(t, e, "the children"); cosine(a, b) < 0.999 {
		t.Errorf("lower-case stopword changed the vector: cos = %.3f", cosine(a, b))
	}
}

// FuzzFallbackNonZero: Fallback gives no non-empty text the zero vector.
func FuzzFallbackNonZero(f *testing.F) {
	for _, s := range []string{"ALL", "a", "?", "🧬", " ", "the of and"} {
		f.Add(s)
	}
	e := New(2) // few dimensions: hashes of two words often cancel
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" {
			return
		}
		var n float64
		for _, x := range Fallback(s, e.Dimension()) {
			n += float64(x) * float64(x)
		}
		if n == 0 || math.IsNaN(n) {
			t.Fatalf("Fallback(%q) has squared norm %v", s, n)
		}
	})
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
