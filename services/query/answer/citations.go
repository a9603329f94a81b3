package answer

import (
	"strconv"
	"strings"
)

// renumberer rewrites the citation markers of an answer so that they count up in order
// of first use ([1] first, then [2], no gap), whatever numbers the passages had in the
// prompt: a model (or the extractive answer) cites the passages it chose, in the order it
// chose them, and "[4] … [1]" reads as if sources were missing. A marker that names no
// source (n outside 1..sources) is dropped: it cites nothing, and left as it is it would
// collide with a renumbered one.
//
// It works on a stream: write takes the answer piece by piece as a model generates it and
// returns the text that can be passed on; a marker split across pieces is held back until
// it closes. flush returns what is held back at the end. So a streamed answer and the
// final one are the same text.
type renumberer struct {
	sources int
	to      map[int]int // source number -> marker in the answer
	order   []int       // source numbers in order of first use
	held    strings.Builder
	out     strings.Builder
}

// maxMarkerLen bounds a held-back "[digits": longer is not a marker.
const maxMarkerLen = 8

func newRenumberer(sources int) *renumberer {
	return &renumberer{sources: sources, to: map[int]int{}}
}

// write renumbers the markers in s, returning the text ready to be passed on.
func (r *renumberer) write(s string) string {
	start := r.out.Len()
	for _, c := range s {
		if r.held.Len() == 0 {
			if c == '[' {
				r.held.WriteRune(c)
			} else {
				r.out.WriteRune(c)
			}
			continue
		}
		switch {
		case c >= '0' && c <= '9' && r.held.Len() < maxMarkerLen:
			r.held.WriteRune(c)
		case c == ']' && r.held.Len() > 1:
			r.marker(r.held.String()[1:])
			r.held.Reset()
		default:
			// Not a marker: pass the held text on; a '[' may open the next one.
			r.out.WriteString(r.held.String())
			r.held.Reset()
			if c == '[' {
				r.held.WriteRune(c)
			} else {
				r.out.WriteRune(c)
			}
		}
	}
	return r.out.String()[start:]
}

// marker writes the renumbered marker for source number digits, or nothing when it names
// no source.
func (r *renumberer) marker(digits string) {
	n, err := strconv.Atoi(digits)
	if err != nil || n < 1 || n > r.sources {
		return
	}
	m, ok := r.to[n]
	if !ok {
		r.order = append(r.order, n)
		m = len(r.order)
		r.to[n] = m
	}
	r.out.WriteString("[" + strconv.Itoa(m) + "]")
}

// flush returns the held-back text (an unclosed "[12" at the very end).
func (r *renumberer) flush() string {
	s := r.held.String()
	r.held.Reset()
	r.out.WriteString(s)
	return s
}

// text is everything written so far, renumbered.
func (r *renumberer) text() string { return r.out.String() }

// renumber renumbers a whole answer; it returns the answer and the source numbers (1-based)
// in the order of their new markers.
func renumber(answer string, sources int) (string, []int) {
	r := newRenumberer(sources)
	r.write(answer)
	r.flush()
	return r.text(), r.order
}
