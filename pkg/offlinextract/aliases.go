package offlinextract

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/graphrag/graphrag/pkg/normalize"
)

// maxAliases bounds the aliases of a subject.
const maxAliases = 4

// AliasOf is the type of the relationship from an alias to the subject it names.
const AliasOf = "ALIAS_OF"

var (
	// alsoKnown introduces another name of the subject in its defining sentence.
	alsoKnown = regexp.MustCompile(`(?i)(?:also known as|also called|better known as|commonly known as|popularly known as|` +
		`known professionally as|known mononymously as|known simply as|referred to simply as|usually referred to as|` +
		`(?:stage|ring|pen|birth) name|officially(?: known as)?|nicknamed)\s+["“]?`)
	// nickname is a quoted name inside a full name: Nicholas Lofton "Nick" Hexum.
	nickname = regexp.MustCompile(`^(\p{Lu}[^\s"“”]*(?:\s+\p{Lu}[^\s"“”]*)*)\s+["“]([^"“”]{1,20})["”]\s+(\p{Lu}[^\s(,]*)`)
	// nameSuffix ends a person's name without being a name part.
	nameSuffix = set(`jr jr. sr sr. ii iii iv v`)
)

// aliases returns the other names the opening of a document gives its subject:
//   - a quoted nickname with the family name ("Nick Hexum");
//   - before the copula of the first sentence, a name introduced by "also known as",
//     "better known by his stage name", … or given after "or" ("A lilu or lilû is …");
//   - extra: names the caller found (shortName);
//   - for a person named with middle names, each given name with the family name
//     ("Helen Elizabeth Hunt" → "Helen Hunt", "Elizabeth Hunt"; "Michael Trent
//     Reznor" → "Trent Reznor"): other documents name people so.
func aliases(name, opening string, extra ...string) []string {
	key := normalize.Subject(name)
	seen := map[string]bool{key: true}
	var out []string
	add := func(a string) {
		a = strings.Trim(strings.Join(strings.Fields(a), " "), " ,.;:\"“”'")
		k := normalize.Name(a)
		if len(out) >= maxAliases || len([]rune(k)) < 2 || seen[k] || commonWords[k] || notNames[k] {
			return
		}
		seen[k] = true
		out = append(out, a)
	}
	for _, a := range extra {
		add(a)
	}
	first := firstSentence(opening)
	if m := nickname.FindStringSubmatch(first); m != nil {
		add(m[2] + " " + m[3])
	}
	// Only before the copula: after it, "also known as" names something the subject
	// is related to ("from their album "311" (also known as "The Blue Album")").
	if loc := definition.FindStringIndex(first); loc != nil {
		for _, m := range alsoKnown.FindAllStringIndex(first[:loc[0]], 3) {
			add(leadingName(first[m[1]:]))
		}
		prefix := parens.ReplaceAllString(first[:loc[0]], " ")
		if _, alt, ok := strings.Cut(prefix, " or "); ok && !strings.ContainsAny(alt, ",;") {
			add(leadingName(alt))
		}
	}
	for _, a := range givenNameAliases(name, opening) {
		add(a)
	}
	return out
}

// firstSentence returns the opening up to the end of its first sentence (a period
// after a lower-case word, not an initial), at most definitionWindow bytes.
func firstSentence(s string) string {
	s = cutAtSpace(s, definitionWindow)
	if loc := sentenceBreak.FindStringIndex(s); loc != nil {
		return s[:loc[0]+3]
	}
	return s
}

// leadingName returns the run of capitalized words (and connectors between them) that
// s starts with, or the quoted text it starts with.
func leadingName(s string) string {
	s = strings.TrimLeft(s, " \"“")
	if k := strings.IndexAny(s, "\"”"); k > 0 && k < 60 && !strings.ContainsAny(s[:k], ",;.(") {
		return s[:k]
	}
	words := strings.Fields(s)
	var out []string
	for i, w := range words {
		t := strings.TrimRight(w, ",.;:)\"”")
		r := []rune(t)
		if len(r) == 0 {
			break
		}
		if !unicode.IsUpper(r[0]) && !unicode.IsDigit(r[0]) && (!connectors[t] || i+1 >= len(words) || len(out) == 0) {
			break
		}
		out = append(out, t)
		if t != w { // punctuation ends the name
			break
		}
	}
	for len(out) > 0 && connectors[out[len(out)-1]] {
		out = out[:len(out)-1]
	}
	return strings.Join(out, " ")
}

// givenNameAliases returns, for a person named with three or four names, each given
// name (not an initial) with the family name.
func givenNameAliases(name, opening string) []string {
	words := strings.Fields(name)
	for len(words) > 2 && nameSuffix[strings.ToLower(words[len(words)-1])] {
		words = words[:len(words)-1]
	}
	if len(words) < 3 || len(words) > 4 {
		return nil
	}
	for _, w := range words {
		r := []rune(w)
		if !unicode.IsUpper(r[0]) || connectors[strings.ToLower(w)] || strings.ContainsAny(w, "0123456789") {
			return nil
		}
	}
	if !isPerson(name, opening) {
		return nil
	}
	last := words[len(words)-1]
	var out []string
	for _, w := range words[:len(words)-1] {
		if len([]rune(strings.TrimSuffix(w, "."))) > 1 {
			out = append(out, w+" "+last)
		}
	}
	return out
}

// lifeDates is the parenthetical of a biography's first sentence: "(born 30 July
// 1970)", "(1843 – 1915)", "(died c. 1060)".
var lifeDates = regexp.MustCompile(`\((?:[^()]*\b(?:born|died|née|b\.|d\.)\s|[^()]*\d{3,4}\s*[–—-]\s*[^()]*\d{3,4})`)

// isPerson reports whether the opening is a biography of name: the extractor types
// the subject as a person, and the first sentence gives life dates.
func isPerson(name, opening string) bool {
	if !lifeDates.MatchString(firstSentence(opening)) {
		return false
	}
	ents, _ := Extract(name, opening, WithMaxEntities(1), WithMaxRelationships(1))
	return len(ents) > 0 && normalize.Name(ents[0].Name) == normalize.Subject(name) && ents[0].Type == TypePerson
}
