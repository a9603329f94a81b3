package textseg

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Span is a half-open byte range [Start, End) of the source text.
type Span struct {
	Start, End int
}

// Text returns the part of s that the span covers.
func (sp Span) Text(s string) string { return s[sp.Start:sp.End] }

// abbreviations end with a period that does not end a sentence. Lower case,
// without the final period.
var abbreviations = map[string]bool{
	"mr": true, "mrs": true, "ms": true, "dr": true, "prof": true, "sr": true,
	"jr": true, "st": true, "mt": true, "ft": true, "gen": true, "col": true,
	"lt": true, "sgt": true, "capt": true, "rev": true, "hon": true, "gov": true,
	"sen": true, "rep": true, "pres": true, "vs": true, "etc": true, "inc": true,
	"ltd": true, "co": true, "corp": true, "no": true, "nos": true, "fig": true,
	"vol": true, "pp": true, "p": true, "ca": true, "cf": true, "approx": true,
	"dept": true, "univ": true, "assn": true, "bros": true, "e.g": true,
	"i.e": true, "a.m": true, "p.m": true, "u.s": true, "u.k": true, "jan": true,
	"feb": true, "mar": true, "apr": true, "jun": true, "jul": true, "aug": true,
	"sep": true, "sept": true, "oct": true, "nov": true, "dec": true, "op": true,
	"ed": true, "eds": true, "est": true, "al": true,
}

func isTerminator(r rune) bool {
	switch r {
	case '.', '!', '?', '…', '。', '！', '？':
		return true
	}
	return false
}

// isCJKTerminator reports terminators that end a sentence without a following space.
func isCJKTerminator(r rune) bool { return r == '。' || r == '！' || r == '？' }

func isCloser(r rune) bool {
	switch r {
	case '"', '\'', ')', ']', '}', '»', '”', '’', '」', '』':
		return true
	}
	return false
}

// Sentences splits text into sentences. Each span is trimmed of surrounding
// white space and is never empty; the spans are in order and do not overlap.
func Sentences(text string) []Span {
	var out []Span
	start := 0
	emit := func(end int) {
		sp := trim(text, start, end)
		if sp.End > sp.Start {
			out = append(out, sp)
		}
		start = end
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == '\n':
			if j, ok := blockBreak(text, start, i); ok {
				emit(i)
				i = j
				continue
			}
			i += size
		case isTerminator(r):
			j := i + size
			// A run of terminators ("?!", "...") and closing quotes or brackets.
			for j < len(text) {
				r2, s2 := utf8.DecodeRuneInString(text[j:])
				if !isTerminator(r2) && !isCloser(r2) {
					break
				}
				j += s2
			}
			if isCJKTerminator(r) || endsSentence(text, start, i, j, r) {
				emit(j)
			}
			i = j
		default:
			i += size
		}
	}
	emit(len(text))
	return out
}

// blockBreak decides whether the newline at i ends a sentence: a blank line,
// a Markdown block line or a field line after it, or a heading or a field line
// before it. It returns where scanning resumes.
func blockBreak(text string, start, i int) (int, bool) {
	lineStart := max(strings.LastIndexByte(text[:i], '\n')+1, start)
	prev := strings.TrimLeft(text[lineStart:i], " \t")
	if strings.HasPrefix(prev, "#") || strings.HasPrefix(prev, "|") || IsFieldLine(prev) {
		return i + 1, true
	}
	j := i + 1
	for j < len(text) && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r') {
		j++
	}
	if j >= len(text) {
		return j, true
	}
	if text[j] == '\n' {
		return j, true
	}
	return i + 1, isBlockStart(text[j:])
}

// isBlockStart reports whether a line starts a Markdown block of its own, or
// is a field line.
func isBlockStart(line string) bool {
	if IsFieldLine(line) {
		return true
	}
	r, size := utf8.DecodeRuneInString(line)
	switch r {
	case '#', '|', '>':
		return true
	case '-', '*', '+', '•':
		return len(line) > size && line[size] == ' '
	}
	k := 0
	for k < len(line) && k < 4 && line[k] >= '0' && line[k] <= '9' {
		k++
	}
	return k > 0 && k+1 < len(line) && (line[k] == '.' || line[k] == ')') && line[k+1] == ' '
}

// endsSentence decides for the terminator at [i, j) whether it ends a sentence.
func endsSentence(text string, start, i, j int, term rune) bool {
	if j >= len(text) {
		return true
	}
	next, _ := utf8.DecodeRuneInString(text[j:])
	if !unicode.IsSpace(next) {
		return false // "3.14", "example.com", "U.S.A"
	}
	k := j
	for k < len(text) {
		r, s := utf8.DecodeRuneInString(text[k:])
		if !unicode.IsSpace(r) {
			break
		}
		k += s
	}
	if k >= len(text) {
		return true
	}
	following, _ := utf8.DecodeRuneInString(text[k:])
	if unicode.IsLower(following) {
		return false // "etc. and so on", "approx. ten"
	}
	if term != '.' {
		return true
	}
	// The word before the period: an abbreviation or an initial.
	w := i
	for w > start {
		r, s := utf8.DecodeLastRuneInString(text[:w])
		if !unicode.IsLetter(r) && r != '.' {
			break
		}
		w -= s
	}
	word := text[w:i]
	if word == "" {
		return true
	}
	if abbreviations[strings.ToLower(word)] {
		return false
	}
	if utf8.RuneCountInString(word) == 1 {
		r, _ := utf8.DecodeRuneInString(word)
		if unicode.IsUpper(r) {
			return false // an initial: "J. Smith"
		}
	}
	return true
}

func trim(text string, start, end int) Span {
	for start < end {
		r, s := utf8.DecodeRuneInString(text[start:end])
		if !unicode.IsSpace(r) {
			break
		}
		start += s
	}
	for end > start {
		r, s := utf8.DecodeLastRuneInString(text[start:end])
		if !unicode.IsSpace(r) {
			break
		}
		end -= s
	}
	return Span{start, end}
}

// IsWordRune reports whether r belongs to a word: a letter, a digit or a
// combining mark of any script.
func IsWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || unicode.IsNumber(r)
}

// isJoiner reports runes that stay inside a word when word runes surround
// them: apostrophes and hyphens ("Nolan's", "Jean-Paul"), and '.' or ','
// between digits ("3.14", "1,000").
func isJoiner(r rune) bool {
	switch r {
	case '\'', '’', '-', '‐', '.', ',':
		return true
	}
	return false
}

// Words splits text into word tokens: runs of word runes, joined across an
// inner apostrophe or hyphen, and across '.' or ',' between digits.
func Words(text string) []Span {
	var out []Span
	i := 0
	for i < len(text) {
		r, s := utf8.DecodeRuneInString(text[i:])
		if !IsWordRune(r) {
			i += s
			continue
		}
		start := i
		prev := r
		i += s
		for i < len(text) {
			r, s = utf8.DecodeRuneInString(text[i:])
			if IsWordRune(r) {
				prev = r
				i += s
				continue
			}
			if !isJoiner(r) || i+s >= len(text) {
				break
			}
			nr, _ := utf8.DecodeRuneInString(text[i+s:])
			if !IsWordRune(nr) {
				break
			}
			if (r == '.' || r == ',') && (!unicode.IsDigit(prev) || !unicode.IsDigit(nr)) {
				break
			}
			prev = r
			i += s
		}
		out = append(out, Span{start, i})
	}
	return out
}

// maxLabelWords bounds the words of a field label ("Reported by", "Incident lead").
const maxLabelWords = 3

// IsFieldLine reports whether line (without its indentation) opens with a field
// label: one to three words, the first capitalized, then a colon and white space,
// as in the header lines of e-mails and tickets ("Subject: …", "Reported by: …",
// "Status: closed"). Such a line is a unit of its own, as a list item is, and is
// not continued by the next line. A colon not followed by white space ("05:07",
// "https://") makes no label.
func IsFieldLine(line string) bool {
	colon := strings.IndexByte(line, ':')
	if colon <= 0 || colon+1 < len(line) && line[colon+1] != ' ' && line[colon+1] != '\t' {
		return false
	}
	label := line[:colon]
	r, _ := utf8.DecodeRuneInString(label)
	if !unicode.IsUpper(r) {
		return false
	}
	words := strings.Fields(label)
	if len(words) == 0 || len(words) > maxLabelWords || strings.TrimSpace(label) != label {
		return false
	}
	for _, w := range words {
		for _, r := range w {
			if !IsWordRune(r) && r != '-' && r != '\'' && r != '/' && r != '.' {
				return false
			}
		}
	}
	return true
}

// ScriptWords returns the words of text as Words does, with the word boundaries of
// scripts written without spaces (Unicode UAX #29, without a dictionary): every Han
// ideograph and every Hiragana letter is a word of its own, a run of Katakana (with its
// prolonged sound mark) is one word, and a word ends where its script changes
// ("1964年" → "1964", "年"). Text in scripts written with spaces gets the spans of
// Words. Callers that find names in Chinese or Japanese text join the ideographs back
// by their own rules.
func ScriptWords(text string) []Span {
	var out []Span
	for _, w := range Words(text) {
		if !hasUnspaced(text[w.Start:w.End]) {
			out = append(out, w)
			continue
		}
		start := w.Start
		prev := scriptOf(0)
		for i := w.Start; i < w.End; {
			r, size := utf8.DecodeRuneInString(text[i:])
			sc := scriptOf(r)
			// A boundary before every ideograph and hiragana letter, after them, and
			// at every change of script; a joiner ('-', '.') keeps to the run it is in.
			if i > start && (sc != prev && !joinerOf(r) || sc == scriptHan || sc == scriptHiragana) {
				out = append(out, Span{start, i})
				start = i
			}
			if !joinerOf(r) {
				prev = sc
			}
			i += size
		}
		out = append(out, Span{start, w.End})
	}
	return out
}

// IsUnspaced reports whether r is a letter of a script written without spaces
// between words: Han ideographs, Hiragana, Katakana.
func IsUnspaced(r rune) bool {
	switch scriptOf(r) {
	case scriptHan, scriptHiragana, scriptKatakana:
		return true
	}
	return false
}

type script int

const (
	scriptOther script = iota
	scriptHan
	scriptHiragana
	scriptKatakana
	scriptDigit
)

func scriptOf(r rune) script {
	switch {
	case unicode.Is(unicode.Han, r):
		return scriptHan
	case unicode.Is(unicode.Hiragana, r):
		return scriptHiragana
	case unicode.Is(unicode.Katakana, r) || r == 'ー':
		return scriptKatakana
	case unicode.IsDigit(r):
		return scriptDigit
	}
	return scriptOther
}

func joinerOf(r rune) bool { return !IsWordRune(r) }

func hasUnspaced(s string) bool {
	for _, r := range s {
		if IsUnspaced(r) {
			return true
		}
	}
	return false
}

// Clip cuts s to at most n bytes without splitting a UTF-8 character.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
