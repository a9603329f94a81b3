package bench

import (
	"bufio"
	"compress/gzip"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/graphrag/graphrag/pkg/offlinextract"
)

// A realistic corpus for the benchmarks: a real corpus (the HotpotQA development sample,
// embedded below, or any directory with corpus.jsonl and questions.jsonl) scaled by
// copies. Copy 0 is the corpus itself; in copy k ≥ 1 every entity name is rewritten so
// that no two copies share an entity, while the rest of the text, and so its word
// statistics, entity density and sentence structure, stays as it is:
//
//   - Name words: the words of the proper-name entities the offline extractor finds in
//     the corpus (every capitalized word of a name, except those that are more often
//     written in lower case, such as "The", "New" or "Army": rewriting those would
//     rewrite ordinary text; a name made only of such words has its rarest one
//     rewritten). Each is replaced, wherever it is written capitalized in the copy, by a
//     pseudo-word: two syllables naming the copy and one to three naming the word
//     (frequent words get the short codes), so copies cannot collide. An acronym in a
//     name becomes a 6-letter acronym in the same way.
//   - Concept noun phrases ("a collectible dice game") have their last word rewritten,
//     in their occurrences only.
//
// Questions are rewritten by the same substitution, so that each copy has the corpus's
// questions about its own entities, with their gold passages in that copy.

//go:embed testdata/hotpotqa/corpus.jsonl.gz testdata/hotpotqa/questions.jsonl.gz
var hotpotqaSample embed.FS

// realDoc is one passage.
type realDoc struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

// realQuestion is one question with the ids of its gold passages.
type realQuestion struct {
	ID       string   `json:"id"`
	Question string   `json:"question"`
	Answer   string   `json:"answer"`
	Gold     []string `json:"gold"`
}

// realCorpus is a base corpus and the substitution that makes its copies.
type realCorpus struct {
	source    string // where the base corpus came from, for the report
	docs      []realDoc
	questions []realQuestion
	// words maps a name word (capitalized, as written) to its index; acronyms maps an
	// all-capital name word to its index among acronyms.
	words, acronyms map[string]int
	// concepts lists, per document, the concept phrases found in it (longest first) and
	// the index of their last word's code.
	concepts [][]conceptPhrase
	vocab    map[string]bool // lower-cased letter runs of the base corpus
	index    map[string]int  // document id -> position
}

type conceptPhrase struct {
	surface string // as extracted
	head    int    // byte offset of its last word in surface
	code    int    // index of the last word among the words
}

// loadRealCorpus reads corpus.jsonl and questions.jsonl from dir, or the embedded
// HotpotQA sample when dir is "", and prepares the substitution.
func loadRealCorpus(dir string) (*realCorpus, error) {
	rc := &realCorpus{source: dir}
	var err error
	if dir == "" {
		rc.source = "HotpotQA development sample (embedded, 994 passages, CC BY-SA 4.0)"
		if rc.docs, err = readGzipJSONL[realDoc](hotpotqaSample, "testdata/hotpotqa/corpus.jsonl.gz"); err == nil {
			rc.questions, err = readGzipJSONL[realQuestion](hotpotqaSample, "testdata/hotpotqa/questions.jsonl.gz")
		}
	} else {
		if rc.docs, err = readJSONLFile[realDoc](filepath.Join(dir, "corpus.jsonl")); err == nil {
			rc.questions, err = readJSONLFile[realQuestion](filepath.Join(dir, "questions.jsonl"))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("reading the base corpus: %w", err)
	}
	if len(rc.docs) == 0 {
		return nil, fmt.Errorf("reading the base corpus: no passages in %q", rc.source)
	}
	rc.index = make(map[string]int, len(rc.docs))
	for i, d := range rc.docs {
		rc.index[d.ID] = i
	}
	rc.prepare()
	return rc, nil
}

func readGzipJSONL[T any](fsys embed.FS, name string) ([]T, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return decodeJSONL[T](zr, name)
}

func readJSONLFile[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return decodeJSONL[T](f, path)
}

func decodeJSONL[T any](r io.Reader, name string) ([]T, error) {
	var out []T
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// prepare extracts the base corpus offline (as the extractor does, per document) and
// chooses the words to rewrite.
func (rc *realCorpus) prepare() {
	capCount, lowCount := map[string]int{}, map[string]int{}
	rc.vocab = map[string]bool{}
	for _, d := range rc.docs {
		for _, txt := range []string{d.Title, d.Text} {
			letterRuns(txt, func(w string) {
				rc.vocab[strings.ToLower(w)] = true
				r, _ := utf8.DecodeRuneInString(w)
				if unicode.IsUpper(r) {
					capCount[w]++
				} else {
					lowCount[strings.ToLower(w)]++
				}
			})
		}
	}
	freq := map[string]int{} // name word -> mentions, to give frequent words short codes
	acr := map[string]bool{}
	rc.concepts = make([][]conceptPhrase, len(rc.docs))
	headCode := map[string]int{} // concept last word -> index in order of first sight
	for i, d := range rc.docs {
		subj := offlinextract.Subject(d.Title, d.Text)
		ents, _ := offlinextract.Extract(subj.Name, d.Text, offlinextract.WithAliases(subj.Aliases...))
		for _, e := range ents {
			if e.Type == "CONCEPT" {
				if cp, ok := conceptOf(e.Name); ok {
					rc.concepts[i] = append(rc.concepts[i], cp)
					if h := strings.ToLower(cp.surface[cp.head:]); !contains(headCode, h) {
						headCode[h] = len(headCode)
					}
				}
				continue
			}
			for _, w := range nameWordsToRewrite(e.Name, capCount, lowCount) {
				if isAcronym(w) {
					acr[w] = true
				} else {
					freq[w]++
				}
			}
		}
		slices.SortStableFunc(rc.concepts[i], func(a, b conceptPhrase) int { return len(b.surface) - len(a.surface) })
	}
	words := make([]string, 0, len(freq))
	for w := range freq {
		words = append(words, w)
	}
	slices.SortFunc(words, func(a, b string) int {
		if freq[a] != freq[b] {
			return freq[b] - freq[a]
		}
		return strings.Compare(a, b)
	})
	rc.words = make(map[string]int, len(words)+len(headCode))
	for i, w := range words {
		rc.words[w] = i
	}
	// Concept heads share the code space with the name words (after them), so a
	// rewritten head never spells a rewritten name word.
	for i := range rc.concepts {
		for j := range rc.concepts[i] {
			cp := &rc.concepts[i][j]
			cp.code = len(words) + headCode[strings.ToLower(cp.surface[cp.head:])]
		}
	}
	rc.acronyms = map[string]int{}
	for i, w := range slices.Sorted(mapKeys(acr)) {
		rc.acronyms[w] = i
	}
}

func contains[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// nameWordsToRewrite picks the words of a proper name to rewrite: its capitalized
// words that are not more often lower case; failing those, its rarest capitalized word.
func nameWordsToRewrite(name string, capCount, lowCount map[string]int) []string {
	var out []string
	rarest, rarestLow := "", -1
	letterRuns(name, func(w string) {
		r, _ := utf8.DecodeRuneInString(w)
		if !unicode.IsUpper(r) {
			return
		}
		low := lowCount[strings.ToLower(w)]
		if isAcronym(w) || low < capCount[w] {
			out = append(out, w)
		}
		if rarestLow < 0 || low < rarestLow {
			rarest, rarestLow = w, low
		}
	})
	if len(out) == 0 && rarest != "" {
		out = append(out, rarest)
	}
	return out
}

// conceptOf locates the last word of a concept phrase.
func conceptOf(name string) (conceptPhrase, bool) {
	head := -1
	i := 0
	for i < len(name) {
		r, n := utf8.DecodeRuneInString(name[i:])
		if unicode.IsLetter(r) && (i == 0 || !isLetterBefore(name, i)) {
			head = i
		}
		i += n
	}
	if head <= 0 {
		return conceptPhrase{}, false // a one-word phrase: nothing before it to anchor on
	}
	return conceptPhrase{surface: name, head: head}, true
}

func isLetterBefore(s string, i int) bool {
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return unicode.IsLetter(r)
}

// isAcronym is the offline extractor's acronym: 2–6 letters, all capitals.
func isAcronym(w string) bool {
	n := utf8.RuneCountInString(w)
	return n >= 2 && n <= 6 && strings.ToUpper(w) == w
}

// letterRuns calls fn with every maximal run of letters of s.
func letterRuns(s string, fn func(string)) {
	start := -1
	for i, r := range s {
		if unicode.IsLetter(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			fn(s[start:i])
			start = -1
		}
	}
	if start >= 0 {
		fn(s[start:])
	}
}

// Syllables of pseudo-words: consonant + vowel.
const (
	pseudoConsonants = "bdfgklmnprstvz"
	pseudoVowels     = "aeiou"
	pseudoSyllables  = len(pseudoConsonants) * len(pseudoVowels)
	maxCopies        = pseudoSyllables * pseudoSyllables // two syllables name the copy
)

func appendSyllable(b []byte, v int) []byte {
	return append(b, pseudoConsonants[v/len(pseudoVowels)], pseudoVowels[v%len(pseudoVowels)])
}

// pseudoWord is the code of word index idx in copy k (k ≥ 1): two syllables for k, then
// idx in bijective base-70 (1 syllable for the first 70 indexes, 2 for the next 4,900,
// ...), so that distinct (k, idx) give distinct words. A code that spells a word of the
// base corpus gets an "x" (odd length, so it cannot equal another code).
func (rc *realCorpus) pseudoWord(k, idx int) string {
	b := make([]byte, 0, 12)
	b = appendSyllable(b, k/pseudoSyllables)
	b = appendSyllable(b, k%pseudoSyllables)
	var rest []byte
	for n := idx + 1; n > 0; n = (n - 1) / pseudoSyllables {
		rest = appendSyllable(rest, (n-1)%pseudoSyllables)
	}
	for i := len(rest) - 2; i >= 0; i -= 2 { // most significant syllable first
		b = append(b, rest[i], rest[i+1])
	}
	if rc.vocab[string(b)] {
		b = append(b, 'x')
	}
	return string(b)
}

// pseudoAcronym is a 6-letter acronym for acronym index idx in copy k, starting with Q.
func (rc *realCorpus) pseudoAcronym(k, idx int) string {
	v := (k-1)*len(rc.acronyms) + idx
	b := []byte("Q00000")
	for i := 5; i >= 1; i-- {
		b[i] = byte('A' + v%26)
		v /= 26
	}
	return string(b)
}

// rewrite applies copy k's substitution to the text of document doc (-1: a question or
// a title, where only the name words are rewritten). Inside a concept phrase only its
// last word is rewritten: "Demon algorithm" opening a sentence stays a concept even
// where "Demon" is a name word ("Blue Demon") elsewhere.
func (rc *realCorpus) rewrite(k, doc int, s string) string {
	if k == 0 {
		return s
	}
	var spans []conceptSpan
	if doc >= 0 {
		spans = findConcepts(s, rc.concepts[doc])
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	last, sp := 0, 0
	letterRunsAt(s, func(start, end int) {
		for sp < len(spans) && spans[sp].end <= start {
			sp++
		}
		var repl string
		w := s[start:end]
		if sp < len(spans) && spans[sp].start <= start {
			if start != spans[sp].head {
				return // a word of a concept phrase before its last one
			}
			repl = rc.pseudoWord(k, spans[sp].code)
		} else if i, ok := rc.words[w]; ok {
			repl = rc.pseudoWord(k, i)
			repl = strings.ToUpper(repl[:1]) + repl[1:]
		} else if i, ok := rc.acronyms[w]; ok {
			repl = rc.pseudoAcronym(k, i)
		} else {
			return
		}
		b.WriteString(s[last:start])
		b.WriteString(repl)
		last = end
	})
	b.WriteString(s[last:])
	return b.String()
}

// conceptSpan is one occurrence of a concept phrase in a text.
type conceptSpan struct{ start, head, end, code int }

// findConcepts returns the whole-word occurrences of the phrases in s, sorted and not
// overlapping (phrases come longest first, so a longer phrase wins).
func findConcepts(s string, phrases []conceptPhrase) []conceptSpan {
	var out []conceptSpan
	for _, cp := range phrases {
		for off := 0; ; {
			i := strings.Index(s[off:], cp.surface)
			if i < 0 {
				break
			}
			start, end := off+i, off+i+len(cp.surface)
			off = end
			if (start > 0 && isLetterBefore(s, start)) || (end < len(s) && startsWithLetter(s[end:])) {
				continue
			}
			overlaps := slices.ContainsFunc(out, func(o conceptSpan) bool { return start < o.end && o.start < end })
			if !overlaps {
				out = append(out, conceptSpan{start: start, head: start + cp.head, end: end, code: cp.code})
			}
		}
	}
	slices.SortFunc(out, func(a, b conceptSpan) int { return a.start - b.start })
	return out
}

func letterRunsAt(s string, fn func(start, end int)) {
	start := -1
	for i, r := range s {
		if unicode.IsLetter(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			fn(start, i)
			start = -1
		}
	}
	if start >= 0 {
		fn(start, len(s))
	}
}

func startsWithLetter(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r)
}

// copies is how many copies make n documents.
func (rc *realCorpus) copies(n int) int { return (n + len(rc.docs) - 1) / len(rc.docs) }

// doc is document i of the scaled corpus: document i mod len(docs) of copy i / len(docs).
func (rc *realCorpus) doc(i int) realDoc {
	k, j := i/len(rc.docs), i%len(rc.docs)
	d := rc.docs[j]
	if k == 0 {
		return d
	}
	return realDoc{ID: d.ID + "-k" + strconv.Itoa(k), Title: rc.rewrite(k, -1, d.Title), Text: rc.rewrite(k, j, d.Text)}
}

// question is question i of copy k, with its gold ids in that copy.
func (rc *realCorpus) question(k, i int) realQuestion {
	q := rc.questions[i]
	if k == 0 {
		return q
	}
	out := realQuestion{ID: q.ID + "-k" + strconv.Itoa(k), Question: rc.rewrite(k, -1, q.Question), Answer: rc.rewrite(k, -1, q.Answer)}
	for _, g := range q.Gold {
		out.Gold = append(out.Gold, g+"-k"+strconv.Itoa(k))
	}
	return out
}

// sampleQuestions spreads n questions over the copies of a corpus of docs documents:
// question i is base question i mod len(questions), asked of copy i mod copies. A
// question whose gold passages are not all in the corpus (a partial last copy) is asked
// of the first copy instead.
func (rc *realCorpus) sampleQuestions(docs, n int) []realQuestion {
	copies := max(rc.copies(docs), 1)
	out := make([]realQuestion, 0, n)
	for i := range n {
		k, j := i%copies, i%len(rc.questions)
		for _, g := range rc.questions[j].Gold {
			if pos, ok := rc.index[g]; !ok || k*len(rc.docs)+pos >= docs {
				k = 0
			}
		}
		out = append(out, rc.question(k, j))
	}
	return out
}
