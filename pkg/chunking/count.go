package chunking

import (
	"fmt"
	"sort"
	"unicode"
	"unicode/utf8"
)

// Counting the tokens of a span costs time linear in the span, so the
// splitter must not count the same bytes again and again while it searches
// for the longest piece that fits. Two properties of cl100k_base make counts
// reusable without changing any of them:
//
//   - Split points. The tokenizer first cuts text into pre-tokens with a
//     regular expression and encodes each one separately. An ASCII space
//     between two characters that are not white space always starts a
//     pre-token, and nothing before it depends on what follows it, so the
//     tokens of a span are the tokens before such a point plus the tokens
//     from it (TestSplitPointsAdditive checks this on every fixture).
//   - Prefixes. Byte-pair encoding merges the lowest-ranked pair first, the
//     leftmost among equals, so it never merges across a boundary that
//     survives to the end: a prefix ending at a token boundary is encoded
//     exactly as the tokens before that boundary. (The one exception, a
//     pre-token that is itself in the vocabulary and is looked up whole, is
//     handled by exactPrefix.)

// maxTokenBytes is the length of cl100k_base's longest token
// (TestMaxTokenBytes): a text of n bytes has at least n/maxTokenBytes tokens.
const maxTokenBytes = 128

// leastTokens is a lower bound on the tokens of a text of n bytes.
func leastTokens(n int) int { return (n + maxTokenBytes - 1) / maxTokenBytes }

// encodeLengths returns the byte length of each token of s.
func encodeLengths(s string) ([]int, error) {
	if err := loadCodec(); err != nil {
		return nil, err
	}
	tokenizedBytes.Add(int64(len(s)))
	_, toks, err := codec.Encode(s)
	if err != nil {
		return nil, fmt.Errorf("encoding tokens: %w", err)
	}
	lens := make([]int, len(toks))
	for i, t := range toks {
		lens[i] = len(t)
	}
	return lens, nil
}

// isSplitPoint reports whether text[p] is an ASCII space between two
// characters that are not white space, within [start, end).
func isSplitPoint(text string, start, end, p int) bool {
	if p <= start || p+1 >= end || text[p] != ' ' {
		return false
	}
	before, _ := utf8.DecodeLastRuneInString(text[start:p])
	after, _ := utf8.DecodeRuneInString(text[p+1 : end])
	return !unicode.IsSpace(before) && !unicode.IsSpace(after)
}

// spanCounter counts tokens of spans of text[start:end] (one sentence) and
// remembers the counts between split points, so that the many counts of a
// search for the longest fitting piece cost about one pass over the
// sentence in all.
type spanCounter struct {
	text   string
	points []int // start, the split points, end: ascending
	// cum[k]: tokens of text[points[base]:points[base+k]]. The counts start
	// at the first point a count needs (the splitter moves forward only).
	base  int
	cum   []int
	heads map[[2]int]int
}

// blockBytes is how much text spanCounter encodes at once.
const blockBytes = 8192

func newSpanCounter(text string, start, end int) *spanCounter {
	points := []int{start}
	for p := start + 1; p < end-1; p++ {
		if text[p] == ' ' && isSplitPoint(text, start, end, p) {
			points = append(points, p)
		}
	}
	points = append(points, end)
	return &spanCounter{text: text, points: points, base: -1, heads: map[[2]int]int{}}
}

// between returns the tokens of text[points[i]:points[j]], i < j, encoding
// blocks of split points at once and remembering their counts.
func (c *spanCounter) between(i, j int) (int, error) {
	if c.base < 0 {
		c.base, c.cum = i, []int{0}
	}
	if i < c.base {
		return CountTokens(c.text[c.points[i]:c.points[j]])
	}
	for c.base+len(c.cum) <= j {
		m := c.base + len(c.cum) - 1
		hi := m + 1
		for hi < len(c.points)-1 && c.points[hi]-c.points[m] < blockBytes {
			hi++
		}
		lens, err := encodeLengths(c.text[c.points[m]:c.points[hi]])
		if err != nil {
			return 0, err
		}
		if !c.assign(m, hi, lens) {
			// A token crossed a split point, which cl100k_base never does; count
			// the spans one by one rather than trust the block.
			c.cum = c.cum[:m-c.base+1]
			for x := m + 1; x <= hi; x++ {
				n, err := CountTokens(c.text[c.points[x-1]:c.points[x]])
				if err != nil {
					return 0, err
				}
				c.cum = append(c.cum, c.cum[len(c.cum)-1]+n)
			}
		}
	}
	return c.cum[j-c.base] - c.cum[i-c.base], nil
}

// assign appends the counts at points m+1..hi from the token lengths of
// text[points[m]:points[hi]]; false when a token crosses a point.
func (c *spanCounter) assign(m, hi int, lens []int) bool {
	pos, n, x, at := c.points[m], 0, m+1, c.cum[len(c.cum)-1]
	for _, l := range lens {
		pos += l
		n++
		if x <= hi && c.points[x] < pos {
			return false
		}
		if x <= hi && c.points[x] == pos {
			c.cum = append(c.cum, at+n)
			x++
		}
	}
	return x == hi+1
}

// count returns the tokens of text[a:e], start ≤ a < e ≤ end.
func (c *spanCounter) count(a, e int) (int, error) {
	i := sort.SearchInts(c.points, a)       // first point ≥ a
	j := sort.SearchInts(c.points, e+1) - 1 // last point ≤ e
	if i > j {
		return CountTokens(c.text[a:e])
	}
	n := 0
	if i < j {
		var err error
		if n, err = c.between(i, j); err != nil {
			return 0, err
		}
	}
	if a < c.points[i] {
		key := [2]int{a, c.points[i]}
		h, ok := c.heads[key]
		if !ok {
			var err error
			if h, err = CountTokens(c.text[a:c.points[i]]); err != nil {
				return 0, err
			}
			c.heads[key] = h
		}
		n += h
	}
	if e > c.points[j] {
		t, err := CountTokens(c.text[c.points[j]:e])
		if err != nil {
			return 0, err
		}
		n += t
	}
	return n, nil
}

// cutInWord cuts the longest run of whole tokens from pos that fits the
// size, for a piece whose first word alone is larger than the size. One
// window past the expected cut is encoded (its length learned from the
// previous cut), so a long word costs about one pass over its bytes. The cut
// is never past limit and always at a rune boundary; it returns the cut and
// the exact token count of text[pos:cut].
func (s *splitter) cutInWord(pos, limit int) (int, int, error) {
	if s.bytesPerToken == 0 {
		s.bytesPerToken = 4
	}
	for {
		hi := min(limit, pos+int(float64(s.cfg.size+1)*s.bytesPerToken*1.1)+16)
		for hi < limit && !utf8.RuneStart(s.text[hi]) {
			hi--
		}
		lens, err := encodeLengths(s.text[pos:hi])
		if err != nil {
			return 0, 0, err
		}
		if len(lens) <= s.cfg.size && hi == limit {
			return limit, len(lens), nil // the rest fits whole
		}
		if len(lens) <= s.cfg.size {
			s.bytesPerToken *= 2 // the window was too short
			continue
		}
		cut, k, at := pos, 0, pos
		for i, l := range lens[:s.cfg.size] {
			at += l
			if at == limit || utf8.RuneStart(s.text[at]) {
				cut, k = at, i+1 // the last token boundary at a rune boundary
			}
		}
		if k == 0 { // one rune is larger than the size
			_, size := utf8.DecodeRuneInString(s.text[pos:])
			n, err := CountTokens(s.text[pos : pos+size])
			return pos + size, n, err
		}
		s.bytesPerToken = float64(cut-pos) / float64(k)
		n, err := s.exactPrefix(pos, cut, lens[:k])
		return cut, n, err
	}
}

// exactPrefix returns the tokens of text[pos:cut], where lens are the tokens
// of a longer text from pos that end at cut. By the prefix property that is
// len(lens) unless the last pre-token before cut is short enough to be in the
// vocabulary whole (the tokenizer then looks it up instead of merging). When
// it cannot be that short, the count stands; otherwise the tail after the last
// certain pre-token boundary is counted again, or, without one nearby, the
// whole piece.
func (s *splitter) exactPrefix(pos, cut int, lens []int) (int, error) {
	// A letter run is one pre-token (a contraction may take its first two
	// letters): 131 letters before cut make a pre-token too long for a token.
	letters := 0
	for p := cut; p > pos && letters < maxTokenBytes+3; {
		r, size := utf8.DecodeLastRuneInString(s.text[pos:p])
		if !unicode.IsLetter(r) {
			break
		}
		letters += size
		p -= size
	}
	if letters >= maxTokenBytes+3 {
		return len(lens), nil
	}
	// A letter next to a digit is always a pre-token boundary.
	lo := max(pos+1, cut-2*maxTokenBytes)
	for b := cut - 1; b >= lo; b-- {
		x, y := rune(s.text[b-1]), rune(s.text[b])
		if (isASCIILetter(x) && isDigit(y)) || (isDigit(x) && isASCIILetter(y)) {
			before, at := 0, pos
			for _, l := range lens {
				if at >= b {
					break
				}
				at += l
				before++
			}
			if at != b {
				break // not a token boundary after all: count it whole
			}
			tail, err := CountTokens(s.text[b:cut])
			return before + tail, err
		}
	}
	return CountTokens(s.text[pos:cut])
}

func isASCIILetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }
func isDigit(r rune) bool       { return r >= '0' && r <= '9' }
