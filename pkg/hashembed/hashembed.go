package hashembed

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/graphrag/graphrag/pkg/textseg"
	"github.com/graphrag/graphrag/pkg/words"
)

// DefaultDimension is the dimension New uses for a dim < 1.
const DefaultDimension = 384

// version changes whenever the algorithm changes (see the package doc).
const version = "v2"

// Weights of the feature groups: words dominate, n-grams of characters only
// tie spelling variants together.
const (
	unigramWeight  = 1.0
	bigramWeight   = 0.7
	charGramWeight = 0.25
)

// Embedder embeds texts by feature hashing. It is safe for concurrent use.
type Embedder struct {
	dim int
}

// New returns an embedder of dim dimensions (DefaultDimension if dim < 1).
func New(dim int) *Embedder {
	if dim < 1 {
		dim = DefaultDimension
	}
	return &Embedder{dim: dim}
}

// Dimension returns the length of the vectors.
func (e *Embedder) Dimension() int { return e.dim }

// Name identifies the algorithm and dimension, e.g. "hashembed-v1-384".
func (e *Embedder) Name() string { return fmt.Sprintf("hashembed-%s-%d", version, e.dim) }

// Embed returns one unit vector (or the zero vector, for a text without
// features: see Fallback) per text, in order. It stops early when ctx is done.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("embedding text %d of %d: %w", i, len(texts), err)
		}
		out[i] = e.embed(t)
	}
	return out, nil
}

// seeds of the two hashes: index and sign.
const (
	indexSeed uint64 = 14695981039346656037 // FNV-1a offset basis
	signSeed  uint64 = 0x9e3779b97f4a7c15
	fnvPrime  uint64 = 1099511628211
)

func fnv(seed uint64, group byte, s string) uint64 {
	h := seed
	h ^= uint64(group)
	h *= fnvPrime
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

type feature struct {
	group byte
	s     string
}

func (e *Embedder) embed(text string) []float32 {
	tf := map[feature]int{}
	var prev string
	var starts []int // byte offsets of the runes of a marked word, and its end
	for _, sp := range textseg.Words(text) {
		raw := sp.Text(text)
		w := strings.ToLower(raw)
		w = trimPossessive(w)
		if w == "" || (stopwords[w] && !isAcronym(raw)) {
			prev = ""
			continue
		}
		stem := words.Stem(w)
		tf[feature{'u', stem}]++
		if prev != "" {
			tf[feature{'b', prev + " " + stem}]++
		}
		prev = stem
		// Character n-grams are substrings of the marked word: slicing it by rune
		// offsets allocates nothing, where a string per n-gram was most of the
		// embedder's garbage (entities are embedded by the hundred thousand).
		marked := "<" + w + ">"
		starts = starts[:0]
		for i := range marked {
			starts = append(starts, i)
		}
		runes := len(starts)
		starts = append(starts, len(marked))
		for _, n := range [...]int{3, 4} {
			for k := 0; k+n <= runes; k++ {
				tf[feature{'c', marked[starts[k]:starts[k+n]]}]++
			}
		}
	}
	return e.vector(tf)
}

// vector hashes the features into a unit vector (the zero vector without features).
func (e *Embedder) vector(tf map[feature]int) []float32 {
	v := make([]float64, e.dim)
	for f, n := range tf {
		w := 1 + math.Log(float64(n))
		switch f.group {
		case 'u':
			w *= unigramWeight
		case 'b':
			w *= bigramWeight
		default:
			w *= charGramWeight
		}
		idx := fnv(indexSeed, f.group, f.s) % uint64(e.dim)
		if fnv(signSeed, f.group, f.s)&1 == 1 {
			w = -w
		}
		v[idx] += w
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	out := make([]float32, e.dim)
	if norm == 0 {
		return out
	}
	norm = math.Sqrt(norm)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}

// isAcronym reports whether a word is written in capitals with at least two
// letters ("ALL", "IT", "US"): a name, even when its lower case is a stopword.
func isAcronym(w string) bool {
	letters := 0
	for _, r := range w {
		switch {
		case unicode.IsUpper(r):
			letters++
		case unicode.IsLetter(r):
			return false
		}
	}
	return letters >= 2
}

// Fallback returns a unit vector of dim dimensions (DefaultDimension if dim < 1) for a
// non-empty text that an embedder mapped to the zero vector (a text without a feature
// of its own: only stopwords, punctuation, symbols or spaces): the hashed lower-cased
// words of the text, stopwords included, or, without any word, the hash of the whole
// text. Texts that differ in their words get different directions; vector stores
// refuse the zero vector (cosine similarity is undefined for it). The empty text gets
// the zero vector.
func Fallback(text string, dim int) []float32 {
	e := New(dim)
	tf := map[feature]int{}
	for _, sp := range textseg.Words(text) {
		if w := strings.ToLower(sp.Text(text)); w != "" {
			tf[feature{'u', w}]++
		}
	}
	v := e.vector(tf)
	if text != "" && v[0] == 0 && slices.Max(v) == 0 && slices.Min(v) == 0 {
		// No word, or words whose hashes cancel out ("a b" on one dimension with
		// opposite signs): one feature cannot cancel.
		v = e.vector(map[feature]int{{'f', text}: 1})
	}
	return v
}

func trimPossessive(w string) string {
	for _, suf := range []string{"'s", "’s", "'", "’"} {
		if strings.HasSuffix(w, suf) && len(w) > len(suf) {
			return w[:len(w)-len(suf)]
		}
	}
	return w
}

// stopwords are English function words, dropped from word features.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for w := range strings.FieldsSeq(`a about above after again against all am an and any are as at be
		because been before being below between both but by can could did do does doing down during
		each few for from further had has have having he her here hers herself him himself his how i
		if in into is it its itself just me more most my myself no nor not now of off on once only or
		other our ours ourselves out over own same she should so some such than that the their theirs
		them themselves then there these they this those through to too under until up very was we
		were what when where which while who whom why will with would you your yours yourself also`) {
		m[w] = true
	}
	return m
}()
