package offlinextract

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/graphrag/graphrag/pkg/textseg"
)

// This file holds the rules for semi-structured text: tickets, e-mails, incident
// reports and meeting notes, where lines, columns and "Label: value" fields carry
// structure that prose carries with sentences.

// hardBreak reports whether the white space between two tokens separates fields of
// a layout rather than words of a phrase: a line break, a tab, or a run of two or
// more spaces (the columns of "Type: Bug   Priority: P2"). No name continues across
// one.
func hardBreak(gap string) bool {
	return strings.ContainsAny(gap, "\n\r\t") || strings.Contains(gap, "  ")
}

// linePrefix matches what may stand between the start of a line and its first word
// without making that word less of a line start: indentation, list bullets and
// checkboxes, quote and heading marks, table bars, a list number.
var linePrefix = regexp.MustCompile(`^[\s\-*+•>#|]*(?:\[[ xX]?\]\s*)?(?:\d{1,3}[.)]\s+)?$`)

// placeOnLine sets the line of token t, the next token of the text, and whether it
// opens a line (after list or heading markup) or a column (inSentence: a token of the
// same sentence precedes it). It reads only the gap since the previous token, so
// tokenizing stays linear in the text.
func (x *extractor) placeOnLine(t *token, inSentence bool) {
	gap := x.text[x.prevEnd:t.start]
	k := strings.LastIndexAny(gap, "\n\r")
	if k >= 0 {
		x.line = x.prevEnd + k + 1
	}
	switch {
	case k < 0 && inSentence && hardBreak(gap):
		t.lineStart = strings.TrimSpace(gap) == "" // a column
	case x.line >= x.prevEnd: // no word between the start of the line and t
		t.lineStart = linePrefix.MatchString(x.text[x.line:t.start])
	}
	t.line = x.line
	x.prevEnd = t.end
}

// maxLabelWords bounds a field label ("Reported by:", "Incident lead:").
const maxLabelWords = 3

// fieldBlock reports whether the line that starts at byte lineBegin of text is a
// field line (textseg.IsFieldLine) next to another one: a header block ("From: …",
// "To: …", "Subject: …"). A lone "Word: …" line is as often a title with a subtitle or
// a name that opens a paragraph ("Turkey: The torch relay leg …").
func fieldBlock(text string, lineBegin int) bool {
	line := func(from int) string {
		l, _, _ := strings.Cut(text[from:], "\n")
		return strings.TrimLeft(l, " \t")
	}
	if !textseg.IsFieldLine(line(lineBegin)) {
		return false
	}
	if k := strings.IndexByte(text[lineBegin:], '\n'); k >= 0 && textseg.IsFieldLine(line(lineBegin+k+1)) {
		return true
	}
	if lineBegin > 0 {
		prev := strings.LastIndexByte(text[:lineBegin-1], '\n') + 1
		return textseg.IsFieldLine(line(prev))
	}
	return false
}

// markLabels marks the field labels of sentence s: one to three words that open a
// line of a header block (fieldBlock) or a column and end with a colon followed by
// white space ("Subject: …", "Reported by: …", "Status: closed"). A label is markup:
// not an entity, and no evidence that its words are names. Two or more capitalized
// words before the colon are kept as a name ("Ada Quillane: agreed", the speaker of a
// transcript).
func (x *extractor) markLabels(s *sentence) {
	for k := 0; k < len(s.toks); k++ {
		if !s.toks[k].lineStart {
			continue
		}
		column := k > 0 && s.toks[k-1].line == s.toks[k].line
		if !column && !fieldBlock(x.text, s.toks[k].line) {
			continue
		}
		for j := k; j < len(s.toks) && j < k+maxLabelWords; j++ {
			if j > k && strings.TrimSpace(x.text[s.toks[j-1].end:s.toks[j].start]) != "" {
				break
			}
			after := len(x.text)
			if j+1 < len(s.toks) {
				after = s.toks[j+1].start
			}
			gap := x.text[s.toks[j].end:after]
			if !strings.HasPrefix(gap, ":") {
				continue
			}
			if rest := gap[1:]; rest != "" && strings.TrimSpace(rest) == rest {
				break // "05:07", "https://": no white space after the colon
			}
			allCap := true
			for _, t := range s.toks[k : j+1] {
				allCap = allCap && t.cap && !connectors[t.lower]
			}
			if j > k && allCap {
				break // a name before a colon
			}
			for m := k; m <= j; m++ {
				s.toks[m].label = true
			}
			k = j
			break
		}
	}
}

// Calendar words are no entities: the abbreviations of months and weekdays in a
// date ("Mon, 3 Jun 2024"), time zones and quarters. A full month or weekday name is
// never a name (see isNameWord); an abbreviation is one only outside a date, where
// "Jan", "Sun" or "Mar" may be a name.
var (
	monthAbbreviations   = set(`jan feb mar apr jun jul aug sep sept oct nov dec`)
	weekdayAbbreviations = set(`mon tue tues wed thu thur thurs fri sat sun`)
	// timeZones are written in capitals ("UTC"); "West" or "Est" is no time zone.
	timeZones = set(`utc gmt cet cest eet eest wet bst ist jst kst hkt sgt aest aedt acst acdt awst nzst
nzdt est edt cst cdt mst mdt pst pdt akst akdt hst msk`)
	// quarter matches the quarters and halves of a (fiscal) year: "Q3", "H1", "FY24".
	quarter = regexp.MustCompile(`^(?:[qQ][1-4]|[hH][12]|FY\d{2}|FY\d{4})$`)
)

// markCalendar marks the calendar words of sentence s.
func (x *extractor) markCalendar(s *sentence) {
	digitAt := func(k int) bool {
		if k < 0 || k >= len(s.toks) {
			return false
		}
		r, _ := utf8.DecodeRuneInString(s.toks[k].text)
		return unicode.IsDigit(r)
	}
	for k := range s.toks {
		t := &s.toks[k]
		switch {
		case t.allCaps && timeZones[t.lower], quarter.MatchString(t.text):
			t.calendar = true
		case monthAbbreviations[t.lower]:
			t.calendar = digitAt(k-1) || digitAt(k+1)
		case weekdayAbbreviations[t.lower]:
			next := len(x.text)
			if k+1 < len(s.toks) {
				next = s.toks[k+1].start
			}
			t.calendar = strings.HasPrefix(x.text[t.end:next], ",") && digitAt(k+1) || digitAt(k+1) && k+2 < len(s.toks) && monthAbbreviations[s.toks[k+2].lower]
		}
	}
}

// joinCodes merges the word tokens of an identifier that textseg.Words splits:
// across '_' ("ledger_svc"), '@' (an e-mail address) and, between lower-case parts of
// two letters or more, '.' ("config.yaml", "baidrou.example"; not "e.g" or "U.S").
func (x *extractor) joinCodes(toks []token) []token {
	out := toks[:0]
	for _, t := range toks {
		if n := len(out); n > 0 {
			prev := &out[n-1]
			gap := x.text[prev.end:t.start]
			join := false
			switch gap {
			case "_", "@":
				join = true
			case ".":
				join = lowerPart(prev.text[strings.LastIndexAny(prev.text, "._@")+1:]) && lowerPart(t.text)
			}
			if join {
				prev.end = t.end
				prev.text = x.text[prev.start:prev.end]
				prev.lower = strings.ToLower(prev.text)
				continue
			}
		}
		out = append(out, t)
	}
	return out
}

// lowerPart reports a part of two runes or more with no upper-case letter.
func lowerPart(s string) bool {
	return utf8.RuneCountInString(s) >= 2 && strings.ToLower(s) == s
}

// Identifiers. Work documents name services, repositories, tickets and hosts by
// identifiers: "INC-3757", "cache-worker", "ledger_svc". An identifier is one name on
// its own (it never joins the words around it) and is one even where a capitalized
// word would not count (at the start of a line, after a label).
//
// codeKind classifies a token:
//   - codeAddress: an e-mail address; no entity, no part of a name.
//   - codeID: an identifier by its form: capitals and digits joined by '-', '_', '.' or
//     '/' ("INC-3757", "CVE-2021-44228", "F-16"), or a lower-case token with '_' or
//     an inner '.' ("ledger_svc", "config.yaml"), or whose hyphenated parts mix
//     letters and digits ("k8s-proxy", "s3-sync"; a decade or an ordinal, "mid-1990s",
//     "19th-century", is no such part).
//   - codeKebab: lower-case words joined by hyphens ("cache-worker"), which English
//     writes too ("well-known", "follow-up", "long-term", "singer-songwriter"). It is
//     an identifier only if no part is an English affix, particle or number word
//     (hyphenParts) or a single letter, the last part is not a participle or an
//     adverb ("award-winning", "so-called"), and the chunk uses it as a name at least
//     once (see nameUse).
type codeKind int

const (
	codeNone codeKind = iota
	codeAddress
	codeID
	codeKebab
)

// ordinalPart matches decades and ordinals ("1990s", "19th", "2nd").
var ordinalPart = regexp.MustCompile(`^\d+(?:s|st|nd|rd|th)$`)

// hyphenParts are the affixes, particles, function words, numbers and degree words
// of English hyphenated compounds ("co-founder", "non-profit", "follow-up",
// "two-time", "long-term", "north-east"). A lexicon of word formation, not of
// compounds: it is small and closed, while the compounds are not.
var hyphenParts = set(`a an the and or of to in on off up out down over under by for with at as from into
co non anti self ex pre post re mid semi multi sub super well half vice pro counter inter intra extra ultra
un de dis mis auto all one two three four five six seven eight nine ten eleven twelve twenty thirty forty
fifty sixty seventy eighty ninety hundred thousand first second third fourth fifth last next so full part
long short high low real late early best worst left right top bottom north south east west ever like
much many more most less least old new great`)

// nonCodeEndings end the last part of English hyphenated adjectives and adverbs.
var nonCodeEndings = []string{"ed", "ing", "ly", "ful", "less", "like", "wise", "ish", "born"}

func classifyCode(text string) codeKind {
	if strings.ContainsRune(text, '@') {
		return codeAddress
	}
	letters, digits, upper := 0, 0, 0
	for _, r := range text {
		switch {
		case unicode.IsLetter(r):
			letters++
			if unicode.IsUpper(r) {
				upper++
			}
		case unicode.IsDigit(r):
			digits++
		}
	}
	sep := strings.ContainsAny(text, "-‐_./")
	if letters == 0 || !sep {
		return codeNone
	}
	if upper > 0 {
		if r, _ := utf8.DecodeRuneInString(text); upper == letters && digits > 0 && unicode.IsLetter(r) {
			return codeID // "INC-3757", not "3-D"
		}
		return codeNone // capitalized words are names by the rules of properNouns
	}
	if strings.ContainsAny(text, "_.") {
		return codeID
	}
	parts := strings.FieldsFunc(text, func(r rune) bool { return r == '-' || r == '‐' })
	if len(parts) < 2 {
		return codeNone
	}
	for _, p := range parts {
		l, d := 0, 0
		for _, r := range p {
			switch {
			case unicode.IsDigit(r):
				d++
			case unicode.IsLetter(r):
				l++
			}
		}
		if l > 0 && d > 0 && !ordinalPart.MatchString(p) {
			return codeID // "k8s-proxy"
		}
	}
	for _, p := range parts {
		if utf8.RuneCountInString(p) < 2 || hyphenParts[p] || hyphenParts[strings.TrimSuffix(p, "s")] || !allLetters(p) {
			return codeNone
		}
	}
	last := parts[len(parts)-1]
	for _, suf := range nonCodeEndings {
		if strings.HasSuffix(last, suf) {
			return codeNone
		}
	}
	return codeKebab
}

func allLetters(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// nameUse reports whether token k of s, a codeKebab, is used as a name here rather
// than as an English compound: it opens a line or a sentence (English capitalizes
// there, an identifier is written as it is), stands alone in parentheses, quotes or
// backticks ("Treingok (session-db)"), or is neither the modifier of a following word
// nor the head of a noun phrase: no number or capitalized word right before it
// ("American singer-songwriter"), no determiner before it with only lower-case words
// between ("a band-aid", "a well-known singer-songwriter"), and no lower-case content
// word or name right after it ("comedy-drama film", "modern-day San Francisco"), only
// a function word, an auxiliary or punctuation ("hits stock-worker, nothing else",
// "in invoice-store since …"). "that" counts as a relative pronoun here, not as a
// determiner ("the relay that sched-api relies on").
func (x *extractor) nameUse(s sentence, k int) bool {
	t := s.toks[k]
	if k == 0 || t.lineStart {
		return true
	}
	before := x.text[s.toks[k-1].end:t.start]
	after := x.text[t.end:s.end]
	if k+1 < len(s.toks) {
		after = x.text[t.end:s.toks[k+1].start]
	}
	if b, a := strings.TrimSpace(before), strings.TrimSpace(after); b != "" && a != "" {
		switch b[len(b)-1:] + a[:1] {
		case "()", "``", `""`, "''", "[]":
			return true
		}
	}
	// Back over the lower-case words before it to a determiner: "a well-known
	// singer-songwriter" is a noun phrase.
	for j := k - 1; j >= 0 && k-j <= 3 && strings.TrimSpace(x.text[s.toks[j].end:s.toks[j+1].start]) == ""; j-- {
		p := s.toks[j]
		if determiners[p.lower] && p.lower != "that" || j == k-1 && (p.cap || unicode.IsDigit([]rune(p.text)[0])) {
			return false
		}
		if p.cap || commonWords[p.lower] || prepositions[p.lower] || auxiliaries[p.lower] || verbs[p.lower] {
			break
		}
	}
	if k+1 < len(s.toks) && strings.TrimSpace(after) == "" {
		n := s.toks[k+1]
		if n.cap || !commonWords[n.lower] && !prepositions[n.lower] && !auxiliaries[n.lower] {
			return false // "singer-songwriter James Vincent McMorrow"
		}
	}
	return true
}

// identifiers adds the lower-case identifiers of sentence i as mentions: codeID
// tokens, and codeKebab tokens that the chunk uses as a name somewhere (kebabNames).
func (x *extractor) identifiers(i int) {
	s := x.sents[i]
	for k, t := range s.toks {
		if t.cap {
			continue // capitalized codes are found by properNouns
		}
		if x.identifier(t) {
			x.addMention(i, k, k+1, true)
		}
	}
}

// identifier reports whether t is an identifier of this chunk: no part of a noun
// phrase, a name of its own.
func (x *extractor) identifier(t token) bool {
	return t.code == codeID || t.code == codeKebab && x.kebabNames[t.lower]
}

// markup reports whether sentence i is layout rather than prose: a Markdown heading
// or a line of a header block. A description is taken from such a sentence only when
// no other sentence mentions the entity.
func (x *extractor) markup(i int) bool {
	s := x.sents[i]
	if strings.HasPrefix(x.text[s.start:s.end], "#") {
		return true
	}
	return len(s.toks) > 0 && s.toks[0].lineStart && fieldBlock(x.text, s.toks[0].line)
}

// heading reports whether sentence i is a Markdown heading ("# Title", "## Section").
func (x *extractor) heading(i int) bool {
	s := x.sents[i]
	lineBegin := strings.LastIndexAny(x.text[:s.start], "\n\r") + 1
	if strings.TrimSpace(x.text[lineBegin:s.start]) != "" {
		return false
	}
	return headingLine(x.text[lineBegin:s.end])
}

// headingLine reports whether line is a Markdown ATX heading: one to six '#' and a
// space, after at most three spaces of indentation.
func headingLine(line string) bool {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return false
	}
	n := 0
	for n < len(t) && t[n] == '#' {
		n++
	}
	return n >= 1 && n <= 6 && (n == len(t) || t[n] == ' ' || t[n] == '\t' || t[n] == '\n' || t[n] == '\r')
}

// describing returns the first of sents (sentence indexes, ascending) that is not
// markup, else the first that is no heading (a header line), else the first prose
// sentence of the chunk: a heading labels the text and is never a description. It
// returns len(x.sents) when the chunk has no sentence but headings.
func (x *extractor) describing(sents []int) int {
	for _, i := range sents {
		if !x.markup(i) {
			return i
		}
	}
	for _, i := range sents {
		if !x.heading(i) {
			return i
		}
	}
	for i := range x.sents {
		if !x.heading(i) {
			return i
		}
	}
	return len(x.sents)
}
