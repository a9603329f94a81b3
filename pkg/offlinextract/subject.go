package offlinextract

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/graphrag/graphrag/pkg/normalize"
	"github.com/graphrag/graphrag/pkg/textseg"
)

// subjectWindow is how much of a document's opening Subject reads: the subject of a
// document is named at its start, and a bounded read keeps the cost per document fixed.
const subjectWindow = 4000

// Subject returns the name of the entity a document is about, or "" when the document
// does not say.
//
// A title that names an entity is the subject, unchanged (with its disambiguator, "The
// Prestige (film)"): the text mentions it, or it reads like a name. A mention in a header
// block does not count, and a title the text repeats only there (an e-mail's subject
// line) must be in Title Case to read like a name: "Friday lunch" is no entity. A title
// that does not name an entity ("note-00042", "report-q3.pdf", or none) gives way to the
// subject inferred from the text:
//  1. the identifier a record opens with ("BUG-6365", "Incident: INC-2589");
//  2. the subject of the first sentence, when the sentence opens with a name or a noun
//     phrase followed by a copula, an apposition or a verb ("Maximum Overdrive is a 1986
//     American film", "Demon Dice, originally published as Chaos Progenitus, is …",
//     "The demon algorithm is a Monte Carlo method").
//
// A document that opens otherwise names no subject: an e-mail, a ticket or meeting notes
// mention many names and are about none of them, and the name mentioned most is a guess
// that sent the subject list astray (ADR 0047).
//
// The chunker stores the result with every chunk of the document and the extractor
// treats it as the document's title entity, so titled and untitled corpora get the same
// passage → subject relation.
func Subject(title, text string) DocumentSubject {
	title = strings.Join(strings.Fields(strings.ToValidUTF8(title, "")), " ")
	opening := strings.ToValidUTF8(cutAtSpace(text, subjectWindow), "\uFFFD")
	var ds DocumentSubject
	var short string
	// A title that the text repeats only in a header field (an e-mail's subject line)
	// is that field's value, a phrase about the document, unless it reads like a name
	// in every word ("Project Leijith").
	inBody := namedIn(title, withoutFields(opening))
	inField := !inBody && namedIn(title, opening)
	if title != "" && (inBody || nameLike(title) && (!inField || titleCase(title))) {
		ds.Name = title
		short = shortName(title, inferSubject(opening))
	} else {
		ds.Name = inferSubject(opening)
	}
	if ds.Name != "" {
		ds.Aliases = aliases(ds.Name, opening, short)
	}
	return ds
}

// shortName returns the text's own name for a titled subject when the title qualifies
// it ("Young" for "Young, New South Wales", "Laie" for "Laie, Hawaii"): the subject the
// text opens with, when the title's words start with it. Other documents mention the
// subject by that name. "" otherwise.
func shortName(title, inferred string) string {
	t, k := normalize.Name(title), normalize.Name(inferred)
	if k == "" || !strings.HasPrefix(t, k+" ") {
		return ""
	}
	return inferred
}

// DocumentSubject is the entity a document is about.
type DocumentSubject struct {
	// Name is the subject's name; "" when the document does not say.
	Name string
	// Aliases are other names the document's opening gives the subject ("Nick Hexum"
	// for "Nicholas Lofton "Nick" Hexum", "Marian Gold" for "Hartwig Schierbaum, better
	// known by his stage name Marian Gold"), at most maxAliases, none normalizing to
	// Name's key.
	Aliases []string
}

// cutAtSpace returns s up to n bytes, cut at the last white space before n.
func cutAtSpace(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if k := strings.LastIndexAny(s[:n], " \n\t"); k > n/2 {
		return s[:k]
	}
	return s[:n]
}

// namedIn reports whether text mentions title (without its disambiguator), as whole
// normalized words.
func namedIn(title, text string) bool {
	key := normalize.Subject(title)
	if key == "" {
		return false
	}
	if strings.IndexFunc(key, textseg.IsUnspaced) >= 0 {
		return strings.Contains(normalize.Name(text), key) // no spaces bound the words
	}
	return strings.Contains(" "+normalize.Name(text)+" ", " "+key+" ")
}

var (
	fileExtension = regexp.MustCompile(`(?i)\.[a-z0-9]{1,5}$`)
	// identifier matches a token that mixes digits with letters or joins them with
	// '-' or '_' ("00042", "q3", "IMG_2034", "2024-03-01"): the mark of a file or
	// record name, not of an entity's name.
	identifier = regexp.MustCompile(`[0-9][A-Za-z_]|[A-Za-z_][0-9]|[0-9][-_.][0-9]|[-_][0-9]|[0-9][-_]`)
)

// withoutFields returns text without its field lines ("Subject: …", "Date: …"): a
// header that repeats a document's title (an e-mail's subject line) does not mention
// it as the text would mention a name.
func withoutFields(text string) string {
	if !strings.Contains(text, ":") {
		return text
	}
	var b strings.Builder
	at := 0
	for line := range strings.Lines(text) {
		if !fieldBlock(text, at) {
			b.WriteString(line)
		}
		at += len(line)
	}
	return b.String()
}

// nameLike reports whether a title that the text does not mention still reads like
// the name of something: a capitalized word and no file-like token.
func nameLike(title string) bool {
	if fileExtension.MatchString(title) {
		return false
	}
	capital := false
	for w := range strings.FieldsSeq(title) {
		if identifier.MatchString(w) {
			return false
		}
		r := []rune(w)[0]
		capital = capital || unicode.IsUpper(r) || textseg.IsUnspaced(r) // Chinese and Japanese have no capitals
	}
	return capital
}

// titleCase reports whether every word of title is capitalized or a connector or
// function word ("Project Leijith", "Leonardo da Vinci"); "Friday lunch" and "New
// starter on Monday" are in sentence case.
func titleCase(title string) bool {
	for w := range strings.FieldsSeq(title) {
		r, _ := utf8.DecodeRuneInString(w)
		lw := strings.ToLower(strings.Trim(w, ".,:;!?\"'()"))
		if unicode.IsLower(r) && !connectors[lw] && !commonWords[lw] && !prepositions[lw] && !determiners[lw] {
			return false
		}
	}
	return true
}

// definition matches the copula of a defining sentence ("X is a …", "X (born 1970) was
// an …"); the subject is what precedes it.
var definition = regexp.MustCompile(`\s(?:is|was|are|were|has been|had been|refers to|may refer to)\s`)

// sentenceBreak finds the end of a sentence inside a candidate subject: the copula
// then belongs to a later sentence.
var sentenceBreak = regexp.MustCompile(`\p{Ll}{2}[.!?]["”]?\s+\p{Lu}`)

// quoted is a nickname or alternative in quotes inside a name ("John Bernard "J.B."
// Handelsman").
var quoted = regexp.MustCompile(`\s["“][^"“”]{1,40}["”]\s`)

// honorifics open a name without being part of it ("General Moses Ali"). Unlike
// personTitles, no title that is also a given name ("King Vidor").
var honorifics = set(`mr mrs ms miss dr sir dame general captain colonel major lieutenant admiral
commander sergeant professor prof reverend rev`)

// definitionWindow bounds the opening searched for the copula of a defining sentence.
const definitionWindow = 320

// maxSubjectWords bounds the words of an inferred subject: a longer span before a
// copula is a clause, not a name.
const maxSubjectWords = 10

// inferSubject finds the subject of the defining first sentence, else of a first
// sentence that opens with a name and a verb.
func inferSubject(text string) string {
	if s := recordKey(text); s != "" {
		return s
	}
	if s := definedSubject(text); s != "" {
		return s
	}
	x := newExtractor(config{nounPhrases: true}, text)
	x.tokenize()
	if len(x.sents) == 0 {
		return ""
	}
	for i := range x.sents {
		x.properNouns(i)
		x.nounPhrases(i)
	}
	return x.firstSentenceSubject()
}

// definedSubject returns the subject of a defining first sentence: the words before its
// copula without parentheticals, appositives (after a comma or a dash), quotes, a
// leading article or a second name given with "or" ("A lilu or lilû is …" → "lilu").
func definedSubject(text string) string {
	opening := strings.TrimSpace(cutAtSpace(text, definitionWindow))
	if k := strings.Index(opening, "\n\n"); k > 0 {
		opening = opening[:k]
	}
	loc := definition.FindStringIndex(opening)
	if loc == nil {
		return ""
	}
	s := opening[:loc[0]]
	for parens.MatchString(s) {
		s = parens.ReplaceAllString(s, " ")
	}
	if sentenceBreak.MatchString(s) {
		return ""
	}
	s = strings.Trim(s, " \"“”'‘’")
	// "In Akkadian mythology, Alû is …": an opening adverbial phrase is no subject.
	if first, _, _ := strings.Cut(s, " "); prepositions[strings.ToLower(first)] || strings.EqualFold(first, "according") {
		k := strings.LastIndex(s, ",")
		if k < 0 {
			return ""
		}
		s = s[k+1:]
		if first, _, _ := strings.Cut(strings.TrimSpace(s), " "); first == "and" || first == "but" || first == "or" {
			return ""
		}
	}
	s = quoted.ReplaceAllString(" "+s+" ", " ")
	if k := strings.IndexAny(s, ",;:–—[({"); k >= 0 {
		s = s[:k]
	}
	if k := strings.Index(s, " - "); k > 0 {
		s = s[:k]
	}
	if k := strings.Index(s, " or "); k > 0 {
		s = s[:k]
	}
	s = strings.Trim(s, " \"“”'‘’")
	words := strings.Fields(s)
	for len(words) > 1 && (determiners[strings.ToLower(words[0])] || honorifics[strings.ToLower(strings.TrimSuffix(words[0], "."))]) {
		words = words[1:] // "The demon algorithm", "General Moses Ali"
	}
	if len(words) == 0 || len(words) > maxSubjectWords {
		return ""
	}
	name := strings.Trim(strings.Join(words, " "), " \"“”'‘’")
	key := normalize.Name(name)
	if len([]rune(key)) < 2 || commonWords[key] || notNames[key] || auxiliaries[key] {
		return ""
	}
	for i, w := range words {
		if lw := strings.ToLower(w); lw == w && (verbs[lw] || auxiliaries[lw] || i > 0 && isParticiple(lw)) {
			return "" // "In 1990 he founded a company that was …", "A film shot in …": a clause
		}
	}
	return name
}

// firstSentenceSubject returns the name that opens the first sentence when a verb
// follows it ("Lester Smith designed …").
func (x *extractor) firstSentenceSubject() string {
	s := x.sents[0]
	if len(s.toks) < 3 {
		return ""
	}
	end, start := -1, 0
	for _, m := range x.mentions {
		if m.sent == 0 && m.proper && m.ts == 0 && m.te > end {
			end, start = m.te, m.ts
		}
	}
	if end < 0 || end >= len(s.toks) {
		return ""
	}
	next := s.toks[end].lower
	if !verbs[next] && (s.toks[end].cap || !strings.HasSuffix(next, "ed") || len(next) <= 4 || notVerbsEd[next]) {
		return ""
	}
	name := strings.Join(strings.Fields(x.text[s.toks[start].start:s.toks[end-1].end]), " ")
	for _, suf := range []string{"'s", "’s"} {
		name = strings.TrimSuffix(name, suf)
	}
	return name
}

// recordKey returns the identifier a record opens with ("BUG-6365" on the first line
// of a ticket, "Incident: INC-2589", "CHG-6188 — ownership transfer"), or "": a
// record is about the item its key names, not about the values of its fields.
func recordKey(text string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	words := textseg.Words(first)
	k := 0
	if textseg.IsFieldLine(first) {
		colon := strings.IndexByte(first, ':')
		for k < len(words) && words[k].Start < colon {
			k++
		}
	}
	if k >= len(words) {
		return ""
	}
	w := words[k].Text(first)
	if r, _ := utf8.DecodeRuneInString(w); !unicode.IsUpper(r) || classifyCode(w) != codeID {
		return ""
	}
	return w
}
