package answer

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/graphrag/graphrag/pkg/normalize"
	"github.com/graphrag/graphrag/pkg/offlinextract"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/words"
	"github.com/graphrag/graphrag/services/query/evidence"
)

// What a question asks for, read from its form.
const (
	askOther  = "other"
	askPerson = "person" // who, whom, whose
	askDate   = "date"   // when, what year
	askPlace  = "place"  // where, what city
	askNumber = "number" // how many, what population
	askYesNo  = "yes/no" // are X and Y both …?
	askChoice = "choice" // which …, A or B?
)

var (
	yesNoOpeners = words.Set(`are is was were do does did can could has have had will would should`)
	dateAsk      = regexp.MustCompile(`^(?:when|(?:in )?(?:what|which) (?:year|date|decade|century|month))\b`)
	placeAsk     = regexp.MustCompile(`^(?:where|(?:in )?(?:what|which) (?:city|country|state|town|county|region|province|continent|place|island|village))\b`)
	numberAsk    = regexp.MustCompile(`^(?:how (?:many|much|long|old|tall|high|far|large)|what (?:is|was) the (?:population|number|size|height|length|area))\b|\bpopulation\b`)
	choiceAsk    = regexp.MustCompile(`(?:^|[\s,:])((?:\p{Lu}|["“])[^,?]*?)\s+or\s+(?:the\s+)?((?:\p{Lu}|["“])[^,?]*?)\s*\??\s*$`)
	yearRE       = regexp.MustCompile(`\b(1[0-9]{3}|20[0-9]{2})\b`)
	numberRE     = regexp.MustCompile(`\b\d[\d,.]*\b`)
	personPron   = regexp.MustCompile(`\b(?:He|he|She|she)\b`)
	resolved     = regexp.MustCompile(`\b(?:He|he|She|she) \[([^\]]+)\]`)
)

// whOpeners open a question that asks at its start; innerAsk finds the question word of
// one that asks further on.
var (
	whOpeners    = words.Set(`who whom whose what which when where how`)
	prepositions = words.Set(`in at on from for by to with of`)
	innerAsk     = regexp.MustCompile(`\b((?:what|which) (?:year|date|decade|century|month|city|country|state|town|county|region|province|continent|place|island|village)\b|how (?:many|much)\b|when\s*\??\s*$)`)
)

var months = words.Set(`january february march april may june july august september october november december`)

// questionKind reads what a question asks for, and for a choice its options.
func questionKind(q string) (string, []string) {
	lq := strings.ToLower(strings.TrimSpace(q))
	first, _, _ := strings.Cut(lq, " ")
	if m := choiceAsk.FindStringSubmatch(strings.TrimSpace(q)); m != nil && !yesNoOpeners[first] {
		a, b := optionName(m[1], true), optionName(m[2], false)
		if a != "" && b != "" {
			return askChoice, []string{a, b}
		}
	}
	if second, _, _ := strings.Cut(strings.TrimPrefix(lq, first+" "), " "); prepositions[first] && whOpeners[second] {
		first = second
	}
	if !whOpeners[first] && !yesNoOpeners[first] {
		// A statement that ends in its question: "… born in what year?", "… was
		// founded when?"
		if m := innerAsk.FindStringSubmatchIndex(lq); m != nil {
			lq = lq[m[2]:]
			first, _, _ = strings.Cut(lq, " ")
		}
	}
	switch {
	case yesNoOpeners[first]:
		return askYesNo, nil
	case dateAsk.MatchString(lq):
		return askDate, nil
	case placeAsk.MatchString(lq):
		return askPlace, nil
	case numberAsk.MatchString(lq):
		return askNumber, nil
	case first == "who" || first == "whom" || first == "whose":
		return askPerson, nil
	}
	return askOther, nil
}

// optionName trims an option of a choice question to the name it ends with (the left
// option) or starts with (the right one): "Which band was formed first The Exies" →
// "The Exies".
func optionName(s string, left bool) string {
	s = strings.Trim(strings.TrimSpace(s), `"“”`)
	ws := strings.Fields(s)
	if !left {
		return strings.Join(ws, " ")
	}
	i := len(ws)
	for i > 0 {
		w := strings.Trim(ws[i-1], `"“”`)
		if w == "" || !isUpperStart(w) && (!words.IsAnswerConnector(w) || i >= len(ws)) {
			break
		}
		i--
	}
	return strings.Trim(strings.Join(ws[i:], " "), `"“”`)
}

func isUpperStart(w string) bool {
	for _, r := range w {
		return r >= 'A' && r <= 'Z' || r > 127 && strings.ToUpper(string(r)) == string(r) && strings.ToLower(string(r)) != string(r) || r >= '0' && r <= '9'
	}
	return false
}

// The lead sentence of an extractive answer comes from the best leadPassages passages;
// the supporting ones from the best answerPassages (the other hop of a multi-hop
// question is often ranked lower: it shares fewer words with the question).
const (
	leadPassages   = 5
	answerPassages = 10
)

// answerSentence is a sentence of a passage of the context, with the passage's number.
type answerSentence struct {
	text  string
	chunk int
	index int // its place among its passage's sentences
	score float64
	norm  string
	terms map[string]float64 // the question's words it holds, with their weights
}

// extractiveAnswer answers without a model. It reads what the question asks for (who,
// when, where, how many, yes or no, which of two) and leads with the sentence of the top
// passages that best matches the question and holds an answer of that kind, naming the
// answer first when it can pick it out; then up to two supporting sentences from other
// passages (the other hop of a multi-hop question). Every sentence cites its passage,
// and a "he"/"she" is resolved to the passage's subject. Community context is left to
// the response's communities, not written into the answer.
func extractiveAnswer(question string, c evidence.Retrieved) string {
	if len(c.Chunks) == 0 {
		return "No passage in the corpus matches the question."
	}
	kind, options := questionKind(question)
	all, weights := contextSentences(question, c)
	sents := slices.DeleteFunc(slices.Clone(all), func(s answerSentence) bool { return s.chunk >= leadPassages })
	if len(sents) == 0 {
		return fmt.Sprintf("%s [1]", oneLine(firstSentence(bodyOf(c.Chunks[0])), 400))
	}
	switch kind {
	case askYesNo:
		return yesNoAnswer(question, c, sents)
	case askChoice:
		return choiceAnswer(question, options, sents)
	}
	cands, holds := answerCandidates(kind, question, c, all, weights)
	for i := range all {
		if holds[i] {
			all[i].score *= 2 // it holds an answer of the kind asked for
		}
	}
	sortSentences(all)
	// The evidence: the best-scored sentence of the top passages, then the sentences
	// that hold what the question asks and it lacks.
	li := slices.IndexFunc(all, func(s answerSentence) bool { return s.chunk < leadPassages })
	picked := []answerSentence{all[li]}
	picked = append(picked, supporting(all, picked, 2)...)
	// The answer: the best candidate of the evidence, or one elsewhere whose evidence is
	// much stronger (its sentence then leads, in place of the last of the evidence).
	best := -1
	for i, cd := range cands {
		if in := slices.IndexFunc(picked, func(p answerSentence) bool { return p.text == cd.text || p.text == cd.sentText }); in >= 0 && slices.ContainsFunc(picked, func(p answerSentence) bool { return p.text == cd.sentText }) {
			best = i
			break
		}
	}
	var b strings.Builder
	switch {
	case len(cands) > 0 && (best < 0 || cands[0].score > outsideMargin*cands[best].score):
		cd := cands[0]
		if !slices.ContainsFunc(picked, func(p answerSentence) bool { return p.text == cd.sentText }) {
			picked = append([]answerSentence{cd.sent}, picked[:len(picked)-1]...)
		}
		best = 0
		fallthrough
	case best >= 0:
		cd := cands[best]
		i := slices.IndexFunc(picked, func(p answerSentence) bool { return p.text == cd.sentText })
		lead := picked[i]
		picked = append([]answerSentence{lead}, slices.Delete(picked, i, i+1)...)
		b.WriteString(cd.text + ". ")
	default:
		b.WriteString("The passages do not state " + askedFor(question) + ". ")
	}
	writeCited(&b, picked)
	return b.String()
}

// outsideMargin is how much stronger the evidence for a candidate outside the chosen
// sentences must be for its sentence to take the place of one of them.
const outsideMargin = 1.5

// askedFor turns a question into the clause of what it asks: "Who keeps the light?" →
// "who keeps the light".
func askedFor(question string) string {
	q := strings.TrimRight(strings.TrimSpace(question), "?. ")
	if q == "" {
		return "the answer"
	}
	return strings.ToLower(q[:1]) + q[1:]
}

// contextSentences splits the top passages into scored sentences: the question's words
// found in a sentence, weighted by their rarity among these sentences (a question's topic
// words are everywhere in its context), discounted by the passage's rank.
func contextSentences(question string, c evidence.Retrieved) ([]answerSentence, map[string]float64) {
	terms := words.Terms(question)
	var out []answerSentence
	for i, ch := range c.Chunks {
		if i >= answerPassages {
			break
		}
		person := "" // the last person the passage named
		if personLike(ch.Subject) {
			person = ch.Subject
		}
		for j, s := range sentences(bodyOf(ch)) {
			if strings.HasPrefix(s, "#") {
				continue // a Markdown heading is not an answer
			}
			named := lastPerson(s)
			s = resolvePronoun(s, person)
			if named != "" {
				person = named
			}
			out = append(out, answerSentence{text: s, chunk: i, index: j, norm: " " + normalize.Name(s) + " "})
		}
	}
	// Each sentence is tokenized once: the document frequencies and the scores below
	// read its stems (tokenizing per question term was 40 % of this function).
	stems := make([][]string, len(out))
	for i, s := range out {
		stems[i] = words.DistinctStems(s.text)
	}
	weighted := map[string]float64{}
	for w, v := range terms {
		df := 0
		for _, st := range stems {
			if slices.Contains(st, w) {
				df++
			}
		}
		weighted[w] = v * math.Log(1+float64(len(out)+1)/float64(df+1))
	}
	kept := out[:0]
	for i, s := range out {
		// Summed in the sentence's word order, as overlap does, so equal sentences
		// score exactly equal.
		sc, m := 0.0, map[string]float64{}
		for _, w := range stems[i] {
			if v, ok := weighted[w]; ok {
				sc += v
				m[w] = v
			}
		}
		if sc > 0 {
			s.score = sc / (1 + 0.05*float64(s.chunk))
			s.terms = m
			kept = append(kept, s)
		}
	}
	return kept, weighted
}

// resolvePronoun names the person a "he" or "she" most likely refers to after its first
// occurrence in a sentence that names nobody else: "In 2003 she [Maren Fenwick]
// converted the cottage". The person is the last one the passage named before, or its
// subject.
func resolvePronoun(s, person string) string {
	loc := personPron.FindStringIndex(s)
	if loc == nil || person == "" || strings.Contains(s, person) || lastPerson(s[:loc[0]]) != "" {
		return s
	}
	return s[:loc[1]] + " [" + person + "]" + s[loc[1]:]
}

// lastPerson returns the last name in s that the offline extractor types as a person.
func lastPerson(s string) string {
	ents, _ := offlinextract.Extract("", s, offlinextract.WithNounPhrases(false), offlinextract.WithMaxRelationships(1))
	last, at := "", -1
	for _, e := range ents {
		if i := strings.LastIndex(s, e.Name); e.Type == offlinextract.TypePerson && i > at {
			last, at = e.Name, i
		}
	}
	return last
}

// personLike reports whether a subject could be a person's name: two to four words,
// each capitalized, no digits or commas ("Israeli presidential election, 2000" is not).
func personLike(name string) bool {
	ws := strings.Fields(name)
	if len(ws) < 2 || len(ws) > 4 || strings.ContainsAny(name, ",0123456789()") {
		return false
	}
	for _, w := range ws {
		if !isUpperStart(w) && !words.IsAnswerConnector(w) {
			return false
		}
	}
	return true
}

// bodyOf is a chunk's text without its heading (schema.ChunkText).
func bodyOf(c evidence.Chunk) string {
	_, body := schema.SplitChunkText(c.Title, c.Section, c.Text)
	return body
}

func sortSentences(s []answerSentence) {
	sort.SliceStable(s, func(i, j int) bool { return s[i].score > s[j].score })
}

// supporting picks up to n more sentences, other passages first: each time the one that
// adds the most weight of the question's words that no sentence picked so far holds (the
// other hop of a multi-hop question is in the words the lead lacks: "Which institute
// employs the scientist who chaired the inquiry?" leads with the inquiry and goes on to
// the institute), by score among those that add nothing.
func supporting(rest []answerSentence, picked []answerSentence, n int) []answerSentence {
	covered := map[string]float64{}
	used := map[int]int{}
	for _, p := range picked {
		maps.Copy(covered, p.terms)
		used[p.chunk]++
	}
	var out []answerSentence
	for pass := 0; pass < 2 && len(out) < n; pass++ {
		for len(out) < n {
			best, gain := -1, -1.0
			for i, s := range rest {
				if used[s.chunk] > pass || slices.ContainsFunc(picked, func(o answerSentence) bool { return o.text == s.text }) || slices.ContainsFunc(out, func(o answerSentence) bool { return o.text == s.text }) {
					continue
				}
				g := 0.0
				for t, w := range s.terms {
					if _, ok := covered[t]; !ok {
						g += w
					}
				}
				if g /= 1 + 0.05*float64(s.chunk); g > gain {
					best, gain = i, g
				}
			}
			if best < 0 {
				break
			}
			s := rest[best]
			used[s.chunk]++
			out = append(out, s)
			maps.Copy(covered, s.terms)
		}
	}
	return out
}

func writeCited(b *strings.Builder, parts []answerSentence) {
	for i, p := range parts {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(b, "%s [%d]", p.text, p.chunk+1)
	}
}

// maxAnswerGap is how far (in bytes) an answer may stand from the question's words in
// its sentence.
const maxAnswerGap = 80

// yesNoAnswer decides "Are X and Y both Z?" (every entity the question names has a
// sentence saying Z) and "… the same Z?" (their sentences share a place or an
// organization), and shows the sentences it decided on.
func yesNoAnswer(question string, c evidence.Retrieved, sents []answerSentence) string {
	var named []string
	qnorm := " " + normalize.Name(question) + " "
	for _, en := range c.Entities {
		if en.Distance == 0 && strings.Contains(question, en.Name) && len(strings.Fields(en.Key)) > 0 && isUpperStart(en.Name) {
			named = append(named, en.Key)
		}
	}
	if len(named) == 0 {
		sortSentences(sents)
		var b strings.Builder
		writeCited(&b, append([]answerSentence{sents[0]}, supporting(sents[1:], sents[:1], 1)...))
		return b.String()
	}
	predicate := map[string]float64{}
	for w, v := range words.Terms(question) {
		inName := false
		for _, k := range named {
			inName = inName || strings.Contains(" "+k+" ", " "+normalize.Name(w)+" ")
		}
		if !inName {
			predicate[words.PrefixStem(w)] = v
		}
	}
	same := strings.Contains(qnorm, " same ")
	var evidence []answerSentence
	yes := true
	var shared map[string]bool
	for _, k := range named {
		best, ok := bestAbout(k, sents)
		if !ok {
			yes = false
			continue
		}
		if !slices.ContainsFunc(evidence, func(e answerSentence) bool { return e.text == best.text }) {
			evidence = append(evidence, best)
		}
		if same {
			here := map[string]bool{}
			ents, _ := offlinextract.Extract("", best.text, offlinextract.WithNounPhrases(false))
			for _, e := range ents {
				if ek := normalize.Name(e.Name); !slices.Contains(named, ek) && (e.Type == offlinextract.TypePlace || e.Type == offlinextract.TypeOrganization) {
					here[ek] = true
				}
			}
			if shared == nil {
				shared = here
			} else {
				for ek := range shared {
					if !here[ek] {
						delete(shared, ek)
					}
				}
			}
			continue
		}
		if coverage(predicate, best.norm) < 0.5 {
			yes = false
		}
	}
	if same {
		yes = yes && len(shared) > 0 && len(evidence) >= 2
	}
	var b strings.Builder
	if yes {
		b.WriteString("Yes. ")
	} else {
		b.WriteString("No. ")
	}
	writeCited(&b, evidence)
	return strings.TrimSpace(b.String())
}

// bestAbout returns the best-scored sentence that names key.
func bestAbout(key string, sents []answerSentence) (answerSentence, bool) {
	var best answerSentence
	found := false
	for _, s := range sents {
		if strings.Contains(s.norm, " "+key+" ") && (!found || s.score > best.score) {
			best, found = s, true
		}
	}
	return best, found
}

// coverage is the weighted share of the predicate's words (stemmed) in a normalized
// sentence.
func coverage(predicate map[string]float64, norm string) float64 {
	var have, all float64
	for w, v := range predicate {
		all += v
		if strings.Contains(norm, " "+w) {
			have += v
		}
	}
	if all == 0 {
		return 1
	}
	return have / all
}

// choiceAnswer answers "Which …, A or B?": the option whose sentence holds the earlier
// (or later) year when the question asks which came first (or last), else the option
// whose sentence matches the question best; then each option's sentence.
func choiceAnswer(question string, options []string, sents []answerSentence) string {
	lq := " " + strings.Join(words.Split(strings.ToLower(question)), " ") + " "
	earlier := containsAny(lq, " first ", " earlier ", " older ", " oldest ", " earliest ", " before ")
	later := containsAny(lq, " last ", " later ", " younger ", " youngest ", " latest ", " more recent", " newer ")
	type opt struct {
		name string
		best answerSentence
		ok   bool
		year int
	}
	opts := make([]opt, len(options))
	for i, o := range options {
		opts[i].name = o
		opts[i].best, opts[i].ok = bestAbout(normalize.Name(o), sents)
		if opts[i].ok {
			if y := yearRE.FindString(opts[i].best.text); y != "" {
				opts[i].year, _ = strconv.Atoi(y) // four digits: cannot fail
			}
		}
	}
	pick := -1
	if (earlier || later) && opts[0].year > 0 && opts[1].year > 0 && opts[0].year != opts[1].year {
		pick = 0
		if (opts[1].year < opts[0].year) == earlier {
			pick = 1
		}
	} else {
		for i, o := range opts {
			if o.ok && (pick < 0 || o.best.score > opts[pick].best.score) {
				pick = i
			}
		}
	}
	var b strings.Builder
	if pick >= 0 {
		b.WriteString(opts[pick].name + ". ")
	}
	var ev []answerSentence
	for _, o := range opts {
		if o.ok && !slices.ContainsFunc(ev, func(e answerSentence) bool { return e.text == o.best.text }) {
			ev = append(ev, o.best)
		}
	}
	if len(ev) == 0 {
		sortSentences(sents)
		ev = append(ev, sents[0])
	}
	writeCited(&b, ev)
	return strings.TrimSpace(b.String())
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}
