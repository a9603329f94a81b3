package words

import "strings"

// Stem strips a few English suffixes from a lower-case word ("films" →
// "film", "studies" and "study" → "studi", "running" → "runn", "directed" → "direct").
// It is deliberately light: it only has to make inflections of a word meet,
// not produce dictionary forms. Words of 4 runes or fewer are left alone. The offline
// embedder (pkg/hashembed) hashes these stems.
func Stem(w string) string {
	if len([]rune(w)) <= 4 {
		return w
	}
	for _, r := range []struct{ suf, repl string }{
		{"ies", "i"}, {"sses", "ss"}, {"ing", ""}, {"edly", ""}, {"ed", ""},
		{"ly", ""}, {"es", ""}, {"s", ""}, {"y", "i"},
	} {
		if strings.HasSuffix(w, r.suf) {
			if r.suf == "s" && (strings.HasSuffix(w, "ss") || strings.HasSuffix(w, "us") || strings.HasSuffix(w, "is")) {
				return w
			}
			if r.suf == "es" && !strings.HasSuffix(w, "ches") && !strings.HasSuffix(w, "shes") && !strings.HasSuffix(w, "xes") && !strings.HasSuffix(w, "sses") {
				continue // "games" → "game" by the "s" rule below
			}
			stem := w[:len(w)-len(r.suf)] + r.repl
			if len([]rune(stem)) >= 3 {
				return stem
			}
		}
	}
	return w
}

// LightStem strips the commonest English inflections and derivations so that a
// question's "keeps" meets a passage's "keeper": crude, but the same on both sides.
// Unlike Stem it strips "er" and "ers" and keeps a "y".
func LightStem(w string) string {
	for _, suf := range []string{"ings", "ing", "ers", "er", "ed", "es", "s"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 3 {
			return strings.TrimSuffix(w, suf)
		}
	}
	return w
}

// PrefixStem cuts a word to a prefix that its inflections share ("directed",
// "director" → "direct"): crude, but the same on both sides of a comparison. A stem
// matches as a prefix of a word (" "+stem in a normalized sentence).
func PrefixStem(w string) string {
	r := []rune(w)
	if len(r) > 6 {
		return string(r[:6])
	}
	return w
}
