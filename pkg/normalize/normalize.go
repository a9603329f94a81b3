package normalize

import (
	"regexp"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// edgeStopwords are dropped at either end of a name.
var edgeStopwords = map[string]bool{
	"the": true, "a": true, "an": true, "of": true, "and": true, "or": true,
	"in": true, "on": true, "for": true, "to": true, "at": true, "by": true,
	"with": true, "from": true,
}

// IsEdgeStopword reports whether w (already normalized) is stripped from the
// ends of names.
func IsEdgeStopword(w string) bool { return edgeStopwords[w] }

func isApostrophe(r rune) bool {
	switch r {
	case '\'', '’', '‘', 'ʼ', '`', '´', 'ʹ', '′':
		return true
	}
	return false
}

// Name returns the canonical form of an entity name (see the package doc).
func Name(s string) string {
	s = strings.ToLower(norm.NFKC.String(s))
	var b strings.Builder
	b.Grow(len(s))
	prevKept := false // the last written rune was a letter, digit or mark
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsNumber(r):
			b.WriteRune(r)
			prevKept = true
		case unicode.IsMark(r):
			if prevKept {
				b.WriteRune(r)
			}
		case isApostrophe(r) || r == '&':
			// Vanishes: "o'brien" → "obrien"; "AT&T" → "att" (as a space
			// it would leave "at t", and "at" is an edge stopword).
		default:
			b.WriteByte(' ')
			prevKept = false
		}
	}
	// Removing an apostrophe can bring a letter and a mark together: compose
	// again so that a second pass finds nothing to change.
	words := strings.Fields(strings.ToLower(norm.NFKC.String(b.String())))
	for len(words) > 1 && edgeStopwords[words[0]] {
		words = words[1:]
	}
	for len(words) > 1 && edgeStopwords[words[len(words)-1]] {
		words = words[:len(words)-1]
	}
	return strings.Join(words, " ")
}

// qualifier is a trailing parenthetical that tells apart documents about namesakes:
// "Mark King (musician)".
var qualifier = regexp.MustCompile(`\s*\([^()]*\)\s*$`)

// Subject returns the key of the entity a document titled title is about: the title
// without a trailing parenthetical qualifier, normalized ("Mark King (musician)" →
// "mark king"). The offline extractor names a document's title entity so, and the query
// service follows the same key from an entity to the passages about it.
func Subject(title string) string {
	if loc := qualifier.FindStringIndex(title); loc != nil && loc[0] > 0 {
		title = title[:loc[0]]
	}
	return Name(title)
}
