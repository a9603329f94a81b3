package chunking

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer"
)

// TestMaxTokenBytes checks the constant that lower-bounds token counts.
func TestMaxTokenBytes(t *testing.T) {
	c, err := tokenizer.Get(tokenizer.Cl100kBase)
	if err != nil {
		t.Fatal(err)
	}
	longest, decoded := 0, 0
	for id := range 101_000 {
		s, err := c.Decode([]uint{uint(id)})
		if err != nil {
			continue // ids between the vocabulary and the special tokens
		}
		decoded++
		longest = max(longest, len(s))
	}
	if decoded < 100_000 || longest != maxTokenBytes {
		t.Fatalf("decoded %d tokens, longest %d bytes; maxTokenBytes = %d", decoded, longest, maxTokenBytes)
	}
}

// fixtureTexts are the texts whose counts must hold exactly.
func fixtureTexts(tb testing.TB) map[string]string {
	out := map[string]string{}
	for _, c := range append(normalCases(tb), giantWordCases(tb)...) {
		out[c.name] = c.text
	}
	out["punctuation and spaces"] = "a , b ; c 'd 's 're x  y\t z \u00a0w 12 34 !? ¿que? «guillemets» — dash ‘quote’ 'tis ..."
	return out
}

// TestSplitPointsAdditive: the tokens of a span are those before any split
// point in it plus those from it, on every fixture.
func TestSplitPointsAdditive(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for name, text := range fixtureTexts(t) {
		var points []int
		for p := 1; p < len(text)-1; p++ {
			if isSplitPoint(text, 0, len(text), p) {
				points = append(points, p)
			}
		}
		for range min(200, len(points)) {
			p := points[r.IntN(len(points))]
			a := max(0, p-1-r.IntN(300))
			b := min(len(text), p+2+r.IntN(300))
			for a > 0 && !isRuneStart(text, a) {
				a--
			}
			for b < len(text) && !isRuneStart(text, b) {
				b++
			}
			whole, _ := CountTokens(text[a:b])
			left, _ := CountTokens(text[a:p])
			right, _ := CountTokens(text[p:b])
			if whole != left+right {
				t.Fatalf("%s: %q: %d tokens, but %d + %d split at %d", name, text[a:b], whole, left, right, p-a)
			}
		}
	}
}

func isRuneStart(s string, i int) bool { return s[i] < 0x80 || s[i] >= 0xC0 }

// TestSpanCounter: counts through split points equal direct counts.
func TestSpanCounter(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for name, text := range fixtureTexts(t) {
		end := min(len(text), 40_000)
		for !isRuneStart(text, end-1) && end < len(text) {
			end++
		}
		c := newSpanCounter(text, 0, end)
		a := 0
		for range 100 {
			e := min(end, a+1+r.IntN(5000))
			for e < end && !isRuneStart(text, e) {
				e++
			}
			got, err := c.count(a, e)
			if err != nil {
				t.Fatal(err)
			}
			if want, _ := CountTokens(text[a:e]); got != want {
				t.Fatalf("%s: count(%d, %d) = %d, want %d", name, a, e, got, want)
			}
			if e == end {
				break
			}
			a = min(e-1, a+r.IntN(2000)) // forward, as the splitter goes
			for !isRuneStart(text, a) {
				a++
			}
		}
	}
}

// TestCutInWordLongest: a cut inside a word has the exact count and is the
// longest run of whole tokens that fits: one more token would not fit.
func TestCutInWordLongest(t *testing.T) {
	for _, c := range giantWordCases(t) {
		for _, size := range []int{7, 50, 600} {
			t.Run(fmt.Sprintf("%s/%d", c.name, size), func(t *testing.T) {
				s := splitter{cfg: config{size: size}, text: c.text}
				start := strings.IndexAny(c.text, "xabcdefghijklmnopqrstuvwxyzABCDEFGHIJ")
				for pos, k := start, 0; pos < len(c.text) && k < 20; k++ {
					cut, n, err := s.cutInWord(pos, len(c.text))
					if err != nil {
						t.Fatal(err)
					}
					if want, _ := CountTokens(c.text[pos:cut]); n != want || n > size {
						t.Fatalf("cut [%d:%d] has %d tokens, reported %d (size %d)", pos, cut, want, n, size)
					}
					// One more token would not fit, unless the next token ends inside a rune.
					if lens, _ := encodeLengths(c.text[pos:]); n < size && len(lens) > n {
						next := cut + lens[n]
						if next == len(c.text) || isRuneStart(c.text, next) {
							t.Fatalf("cut [%d:%d] has %d tokens: one more fits in %d", pos, cut, n, size)
						}
					}
					pos = cut
				}
			})
		}
	}
}

// TestSplitWorkLinear bounds the bytes Split gives the tokenizer, whatever
// the shape of the text: before the split points and the cuts between tokens
// a line without spaces was tokenized tens of times over.
func TestSplitWorkLinear(t *testing.T) {
	for _, c := range linearInputs(t, 200_000) {
		t.Run(c.name, func(t *testing.T) {
			before := tokenizedBytes.Load()
			if _, err := Split("doc", c.text, c.opts...); err != nil {
				t.Fatal(err)
			}
			work := float64(tokenizedBytes.Load()-before) / float64(len(c.text))
			t.Logf("%s: tokenized %.2f× the text", c.name, work)
			if work > 3 {
				t.Fatalf("%s: tokenized %.1f× the text, want ≤ 3×", c.name, work)
			}
		})
	}
}
