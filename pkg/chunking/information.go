package chunking

import (
	"math"
	"strings"
	"unicode"

	"github.com/graphrag/graphrag/pkg/textseg"
)

// DefaultLowInformationThreshold is the threshold for LowInformation that the
// tests calibrate: real prose scores near 1, navigation, tables of numbers,
// separator rows and repeated boilerplate score below it.
const DefaultLowInformationThreshold = 0.5

// Score says how much information a text carries. Value is in [0, 1]: the
// smallest of the component scores, each in [0, 1] with 1 meaning "looks like
// prose". Reason names the component that set Value ("ok" when none is
// below 1).
type Score struct {
	Value  float64
	Reason string

	Letters    float64 // share of non-space runes that are letters
	Diversity  float64 // Shannon entropy of the word distribution / log2(words)
	Repetition float64 // share of non-empty lines that repeat an earlier line
	Navigation float64 // navigation separators per word
	Words      int
}

// Reasons of a Score.
const (
	ReasonOK         = "ok"
	ReasonNoWords    = "no words"
	ReasonFewLetters = "few letters (numbers, symbols or separators)"
	ReasonRepetitive = "repetitive words"
	ReasonRepeated   = "repeated lines"
	ReasonNavigation = "navigation separators"
)

// isNavSeparator reports the separators of menus and breadcrumbs.
func isNavSeparator(tok string) bool {
	switch tok {
	case "|", "»", "›", "·", "•", ">", "/", "::", "→", "‹", "«", "<", "¦", "-", "–", "—":
		return true
	}
	return false
}

// ramp maps x linearly from [lo, hi] to [0, 1], clamped.
func ramp(x, lo, hi float64) float64 {
	switch {
	case x <= lo:
		return 0
	case x >= hi:
		return 1
	}
	return (x - lo) / (hi - lo)
}

// Information scores text. The measure is conservative: it is built so that
// a short real sentence ("Kolno is a village in Poland.") scores 1, and only
// text that is mostly not words, the same few words over and over, the same
// lines over and over, or words between menu separators scores low:
//
//   - letters: share of non-space runes that are letters; ramp 0.25 → 0.55
//     (prose is ~0.8; a number table or a row of dashes is ~0).
//   - diversity: normalized Shannon entropy H(words)/log2(n) over the
//     lower-cased words, only for n ≥ 8 words (shorter text cannot show
//     repetition); ramp 0.4 → 0.65 (prose is ~0.85–1, even at 600 tokens).
//   - repetition: share of non-empty lines that repeat an earlier line
//     (after trimming), only with ≥ 3 lines; score ramp 0.5 → 0.2 reversed.
//   - navigation: stand-alone separator tokens (| » › · • > / – —) per word,
//     not counting the first token of a line (a list marker);
//     score ramp 0.4 → 0.15 reversed ("Home | About | Contact" is 0.67).
func Information(text string) Score {
	sc := Score{Letters: 0, Diversity: 1}
	var letters, nonSpace int
	for _, r := range text {
		if unicode.IsSpace(r) {
			continue
		}
		nonSpace++
		if unicode.IsLetter(r) || unicode.IsMark(r) {
			letters++
		}
	}
	words := textseg.Words(text)
	sc.Words = len(words)
	if nonSpace == 0 || len(words) == 0 {
		sc.Reason = ReasonNoWords
		return sc
	}
	sc.Letters = float64(letters) / float64(nonSpace)

	if n := len(words); n >= 8 {
		freq := map[string]int{}
		for _, w := range words {
			freq[strings.ToLower(w.Text(text))]++
		}
		var h float64
		for _, c := range freq {
			p := float64(c) / float64(n)
			h -= p * math.Log2(p)
		}
		sc.Diversity = h / math.Log2(float64(n))
	}

	var lines, repeated int
	seen := map[string]bool{}
	for l := range strings.SplitSeq(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		lines++
		if seen[l] {
			repeated++
		}
		seen[l] = true
	}
	if lines >= 3 {
		sc.Repetition = float64(repeated) / float64(lines)
	}

	seps := 0
	for l := range strings.SplitSeq(text, "\n") {
		// The first token of a line is a list marker ("- item"), not a separator.
		for k, f := range strings.Fields(l) {
			if k > 0 && isNavSeparator(f) {
				seps++
			}
		}
	}
	sc.Navigation = float64(seps) / float64(len(words))

	sc.Value, sc.Reason = 1, ReasonOK
	for _, c := range []struct {
		v      float64
		reason string
	}{
		{ramp(sc.Letters, 0.25, 0.55), ReasonFewLetters},
		{ramp(sc.Diversity, 0.4, 0.65), ReasonRepetitive},
		{1 - ramp(sc.Repetition, 0.2, 0.5), ReasonRepeated},
		{1 - ramp(sc.Navigation, 0.15, 0.4), ReasonNavigation},
	} {
		if c.v < sc.Value {
			sc.Value, sc.Reason = c.v, c.reason
		}
	}
	return sc
}

// LowInformation reports whether a score is below the threshold (see
// DefaultLowInformationThreshold).
func LowInformation(s Score, threshold float64) bool { return s.Value < threshold }
