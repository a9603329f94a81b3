package chunking

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/graphrag/graphrag/pkg/errkind"
	"github.com/graphrag/graphrag/pkg/textseg"
	"github.com/tiktoken-go/tokenizer"
)

// Defaults of the options.
const (
	DefaultSize      = 600
	DefaultOverlap   = 100
	DefaultMinTokens = 16
)

// Errors Split returns; callers branch on them with errors.Is.
var (
	// ErrEmpty: the text is empty or white space only.
	ErrEmpty = errkind.New(errkind.Invalid, "chunking: empty text")
	// ErrInvalidUTF8: the text is not valid UTF-8 (Split returns an
	// *InvalidUTF8Error, which matches it with errors.Is).
	ErrInvalidUTF8 = errkind.New(errkind.Invalid, "chunking: invalid UTF-8")
	// ErrNoDocumentID: the document id is empty, so chunk ids would not be unique.
	ErrNoDocumentID = errkind.New(errkind.Invalid, "chunking: empty document id")
	// ErrInvalidOption: an option is out of range.
	ErrInvalidOption = errkind.New(errkind.Invalid, "chunking: invalid option")
)

// InvalidUTF8Error reports where a text stops being valid UTF-8.
type InvalidUTF8Error struct {
	Offset int // byte offset of the first invalid sequence
}

func (e *InvalidUTF8Error) Error() string {
	return fmt.Sprintf("chunking: invalid UTF-8 at byte %d", e.Offset)
}

// Is makes errors.Is(err, ErrInvalidUTF8) true.
func (e *InvalidUTF8Error) Is(target error) bool { return target == ErrInvalidUTF8 }

// ErrorKind is ErrInvalidUTF8's kind, errkind.Invalid.
func (e *InvalidUTF8Error) ErrorKind() errkind.Kind { return errkind.Invalid }

func invalidOffset(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return i
			}
		}
	}
	return len(s)
}

// Chunk is one piece of a document. Text is exactly source[Start:End].
type Chunk struct {
	ID          string // <documentID>:<Position>:<first 12 hex of sha256(Text)>
	Position    int    // 0-based index of the chunk in the document
	Text        string
	Section     string // heading path, e.g. "Guide > Install"; "" before any heading
	Tokens      int    // cl100k_base tokens in Text
	Start, End  int    // byte offsets in the source
	ContentHash string // hex sha256 of Text
}

type config struct {
	size, overlap, minTokens int
}

// Option configures Split.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithSize sets the largest chunk in tokens (default 600).
func WithSize(tokens int) Option { return optionFunc(func(c *config) { c.size = tokens }) }

// WithOverlap sets how many tokens of whole sentences a chunk repeats from the
// previous chunk of the same section (default 100; 0 disables overlap).
func WithOverlap(tokens int) Option { return optionFunc(func(c *config) { c.overlap = tokens }) }

// WithMinTokens sets the size below which a chunk is merged into a neighbour
// when the merged chunk still fits (default 16; 0 disables merging).
func WithMinTokens(tokens int) Option { return optionFunc(func(c *config) { c.minTokens = tokens }) }

var (
	// tokenizedBytes counts the bytes given to the tokenizer, so that tests can
	// bound the work of Split without timing it.
	tokenizedBytes atomic.Int64

	codecOnce sync.Once
	codec     tokenizer.Codec
	codecErr  error
)

func loadCodec() error {
	codecOnce.Do(func() { codec, codecErr = tokenizer.Get(tokenizer.Cl100kBase) })
	if codecErr != nil {
		return fmt.Errorf("loading cl100k_base tokenizer: %w", codecErr)
	}
	return nil
}

// CountTokens returns the number of cl100k_base tokens in s.
func CountTokens(s string) (int, error) {
	if err := loadCodec(); err != nil {
		return 0, err
	}
	tokenizedBytes.Add(int64(len(s)))
	n, err := codec.Count(s)
	if err != nil {
		return 0, fmt.Errorf("counting tokens: %w", err)
	}
	return n, nil
}

// Split cuts text into chunks (see the package doc for the rules).
func Split(documentID, text string, opts ...Option) ([]Chunk, error) {
	cfg := config{size: DefaultSize, overlap: DefaultOverlap, minTokens: DefaultMinTokens}
	for _, o := range opts {
		o.apply(&cfg)
	}
	switch {
	case documentID == "":
		return nil, ErrNoDocumentID
	case cfg.size < 1:
		return nil, fmt.Errorf("%w: size %d < 1", ErrInvalidOption, cfg.size)
	case cfg.overlap < 0 || cfg.overlap >= cfg.size:
		return nil, fmt.Errorf("%w: overlap %d not in [0, size %d)", ErrInvalidOption, cfg.overlap, cfg.size)
	case cfg.minTokens < 0 || cfg.minTokens > cfg.size:
		return nil, fmt.Errorf("%w: min tokens %d not in [0, size %d]", ErrInvalidOption, cfg.minTokens, cfg.size)
	case !utf8.ValidString(text):
		return nil, &InvalidUTF8Error{Offset: invalidOffset(text)}
	case strings.TrimSpace(text) == "":
		return nil, ErrEmpty
	}
	s := splitter{cfg: cfg, text: text}
	var raw []rawChunk
	for _, sec := range sections(text) {
		cs, err := s.section(sec)
		if err != nil {
			return nil, fmt.Errorf("splitting section %q of %s: %w", sec.path, documentID, err)
		}
		raw = append(raw, cs...)
	}
	raw, err := s.mergeSmall(raw)
	if err != nil {
		return nil, fmt.Errorf("merging small chunks of %s: %w", documentID, err)
	}
	out := make([]Chunk, len(raw))
	for i, r := range raw {
		t := text[r.start:r.end]
		sum := sha256.Sum256([]byte(t))
		h := hex.EncodeToString(sum[:])
		out[i] = Chunk{
			ID:          fmt.Sprintf("%s:%d:%s", documentID, i, h[:12]),
			Position:    i,
			Text:        t,
			Section:     r.section,
			Tokens:      r.tokens,
			Start:       r.start,
			End:         r.end,
			ContentHash: h,
		}
	}
	return out, nil
}

type section struct {
	start, end int
	path       string
}

// sections cuts text at ATX headings outside fenced code blocks. A section
// starts at its heading line and runs to the next heading.
func sections(text string) []section {
	var (
		out     []section
		stack   []string // stack[i] is the heading of level i+1
		fence   string
		cur     = section{start: 0}
		started bool
	)
	for pos := 0; pos < len(text); {
		nl := strings.IndexByte(text[pos:], '\n')
		lineEnd := len(text)
		if nl >= 0 {
			lineEnd = pos + nl
		}
		line := text[pos:lineEnd]
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		switch {
		case fence != "":
			if strings.HasPrefix(strings.TrimSpace(line), fence) {
				fence = ""
			}
		case indent < 4 && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence = trimmed[:3]
		case indent < 4:
			if level, title, ok := heading(trimmed); ok {
				if started || strings.TrimSpace(text[cur.start:pos]) != "" {
					cur.end = pos
					out = append(out, cur)
				}
				if level <= len(stack) {
					stack = stack[:level-1]
				}
				for len(stack) < level-1 {
					stack = append(stack, "")
				}
				stack = append(stack, title)
				cur = section{start: pos, path: joinPath(stack)}
				started = true
			}
		}
		pos = lineEnd + 1
	}
	cur.end = len(text)
	return append(out, cur)
}

func joinPath(stack []string) string {
	parts := make([]string, 0, len(stack))
	for _, s := range stack {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " > ")
}

// heading parses an ATX heading line ("## Install ##") into level and title.
func heading(line string) (int, string, bool) {
	level := 0
	for level < len(line) && line[level] == '#' {
		level++
	}
	if level == 0 || level > 6 {
		return 0, "", false
	}
	rest := line[level:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' && rest[0] != '\r' {
		return 0, "", false // "#hashtag" is not a heading
	}
	title := strings.TrimSpace(rest)
	if t := strings.TrimRight(title, "#"); t == "" || strings.HasSuffix(t, " ") {
		title = strings.TrimSpace(t) // closing sequence "## Title ##"
	}
	return level, title, true
}

type piece struct {
	start, end int
	tokens     int
	paraStart  bool // first piece of a paragraph: a preferred cut point
	cont       bool // continues the sentence of the previous piece
}

type rawChunk struct {
	start, end int
	tokens     int
	section    string
}

type splitter struct {
	cfg  config
	text string
	// bytesPerToken of the last piece cut inside a word: how far cutInWord
	// encodes ahead.
	bytesPerToken float64
}

func (s *splitter) count(start, end int) (int, error) { return CountTokens(s.text[start:end]) }

// pieces lists the sentences of a section (oversized ones cut further), with
// paragraph starts marked.
func (s *splitter) pieces(sec section) ([]piece, error) {
	var out []piece
	for _, para := range paragraphs(s.text, sec.start, sec.end) {
		first := true
		for _, sp := range textseg.Sentences(s.text[para.Start:para.End]) {
			start, end := para.Start+sp.Start, para.Start+sp.End
			n, counter, err := s.countSentence(start, end)
			if err != nil {
				return nil, err
			}
			if n <= s.cfg.size {
				out = append(out, piece{start: start, end: end, tokens: n, paraStart: first})
				first = false
				continue
			}
			parts, err := s.cutSentence(start, end, counter)
			if err != nil {
				return nil, err
			}
			parts[0].paraStart = first
			for k := 1; k < len(parts); k++ {
				parts[k].cont = true
			}
			first = false
			out = append(out, parts...)
		}
	}
	return out, nil
}

// paragraphs cuts [start, end) at blank lines.
func paragraphs(text string, start, end int) []textseg.Span {
	var out []textseg.Span
	pStart := start
	for pos := start; pos < end; {
		nl := strings.IndexByte(text[pos:end], '\n')
		if nl < 0 {
			break
		}
		lineStart := pos + nl + 1
		lineEnd := end
		if k := strings.IndexByte(text[lineStart:end], '\n'); k >= 0 {
			lineEnd = lineStart + k
		}
		if strings.TrimSpace(text[lineStart:lineEnd]) == "" {
			if strings.TrimSpace(text[pStart:lineStart]) != "" {
				out = append(out, textseg.Span{Start: pStart, End: lineStart})
			}
			pStart = lineEnd
		}
		pos = lineStart
		if lineEnd == end {
			break
		}
	}
	if strings.TrimSpace(text[pStart:end]) != "" {
		out = append(out, textseg.Span{Start: pStart, End: end})
	}
	return out
}

// countSentence returns the tokens of the sentence text[start:end], or
// size+1 when its bytes alone prove it larger than the size (a long line
// need not be counted whole to be cut). A sentence longer than the size in
// bytes may have to be cut: it is counted by a spanCounter, returned for
// cutSentence to reuse.
func (s *splitter) countSentence(start, end int) (int, *spanCounter, error) {
	if leastTokens(end-start) > s.cfg.size {
		return s.cfg.size + 1, nil, nil
	}
	if end-start <= s.cfg.size {
		n, err := s.count(start, end)
		return n, nil, err
	}
	c := newSpanCounter(s.text, start, end)
	n, err := c.count(start, end)
	return n, c, err
}

// cutSentence cuts a sentence larger than the chunk size between words, and
// inside a word only when the word alone is larger than the size. Each cut
// between words is the longest prefix that fits, found by binary search over
// the word ends (token counts grow with the prefix; every accepted count is
// exact); a cut inside a word is the longest run of whole tokens that fits.
func (s *splitter) cutSentence(start, end int, counter *spanCounter) ([]piece, error) {
	if counter == nil {
		counter = newSpanCounter(s.text, start, end)
	}
	// A token is rarely longer than 32 bytes: look no further than that for
	// the end of a piece, so that counting stays linear in the sentence.
	window := 32 * s.cfg.size
	ends := wordEnds(s.text, start, end)
	var out []piece
	for pos := start; pos < end; pos = skipSpace(s.text, pos, end) {
		limit := min(end, pos+window)
		bounds := boundsIn(s.text, ends, pos, limit)
		if limit == end {
			bounds = append(bounds, end)
		}
		cut, n, err := s.cutPiece(counter, pos, limit, bounds)
		if err != nil {
			return nil, err
		}
		out = append(out, piece{start: pos, end: cut, tokens: n})
		pos = cut
	}
	return out, nil
}

// cutPiece returns the end and token count of the piece of a long sentence
// that starts at pos: the longest run of words that fits, or, when the first
// word alone is larger than the size, the longest run of its tokens.
func (s *splitter) cutPiece(counter *spanCounter, pos, limit int, bounds []int) (int, int, error) {
	// A word of at most size bytes fits (a token has at least one byte). A
	// longer one is tried between tokens first, so that a long line is not
	// counted over and over by the search between words.
	if len(bounds) == 0 || bounds[0]-pos > s.cfg.size {
		cut, n, err := s.cutInWord(pos, limit)
		if err != nil || len(bounds) == 0 || cut < bounds[0] {
			return cut, n, err
		}
	}
	cut, n, err := s.longestFit(counter, pos, bounds)
	if err != nil || cut >= 0 {
		return cut, n, err
	}
	return s.cutInWord(pos, limit) // the first word is larger than the size
}

// wordEnds lists where white space starts after a word in (start, end).
func wordEnds(text string, start, end int) []int {
	var out []int
	for i, r := range text[start:end] {
		if i > 0 && unicode.IsSpace(r) && !unicode.IsSpace(prevRune(text, start+i)) {
			out = append(out, start+i)
		}
	}
	return out
}

// boundsIn returns the word ends in (pos, limit) whose white space rune lies
// wholly before limit, in a new slice.
func boundsIn(text string, ends []int, pos, limit int) []int {
	lo := sort.SearchInts(ends, pos+1)
	hi := sort.SearchInts(ends, limit)
	for hi > lo {
		_, size := utf8.DecodeRuneInString(text[ends[hi-1]:])
		if ends[hi-1]+size <= limit {
			break
		}
		hi--
	}
	return append([]int(nil), ends[lo:hi]...)
}

// longestFit returns the last of the ascending ends whose span from start
// fits the size, and its token count; -1 when none fits.
func (s *splitter) longestFit(c *spanCounter, start int, ends []int) (int, int, error) {
	lo, hi := 0, len(ends)-1
	best, bestN := -1, 0
	for lo <= hi {
		mid := (lo + hi) / 2
		n, err := c.count(start, ends[mid])
		if err != nil {
			return 0, 0, err
		}
		if n <= s.cfg.size {
			best, bestN = ends[mid], n
			lo = mid + 1
		} else {
			hi = mid - 1
		}
	}
	return best, bestN, nil
}

func prevRune(text string, i int) rune {
	r, _ := utf8.DecodeLastRuneInString(text[:i])
	return r
}

func skipSpace(text string, pos, end int) int {
	for pos < end {
		r, size := utf8.DecodeRuneInString(text[pos:])
		if !unicode.IsSpace(r) {
			break
		}
		pos += size
	}
	return pos
}

// section packs the pieces of one section into chunks.
func (s *splitter) section(sec section) ([]rawChunk, error) {
	ps, err := s.pieces(sec)
	if err != nil {
		return nil, err
	}
	var out []rawChunk
	for i := 0; i < len(ps); {
		firstNew := i // the first piece not repeated from the previous chunk
		if len(out) > 0 {
			i = s.overlapStart(ps, i)
		}
		for {
			j := s.pack(ps, i, firstNew)
			n, err := s.chunkTokens(ps, i, j)
			if err != nil {
				return nil, err
			}
			// Joins can cost a token more than the pieces: drop pieces from
			// the end while the exact count is over, keeping one new piece.
			for n > s.cfg.size && j-1 > firstNew {
				j--
				if n, err = s.count(ps[i].start, ps[j-1].end); err != nil {
					return nil, err
				}
			}
			if n > s.cfg.size && i < firstNew {
				i = firstNew // the overlap does not fit with even one new piece
				continue
			}
			out = append(out, rawChunk{start: ps[i].start, end: ps[j-1].end, tokens: n, section: sec.path})
			i = j
			break
		}
	}
	return out, nil
}

// chunkTokens counts the tokens of pieces i..j-1 joined; one piece's count is
// already exact.
func (s *splitter) chunkTokens(ps []piece, i, j int) (int, error) {
	if j == i+1 {
		return ps[i].tokens, nil
	}
	return s.count(ps[i].start, ps[j-1].end)
}

// pack returns the end (exclusive) of the chunk that starts at piece i: as
// many pieces as fit, cut back to a paragraph start when one lies in the
// second half of the chunk. At least one piece after firstNew is taken.
func (s *splitter) pack(ps []piece, i, firstNew int) int {
	total := ps[i].tokens
	j := i + 1
	for j < len(ps) && (j <= firstNew || total+ps[j].tokens <= s.cfg.size) {
		total += ps[j].tokens
		j++
	}
	if j == len(ps) {
		return j
	}
	acc := 0
	best := j
	for k := i; k < j; k++ {
		if k > firstNew && ps[k].paraStart && acc >= total/2 {
			best = k
		}
		acc += ps[k].tokens
	}
	return best
}

// overlapStart returns the first piece of the chunk after the one that ended
// before piece next: whole sentences of the previous chunk, going back while
// they fit the overlap budget and leave room for the next piece.
func (s *splitter) overlapStart(ps []piece, next int) int {
	if s.cfg.overlap == 0 || next == 0 {
		return next
	}
	start, acc := next, 0
	for m := next - 1; m >= 0; m-- {
		if acc+ps[m].tokens > s.cfg.overlap || acc+ps[m].tokens+ps[next].tokens > s.cfg.size {
			break
		}
		if ps[m].cont || ps[m+1].cont {
			break // part of a cut sentence, not a whole sentence
		}
		acc += ps[m].tokens
		start = m
	}
	return start
}

// mergeSmall merges a chunk smaller than the minimum with its neighbour when
// the two still fit. A small chunk before a larger one gives its text to the
// later chunk's section (a heading line followed by its subsection).
func (s *splitter) mergeSmall(cs []rawChunk) ([]rawChunk, error) {
	if s.cfg.minTokens == 0 {
		return cs, nil
	}
	var out []rawChunk
	for _, c := range cs {
		if k := len(out) - 1; k >= 0 && (out[k].tokens < s.cfg.minTokens || c.tokens < s.cfg.minTokens) {
			n, err := s.count(out[k].start, c.end)
			if err != nil {
				return nil, err
			}
			if n <= s.cfg.size {
				sec := out[k].section
				if out[k].tokens < s.cfg.minTokens && c.tokens >= s.cfg.minTokens {
					sec = c.section
				}
				out[k] = rawChunk{start: out[k].start, end: c.end, tokens: n, section: sec}
				continue
			}
		}
		out = append(out, c)
	}
	return out, nil
}
