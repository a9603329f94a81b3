package answer

import (
	"regexp"
	"strings"

	"github.com/graphrag/graphrag/pkg/normalize"
	"github.com/graphrag/graphrag/pkg/offlinextract"
	"github.com/graphrag/graphrag/pkg/textseg"
	"github.com/graphrag/graphrag/pkg/words"
	"github.com/graphrag/graphrag/services/query/evidence"
)

// answerCandidate is a span of a context sentence that may be the answer: a name, a date or a
// number, with the weight of the evidence for it.
type answerCandidate struct {
	text     string
	key      string         // normalize.Name(text)
	score    float64        // the best evidence among its mentions
	sent     answerSentence // the sentence of that mention
	sentText string
}

var (
	headNoun = regexp.MustCompile(`\b(?:what|which) ([a-z]+)\b`)
	dateRE   = regexp.MustCompile(`\b(?:(?:\d{1,2} )?(?:January|February|March|April|May|June|July|August|September|October|November|December)(?: \d{1,2},?)? )?(?:1[0-9]{3}|20[0-9]{2})\b`)
	unitRE   = regexp.MustCompile(`^\s*([a-z]+)`)
)

// The weights of the evidence for a candidate: a question word in the candidate's own
// sentence counts fully, more the nearer it stands; in the sentence before or after,
// neighbourWeight; elsewhere in the passage, passageWeight.
const (
	neighbourWeight = 0.3
	passageWeight   = 0.15
	nearBytes       = 40.0 // a question word this far from the candidate counts 3/4
)

// answerCandidates finds the spans of the scored sentences that could answer a question
// of the given kind and scores each by the question's words around it that it does not
// itself hold (weights: the question's words with their rarity in the context), the
// type it agrees with, and its passage's rank. A span the question names is left out.
// Candidates come best first; a candidate mentioned in several sentences keeps its best.
func answerCandidates(kind, question string, c evidence.Retrieved, sents []answerSentence, weights map[string]float64) ([]answerCandidate, []bool) {
	holds := make([]bool, len(sents))
	qnorm := " " + normalize.Name(question) + " "
	weights = headFirst(question, weights)
	first, bridges, depth := hops(question, qnorm, c, sents)
	head := ""
	if m := headNoun.FindStringSubmatch(strings.ToLower(question)); m != nil && kind == askOther {
		head = words.LightStem(m[1])
	}
	// What each passage holds of the question's words, for the neighbourhood.
	inPassage := map[int]map[string]bool{}
	at := map[[2]int]map[string]float64{} // (chunk, index) → terms
	for _, s := range sents {
		if inPassage[s.chunk] == nil {
			inPassage[s.chunk] = map[string]bool{}
		}
		for t := range s.terms {
			inPassage[s.chunk][t] = true
		}
		at[[2]int{s.chunk, s.index}] = s.terms
	}
	best := map[string]int{}
	var out []answerCandidate
	for si, s := range sents {
		pos := termPositions(s.text, weights)
		for _, sp := range candidateSpans(kind, s.text) {
			name := s.text[sp.start:sp.end]
			key := normalize.Name(name)
			if key == "" || strings.Contains(qnorm, " "+key+" ") {
				continue
			}
			own := map[string]bool{}
			for _, w := range words.DistinctStems(name) {
				own[w] = true
			}
			ev, all, gap := 0.0, 0.0, nearBytes*10
			for t, w := range weights {
				if own[t] {
					continue
				}
				all += w
				switch {
				case len(pos[t]) > 0:
					d := nearBytes * 10
					for _, p := range pos[t] {
						d = min(d, float64(max(sp.start-p, p-sp.end, 0)))
					}
					ev += w * (0.5 + 0.5*nearBytes/(nearBytes+d))
					gap = min(gap, d)
				case at[[2]int{s.chunk, s.index - 1}][t] != 0 || at[[2]int{s.chunk, s.index + 1}][t] != 0:
					ev += w * neighbourWeight
				case inPassage[s.chunk][t]:
					ev += w * passageWeight
				}
			}
			if ev == 0 || all == 0 {
				continue
			}
			if kind != askOther && sp.agree == 1 && gap <= maxAnswerGap {
				holds[si] = true
			}
			agree := sp.agree
			if head != "" && own[head] {
				agree *= 2 // "Which institute …?": the Marine Institute
			}
			sc := ev * agree / (1 + 0.05*float64(s.chunk))
			if !first[s.chunk] && mentionsAny(s.norm, bridges) {
				sc *= 1 + hopBonus
			}
			sc *= 1 + depthBonus*float64(min(depth[s.chunk], 2))
			if i, ok := best[key]; ok {
				if sc > out[i].score {
					out[i].score, out[i].sent, out[i].sentText, out[i].text = sc, s, s.text, name
				}
				continue
			}
			best[key] = len(out)
			out = append(out, answerCandidate{text: name, key: key, score: sc, sent: s, sentText: s.text})
		}
	}
	sortAnswerCandidates(out)
	return out, holds
}

// hops finds the passages of the first hop (those that name an entity the question
// names) and the bridges: the names those passages hold that the question does not.
func hops(question, qnorm string, c evidence.Retrieved, sents []answerSentence) (map[int]bool, map[string]bool, map[int]int) {
	var named []string
	for _, en := range c.Entities {
		if en.Distance == 0 && en.Key != "" && isUpperStart(en.Name) && strings.Contains(question, en.Name) {
			named = append(named, en.Key)
		}
	}
	first := map[int]bool{}
	for _, s := range sents {
		if !first[s.chunk] && mentionsAny(s.norm, setOf(named)) {
			first[s.chunk] = true
		}
	}
	bridges := map[string]bool{}
	for _, s := range sents {
		if !first[s.chunk] {
			continue
		}
		ents, _ := offlinextract.Extract("", s.text, offlinextract.WithNounPhrases(false), offlinextract.WithMaxRelationships(1))
		for _, e := range ents {
			if k := normalize.Name(e.Name); k != "" && !strings.Contains(qnorm, " "+k+" ") {
				bridges[k] = true
			}
		}
	}
	depth := map[int]int{}
	named2 := setOf(named)
	for i, ch := range c.Chunks {
		if len(ch.GraphPath) > 1 && named2[ch.GraphPath[0]] {
			depth[i] = len(ch.GraphPath) - 1
		}
	}
	return first, bridges, depth
}

func setOf(keys []string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// mentionsAny reports whether a normalized sentence (" words ") holds one of the keys.
func mentionsAny(norm string, keys map[string]bool) bool {
	for k := range keys {
		if strings.Contains(norm, " "+k+" ") {
			return true
		}
	}
	return false
}

// A candidate's evidence counts (1+hopBonus) times in a passage past the first hop
// whose sentence names a bridge, and (1+depthBonus) times per step (up to two) of the
// graph path that led retrieval from the question's entity to its passage: the answer
// to a composed question is at its last hop.
const (
	hopBonus   = 1.0
	depthBonus = 1.0
)

func sortAnswerCandidates(c []answerCandidate) {
	// Stable and by score only: equal scores keep the sentences' order.
	for i := 1; i < len(c); i++ {
		for j := i; j > 0 && c[j].score > c[j-1].score; j-- {
			c[j], c[j-1] = c[j-1], c[j]
		}
	}
}

// headFirst weighs the question's words by where they stand: a composed question names
// the answer's own relation first and the entity it starts from last ("Who chaired the
// inquiry into the storm that sank the Kittiwake?"), so the first word weighs
// 1+headWeight times, the last once.
func headFirst(question string, weights map[string]float64) map[string]float64 {
	ws := words.Split(question)
	out := make(map[string]float64, len(weights))
	for i, w := range ws {
		t := words.LightStem(strings.Trim(strings.ToLower(w), ".'-"))
		if v, ok := weights[t]; ok {
			if _, done := out[t]; !done {
				out[t] = v * (1 + headWeight*(1-float64(i)/float64(len(ws))))
				if i > 0 && isUpperStart(w) {
					out[t] *= nameWeight
				}
			}
		}
	}
	for t, v := range weights {
		if _, ok := out[t]; !ok {
			out[t] = v
		}
	}
	return out
}

// A word of a name the question gives (capitalized, not the first word) counts
// nameWeight times: the name says where to look, retrieval has used it; the answer's
// sentence is told apart by the question's other words ("keeps").
const (
	headWeight = 1.0
	nameWeight = 0.5
)

// termPositions maps each question word (stemmed) a sentence holds to the byte offsets
// where it stands.
func termPositions(s string, weights map[string]float64) map[string][]int {
	out := map[string][]int{}
	for _, w := range textseg.Words(s) {
		t := words.LightStem(strings.Trim(strings.ToLower(w.Text(s)), ".'-"))
		if _, ok := weights[t]; ok {
			out[t] = append(out[t], w.Start)
		}
	}
	return out
}

type answerSpan struct {
	start, end int
	agree      float64 // how well its type agrees with what the question asks for, in (0, 1]
}

// candidateSpans returns the spans of a sentence that could answer a question of the
// kind: dates for "when", numbers (with the word that counts them) for "how many", and
// names otherwise, those the offline extractor types as the kind asked for first.
func candidateSpans(kind, s string) []answerSpan {
	var out []answerSpan
	switch kind {
	case askDate:
		for _, loc := range dateRE.FindAllStringIndex(s, -1) {
			out = append(out, answerSpan{loc[0], loc[1], 1})
		}
		return out
	case askNumber:
		for _, loc := range numberRE.FindAllStringIndex(s, -1) {
			m := s[loc[0]:loc[1]]
			next, _, _ := strings.Cut(strings.TrimSpace(s[loc[1]:])+" ", " ")
			if months[strings.ToLower(strings.Trim(next, ",."))] || yearRE.MatchString(m) && len(m) == 4 {
				continue // a day of a month, a year
			}
			end := loc[0] + len(strings.TrimRight(m, ".,"))
			if u := unitRE.FindStringSubmatchIndex(s[end:]); u != nil && !words.Stop[s[end+u[2]:end+u[3]]] {
				end += u[3] // "58 staff", "6.8 inches"
			}
			out = append(out, answerSpan{loc[0], end, 1})
		}
		return out
	}
	ents, _ := offlinextract.Extract("", s, offlinextract.WithNounPhrases(false), offlinextract.WithMaxRelationships(1))
	for _, e := range ents {
		i := strings.Index(s, e.Name)
		if i < 0 || e.Type == offlinextract.TypeDate {
			continue
		}
		agree := typeAgreement(kind, e.Type)
		if kind == askPerson && e.Type == offlinextract.TypeOther && personLike(e.Name) {
			agree = 1 // a name the extractor does not know: "Tobias Wren"
		}
		out = append(out, answerSpan{i, i + len(e.Name), agree})
	}
	if kind == askPerson {
		for _, m := range resolved.FindAllStringSubmatchIndex(s, -1) {
			out = append(out, answerSpan{m[2], m[3], 1}) // the person a pronoun stands for
		}
	}
	return out
}

// typeAgreement weighs a name of the extractor's type as the answer to a question of
// the kind: the extractor's types are guesses, so a name of another type is kept, lower.
func typeAgreement(kind, typ string) float64 {
	switch kind {
	case askPerson:
		switch typ {
		case offlinextract.TypePerson:
			return 1
		case offlinextract.TypeOrganization, offlinextract.TypeOther:
			return 0.4
		}
		return 0.2
	case askPlace:
		switch typ {
		case offlinextract.TypePlace:
			return 1
		case offlinextract.TypeOrganization, offlinextract.TypeOther:
			return 0.4
		}
		return 0.2
	}
	return 1
}
