package words

import (
	"math"
	"strings"
	"unicode"
)

// Set returns the whitespace-separated words of list as a set.
func Set(list string) map[string]bool {
	m := map[string]bool{}
	for w := range strings.FieldsSeq(list) {
		m[w] = true
	}
	return m
}

// Split splits a question into words, keeping inner apostrophes, hyphens, periods and
// ampersands ("O'Neill", "T-Rex", "U.S.", "AT&T").
func Split(q string) []string {
	return strings.FieldsFunc(q, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '-' && r != '.' && r != '&'
	})
}

// Stop holds the lower-case words of a question that name nothing: question words,
// function words, and a few that questions use to ask ("named", "known").
var Stop = Set(`what which who whom whose when where why how is are was were be been being do does did
		the a an of and or in on at to for from by with about as into than then that this these those it its
		there their they them he she his her him i you we our your my me not no yes both either neither same
		same one first also many much more most other such can could would should will shall may might
		between among during before after since until while name named called known`)

// Connectors may join capitalized words inside a name ("University of Oxford",
// "Leonardo da Vinci"), never start or end one: the offline extractor's list.
var Connectors = Set(`of the de da di del della der den des du la le van von y dos das bin ibn al el`)

// IsAnswerConnector is the shorter list the extractive answers read names with (an
// option of a choice question, a person's name): of, the, and, de, von. It differs from
// Connectors ("and" joins two names of a choice; "da", "van" and the rest are missing)
// and is kept as it is: the answers on the development sets were measured with it.
func IsAnswerConnector(w string) bool {
	return w == "of" || w == "the" || w == "and" || w == "de" || w == "von"
}

// Terms returns the content words of a text, lower-cased and stemmed (LightStem), each
// weighted by its length: longer words are usually rarer and more telling.
func Terms(text string) map[string]float64 {
	out := map[string]float64{}
	for _, w := range Split(strings.ToLower(text)) {
		w = strings.Trim(w, ".'-")
		if len(w) < 2 || Stop[w] {
			continue
		}
		out[LightStem(w)] = math.Log(1 + float64(len(w)))
	}
	return out
}

// Overlap sums the weights of the terms s holds, each once, in s's word order.
func Overlap(terms map[string]float64, s string) float64 {
	sc := 0.0
	for _, w := range DistinctStems(s) {
		if v, ok := terms[w]; ok {
			sc += v
		}
	}
	return sc
}

// DistinctStems returns the stems of s's words (as Overlap reads them), each once, in
// the order they first occur.
func DistinctStems(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range Split(strings.ToLower(s)) {
		if w = LightStem(strings.Trim(w, ".'-")); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}
