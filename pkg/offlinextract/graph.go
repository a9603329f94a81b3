package offlinextract

import (
	"cmp"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/graphrag/graphrag/pkg/normalize"
)

// typeOrder breaks ties between type votes.
var typeOrder = []string{TypePerson, TypePlace, TypeOrganization, TypeWork, TypeEvent, TypeDate, TypeConcept}

// entities groups the mentions by normalized name, adds the title entity,
// merges a one-word name into the only longer name that starts or ends with
// it ("Nolan" → "Christopher Nolan"), and guesses types.
func (x *extractor) entities(title, titleCue string) []*entity {
	slices.SortStableFunc(x.mentions, func(a, b mention) int { return cmp.Compare(a.start, b.start) })
	byKey := map[string]*entity{}
	var order []*entity
	get := func(key, name string, first int) *entity {
		e := byKey[key]
		if e == nil {
			e = &entity{key: key, name: name, surfaces: map[string]int{}, first: first, votes: map[string]float64{}}
			byKey[key] = e
			order = append(order, e)
		}
		return e
	}
	titleKey := normalize.Name(title)
	if titleKey != "" {
		t := get(titleKey, title, -1)
		t.title = true
		t.proper = true
		for i, s := range x.sents {
			norm := " " + normalize.Name(x.text[s.start:s.end]) + " "
			if strings.Contains(norm, " "+titleKey+" ") {
				t.sents = append(t.sents, i)
				t.mentions++
			}
		}
		x.typeFromPhrase(t, titleCue, 3)
		x.typeFromName(t, strings.Fields(titleKey))
		// "Arthur? Arthur! is a 1969 British comedy film": the predicate after
		// the first occurrence of the title, which need not be one phrase.
		if idx := strings.Index(strings.ToLower(x.text), strings.ToLower(title)); idx >= 0 {
			rest := x.text[idx+len(title):]
			if k := strings.IndexAny(rest, ".!?\n"); k >= 0 {
				rest = rest[:k+1]
			}
			for parens.MatchString(rest) {
				rest = parens.ReplaceAllString(rest, " ")
			}
			if c := copula.FindStringSubmatch(rest); c != nil {
				x.typeFromPhrase(t, c[1], 3)
			}
		}
		// A biography speaks of its subject as he or she; a title that cannot be a
		// person's name ("Gullhead Lighthouse and the Fenwick Family") gets no vote.
		if personShaped(strings.Fields(titleKey)) {
			for _, s := range x.sents {
				for _, tok := range s.toks {
					switch tok.lower {
					case "he", "she", "his", "her", "him":
						t.votes[TypePerson] += 0.5
					}
				}
			}
		}
	}
	for _, m := range x.mentions {
		e := get(m.key, m.surface, m.start)
		e.surfaces[m.surface]++
		if e.title {
			x.vote(e, m)
			continue // the title's sentences are counted above
		}
		e.mentions++
		if len(e.sents) == 0 || e.sents[len(e.sents)-1] != m.sent {
			e.sents = append(e.sents, m.sent)
		}
		e.proper = e.proper || m.proper
		x.vote(e, m)
	}
	// Merge a fuller form of the title ("Christopher Edward Nolan" for the
	// title "Christopher Nolan") into the title.
	alias := map[string]string{}
	if titleKey != "" {
		tw := strings.Fields(titleKey)
		for _, e := range order {
			ew := strings.Fields(e.key)
			for len(ew) > 1 && personTitles[ew[0]] { // "Captain Konstantin … Vakulovsky"
				ew = ew[1:]
			}
			if e.title || !e.proper || len(tw) < 2 || len(ew) <= len(tw) || len(ew) > len(tw)+2 || !subsequence(tw, ew) || ew[0] != tw[0] || ew[len(ew)-1] != tw[len(tw)-1] {
				continue
			}
			t := byKey[titleKey]
			alias[e.key] = titleKey
			for k, v := range e.votes {
				t.votes[k] += v
			}
			e.mentions = -1
		}
	}
	// Merge one-word names into the only longer name they start or end.
	edgeWords := map[string][]*entity{} // first or last word → names of 2-4 words
	for _, o := range order {
		words := strings.Fields(o.key)
		if !o.proper || o.mentions < 0 || len(words) < 2 || len(words) > 4 {
			continue
		}
		edgeWords[words[0]] = append(edgeWords[words[0]], o)
		if last := words[len(words)-1]; last != words[0] {
			edgeWords[last] = append(edgeWords[last], o)
		}
	}
	for _, e := range order {
		if strings.Contains(e.key, " ") || !e.proper || e.title || e.mentions < 0 {
			continue
		}
		cands := edgeWords[e.key]
		if len(cands) != 1 {
			continue
		}
		target := cands[0]
		alias[e.key] = target.key
		target.mentions += e.mentions
		target.sents = mergeSorted(target.sents, e.sents)
		for k, v := range e.votes {
			target.votes[k] += v
		}
		if e.first >= 0 && (target.first < 0 || e.first < target.first) && !target.title {
			target.first = e.first
		}
		e.mentions = -1 // merged away
	}
	for i := range x.mentions {
		if a, ok := alias[x.mentions[i].key]; ok {
			x.mentions[i].key = a
		}
	}
	var out []*entity
	for _, e := range order {
		if e.mentions < 0 {
			continue
		}
		// A noun phrase is an entity only if the chunk comes back to it: "the
		// eastern end" said once is a description, not a thing of the graph.
		if !e.proper && !e.title && len(e.sents) < minConceptSentences {
			continue
		}
		if titleKey == e.key && titleKey != "" {
			e.sents = allSentences(len(x.sents))
		} else {
			e.name = mostFrequent(e.surfaces, e.name)
		}
		e.description = x.describe(e)
		out = append(out, e)
	}
	x.familyNames(out)
	return out
}

// familyNames types as a person a name of two or three words without other evidence
// that ends with the family name of a person of the chunk ("Hugh Calloway" beside
// "Ines Calloway, his great-granddaughter").
func (x *extractor) familyNames(ents []*entity) {
	surnames := map[string]bool{}
	for _, e := range ents {
		if w := strings.Fields(e.key); len(w) >= 2 && e.proper && e.typ() == TypePerson && personShaped(w) {
			surnames[w[len(w)-1]] = true
		}
	}
	for _, e := range ents {
		if w := strings.Fields(e.key); len(w) >= 2 && len(w) <= 3 && e.proper && !e.title && e.typ() == TypeOther && personShaped(w) && surnames[w[len(w)-1]] {
			e.votes[TypePerson] += minTypeVotes
		}
	}
}

// subsequence reports whether the words of a appear in b in order.
func subsequence(a, b []string) bool {
	i := 0
	for _, w := range b {
		if i < len(a) && a[i] == w {
			i++
		}
	}
	return i == len(a)
}

func allSentences(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func mergeSorted(a, b []int) []int {
	out := append(append([]int(nil), a...), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// mostFrequent returns the most frequent surface form; ties go to the
// earliest form, which is the entity's initial name.
func mostFrequent(surfaces map[string]int, first string) string {
	best, n := first, surfaces[first]
	keys := make([]string, 0, len(surfaces))
	for k := range surfaces {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if surfaces[k] > n {
			best, n = k, surfaces[k]
		}
	}
	return best
}

// describe returns the first sentence that mentions e (for a title that is
// never mentioned, the first sentence), trimmed; a heading or a header line only
// when no other sentence would do (see markup).
func (x *extractor) describe(e *entity) string {
	if len(x.sents) == 0 {
		return ""
	}
	i := x.describing(allSentences(len(x.sents)))
	if !e.title || e.mentions > 0 {
		if len(e.sents) > 0 {
			i = x.describing(e.sents)
		}
		if e.title {
			var named []int
			for k, s := range x.sents {
				norm := " " + normalize.Name(x.text[s.start:s.end]) + " "
				if strings.Contains(norm, " "+e.key+" ") {
					named = append(named, k)
				}
			}
			if len(named) > 0 {
				i = x.describing(named)
			}
		}
	}
	if i >= len(x.sents) {
		return ""
	}
	return trimDescription(x.text[x.sents[i].start:x.sents[i].end])
}

// trimDescription collapses white space and cuts at a word boundary before
// MaxDescription bytes.
func trimDescription(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= MaxDescription {
		return s
	}
	cut := strings.LastIndexByte(s[:MaxDescription], ' ')
	if cut <= 0 {
		cut = MaxDescription
		for cut > 0 && !utf8RuneStart(s[cut]) {
			cut--
		}
	}
	return strings.TrimRight(s[:cut], " ,;:") + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// predicateWindow is how far after a mention its predicate is looked for.
const predicateWindow = 400

var parens = regexp.MustCompile(`\([^()]*\)`)

// copula matches a predicate, after at most one short appositive ("Demon
// Dice, originally published as Chaos Progenitus, is a … game").
var copula = regexp.MustCompile(`^[\s,]*(?:[^,.;]{1,80},\s*)?(?:is|was|are|were|has been|had been|became|becomes)\s+(.*)$`)

// vote adds the type cues of one mention (see the package doc).
func (x *extractor) vote(e *entity, m mention) {
	if !m.proper {
		e.votes[TypeConcept] += 10
		return
	}
	if m.typ != "" {
		e.votes[m.typ] += headCueWeight
		return
	}
	s := x.sents[m.sent]
	if allDigits(m.key) {
		e.votes[TypeDate] += 10
		return
	}
	words := strings.Fields(m.key)
	if len(words) == 1 && months[words[0]] {
		e.votes[TypeDate] += 10
		return
	}
	if personTitles[words[0]] && len(words) > 1 && personShaped(words[1:]) {
		e.votes[TypePerson] += 2
	}
	x.typeFromName(e, words)
	if places[m.key] {
		e.votes[TypePlace] += 3
	} else if m.te-m.ts == 1 && s.toks[m.ts].allCaps && s.toks[m.ts].code == codeNone {
		e.votes[TypeOrganization]++ // most acronyms in prose name organizations
	}
	if m.ts > 0 {
		prev := s.toks[m.ts-1].lower
		switch {
		case personTitles[prev]:
			e.votes[TypePerson] += 2
		case placePrepositions[prev]:
			e.votes[TypePlace] += 0.5
		}
		if lead := x.listLead(s, m.ts); lead >= 0 && lead != m.ts-1 {
			// A later item of a list: "stars Scarlett Johansson, Michael Caine, and …".
			if l := s.toks[lead].lower; personLeads[l] || personCues[singular(l)] {
				e.votes[TypePerson] += 1.5
			}
		}
		switch {
		case workCues[prev]: // "the film Inception"
			e.votes[TypeWork] += 1.5
		case personCues[singular(prev)] || personLeads[prev]: // "actor Bale", "starring Hugh Jackman"
			e.votes[TypePerson] += 1.5
		case prev == "by" && m.ts > 1 && personVerbsBy[s.toks[m.ts-2].lower]: // "directed by Samuel Gallu"
			e.votes[TypePerson]++
		}
	}
	start, end := s.toks[m.ts].start, s.toks[m.te-1].end
	if start > 0 && end < len(x.text) {
		before, after := x.text[start-1], x.text[end]
		if before == '"' && after == '"' || strings.HasSuffix(x.text[:start], "“") && strings.HasPrefix(x.text[end:], "”") {
			e.votes[TypeWork]++
		}
	}
	// "X (born …", "X was born", "X said": the next word, with no comma between.
	for k := m.te; k < min(m.te+2, len(s.toks)); k++ {
		if strings.Contains(x.text[s.toks[k-1].end:s.toks[k].start], ",") {
			break
		}
		switch s.toks[k].lower {
		case "born", "died":
			e.votes[TypePerson] += 2
		case "said", "wrote", "married", "starred", "sang", "composed", "painted", "retired", "resigned",
			"grew", "joined", "became", "studied", "recalled", "told", "explained", "arrived", "moved", "lived":
			if personShaped(words) {
				e.votes[TypePerson]++
			}
		}
		if s.toks[k].lower != "was" {
			break
		}
	}
	// "His son, Elias Fenwick, took over … He": a name that opens a sentence and the
	// next sentence opens with he or she.
	if m.ts <= 1 && m.sent+1 < len(x.sents) && personShaped(words) {
		if next := x.sents[m.sent+1].toks; len(next) > 0 && (next[0].lower == "he" || next[0].lower == "she") {
			e.votes[TypePerson] += 1.5
		}
	}
	// "Maren Fenwick": a given name opens a name of two or three words.
	if len(words) >= 2 && len(words) <= 3 && givenNames[words[0]] && personShaped(words) {
		e.votes[TypePerson] += 1.5
	}
	// "the Fenwick family … Maren Fenwick": a family name makes a person of the
	// names that end with it.
	if len(words) >= 2 && x.families[words[len(words)-1]] && personShaped(words) {
		e.votes[TypePerson] += 2
	}
	x.placeChain(e, s, m)
	// "X (…) is an English film director, …": the head of the predicate.
	rest := x.text[end:min(s.end, end+predicateWindow)] // bounded: a huge sentence must not make this quadratic
	for parens.MatchString(rest) {
		rest = parens.ReplaceAllString(rest, " ")
	}
	// Only a subject has the predicate: "a scientist at the Marrow Bay Marine
	// Institute, has been a councillor" says nothing of the institute.
	if c := copula.FindStringSubmatch(rest); c != nil && (m.ts == 0 || !prepositions[s.toks[m.ts-1].lower] && !placePrepositions[s.toks[m.ts-1].lower]) {
		x.typeFromPhrase(e, c[1], 3)
	}
}

// typeFromName votes for the types whose cue words the name contains
// ("University of Oxford", "Brunswick County").
func (x *extractor) typeFromName(e *entity, words []string) {
	// Cue words inside a name are strong evidence: "Epitaph Records"
	// released by someone is still an organization.
	// The head word decides ("Marrow Bay Marine Institute" is an institute, "Town
	// Council" a council): the last word, or the last before "of" ("University of
	// Oxford"). A cue among the modifiers is weak evidence alone.
	head := len(words) - 1
	if k := slices.Index(words, "of"); k > 0 {
		head = k - 1
	}
	// "Storm Hester", "Lake Geneva": a cue that opens the name heads it when the
	// last word is no cue.
	lead := -1
	if w := words[head]; !orgCues[w] && !placeCues[w] && !eventCues[w] {
		lead = 0
	}
	for i, w := range words {
		weight := 0.5
		if i == head || i == lead {
			weight = headCueWeight
		}
		switch {
		case orgCues[w]:
			e.votes[TypeOrganization] += weight
		case placeCues[w]:
			e.votes[TypePlace] += weight
		case eventCues[w]:
			e.votes[TypeEvent] += weight
		}
	}
}

// headCueWeight is the vote of the head word's cue: more than a predicate's (3), as
// the name says what it is where the sentence around it may speak of something else.
const headCueWeight = 3.5

// personShaped reports whether the words of a normalized name could be a person's
// name: one to four words, none a connector, "and" or a type cue of an organization,
// place, event or work ("Gullhead Lighthouse and the Fenwick Family" could not).
func personShaped(words []string) bool {
	if len(words) == 0 || len(words) > 4 {
		return false
	}
	for _, w := range words {
		if connectors[w] || w == "and" || orgCues[w] || placeCues[w] || eventCues[w] || workCues[w] {
			return false
		}
	}
	return true
}

// predicateStop ends the noun phrase of a predicate.
var predicateStop = set(`of in by from that which who whose for with at on to based directed written
created produced released located founded known called named where when`)

// typeFromPhrase reads the noun phrase at the start of a predicate ("an
// English-American film director, producer") and votes for the type of its
// last cue word (the head noun: "director", not "film").
func (x *extractor) typeFromPhrase(e *entity, phrase string, weight float64) {
	best := ""
	for i, w := range strings.Fields(phrase) {
		if i >= 8 {
			break
		}
		stop := strings.IndexFunc(w, func(r rune) bool { return r == ',' || r == ';' || r == ':' || r == '.' || r == ')' }) >= 0
		w = strings.ToLower(strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) }))
		if predicateStop[w] {
			break
		}
		w = singular(w)
		switch {
		case personCues[w]:
			best = TypePerson
		case workCues[w]:
			best = TypeWork
		case placeCues[w]:
			best = TypePlace
		case orgCues[w]:
			best = TypeOrganization
		case eventCues[w]:
			best = TypeEvent
		case conceptCues[w]:
			best = TypeConcept
		}
		if stop {
			break
		}
	}
	if best != "" {
		e.votes[best] += weight
	}
}

func singular(w string) string {
	if strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && len(w) > 3 {
		return w[:len(w)-1]
	}
	return w
}

// personVerbsBy are participles whose agent ("directed by X") is a person.
var personVerbsBy = set(`directed written composed painted portrayed played sung authored illustrated
narrated edited photographed co-written co-directed voiced`)

// personLeads are words after which a list of people follows.
var personLeads = set(`starring stars featuring co-starring co-presidents by-line`)

// minConceptSentences is how many sentences of a chunk must name a noun phrase for it
// to be a CONCEPT entity.
const minConceptSentences = 2

// minTypeVotes is the evidence a type needs; below it the type is OTHER, so
// that a weak cue alone ("from X") does not decide.
const minTypeVotes = 1.0

func (e *entity) typ() string {
	best, score := TypeOther, minTypeVotes-1e-9
	for _, t := range typeOrder {
		if v := e.votes[t]; v > score {
			best, score = t, v
		}
	}
	return best
}

type pairStats struct {
	a, b  *entity // a is the source of a RELATED_TO relationship
	count int
	desc  string
	verbs map[string]int // type → sentences; a "<" prefix means b → a
}

// finish caps the entities and builds the relationships.
func (x *extractor) finish(ents []*entity) ([]Entity, []Relationship) {
	slices.SortStableFunc(ents, func(a, b *entity) int {
		switch {
		case a.title != b.title:
			if a.title {
				return -1
			}
			return 1
		case a.mentions != b.mentions:
			return cmp.Compare(b.mentions, a.mentions)
		case a.proper != b.proper:
			if a.proper {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.first, b.first), cmp.Compare(a.key, b.key))
	})
	aliases := x.aliasesOf(ents)
	if limit := max(1, x.cfg.maxEntities-len(aliases)); len(ents) > limit {
		ents = ents[:limit]
	}
	kept := map[string]*entity{}
	out := make([]Entity, len(ents))
	var title *entity
	for i, e := range ents {
		kept[e.key] = e
		out[i] = Entity{Name: e.name, Type: e.typ(), Description: e.description}
		if e.title {
			title = e
		}
	}
	var aliasRels []Relationship
	if title != nil {
		for _, a := range aliases {
			if kept[normalize.Name(a)] == nil {
				out = append(out, Entity{Name: a, Type: title.typ(), Description: title.description})
			}
			aliasRels = append(aliasRels, Relationship{Source: a, Target: title.name, Type: AliasOf,
				Description: a + " is another name of " + title.name + ".", Strength: 1})
		}
	}

	pairs := map[[2]string]*pairStats{}
	pair := func(a, b *entity) *pairStats {
		k := [2]string{a.key, b.key}
		if a.key > b.key {
			k = [2]string{b.key, a.key}
		}
		p := pairs[k]
		if p == nil {
			p = &pairStats{a: a, b: b, verbs: map[string]int{}}
			pairs[k] = p
		}
		return p
	}
	if title != nil {
		for _, e := range ents {
			if e != title {
				p := pair(title, e)
				p.count = len(e.sents)
				if d := x.describing(e.sents); d < len(x.sents) {
					p.desc = trimDescription(x.text[x.sents[d].start:x.sents[d].end])
				}
			}
		}
	}
	bySent := make([][]mention, len(x.sents))
	for _, m := range x.mentions {
		if kept[m.key] != nil {
			bySent[m.sent] = append(bySent[m.sent], m)
		}
	}
	for i, ms := range bySent {
		seen := map[string]bool{}
		var uniq []mention
		for _, m := range ms {
			if !seen[m.key] {
				seen[m.key] = true
				uniq = append(uniq, m)
			}
		}
		for u := 0; u < len(uniq); u++ {
			for v := u + 1; v < len(uniq); v++ {
				a, b := kept[uniq[u].key], kept[uniq[v].key]
				p := pair(a, b)
				if !a.title && !b.title {
					p.count++
					if p.desc == "" {
						p.desc = trimDescription(x.text[x.sents[i].start:x.sents[i].end])
					}
				}
			}
		}
		// A verb between consecutive mentions ("directed by", "born in").
		for u := 0; u+1 < len(ms); u++ {
			m1, m2 := ms[u], ms[u+1]
			if m1.key == m2.key || m1.te > m2.ts {
				continue
			}
			if typ, reversed, ok := x.verbBetween(x.sents[i], m1, m2); ok {
				p := pair(kept[m1.key], kept[m2.key])
				// Record direction relative to p.a.
				forward := (p.a.key == m1.key) != reversed
				if !forward {
					typ = "<" + typ
				}
				p.verbs[typ]++
			}
		}
	}

	var rels []Relationship
	type ranked struct {
		r         Relationship
		count     int
		typed     bool
		titleLink bool
	}
	var rs []ranked
	for _, p := range pairs {
		if p.count == 0 {
			continue
		}
		src, dst, typ := p.a, p.b, RelatedTo
		if len(p.verbs) > 0 {
			best, n := "", 0
			for t, c := range p.verbs {
				if c > n || c == n && t < best {
					best, n = t, c
				}
			}
			typ = best
			if strings.HasPrefix(best, "<") {
				typ = best[1:]
				src, dst = dst, src
			}
		}
		rs = append(rs, ranked{
			r:         Relationship{Source: src.name, Target: dst.name, Type: typ, Description: p.desc, Strength: 1 - math.Pow(0.5, float64(p.count))},
			count:     p.count,
			typed:     typ != RelatedTo,
			titleLink: p.a.title || p.b.title,
		})
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		switch {
		case a.titleLink != b.titleLink: // the links of the title survive the cap first
			if a.titleLink {
				return -1
			}
			return 1
		case a.count != b.count:
			return cmp.Compare(b.count, a.count)
		case a.typed != b.typed:
			if a.typed {
				return -1
			}
			return 1
		}
		return cmp.Or(strings.Compare(a.r.Source, b.r.Source), strings.Compare(a.r.Target, b.r.Target), strings.Compare(a.r.Type, b.r.Type))
	})
	rels = append(rels, aliasRels...)
	for _, r := range rs {
		if len(rels) >= x.cfg.maxRelationships {
			break
		}
		rels = append(rels, r.r)
	}
	return out, rels
}

// aliasesOf returns the configured aliases of the title entity, once each, none
// naming the title itself.
func (x *extractor) aliasesOf(ents []*entity) []string {
	if len(x.cfg.aliases) == 0 {
		return nil
	}
	title := ""
	for _, e := range ents {
		if e.title {
			title = e.key
		}
	}
	if title == "" {
		return nil
	}
	seen := map[string]bool{title: true}
	var out []string
	for _, a := range x.cfg.aliases {
		if k := normalize.Name(a); k != "" && !seen[k] {
			seen[k] = true
			out = append(out, a)
		}
	}
	return out
}

// verbBetween finds a relationship verb between two consecutive mentions of
// a sentence, at most six words apart with no clause punctuation between:
// "Nolan directed Inception" → DIRECTED; "born in" → BORN_IN; a verb followed
// by "by" reverses the direction ("Inception was directed by Nolan" →
// Nolan DIRECTED Inception).
func (x *extractor) verbBetween(s sentence, m1, m2 mention) (string, bool, bool) {
	gap := s.toks[m1.te:m2.ts]
	if len(gap) == 0 || len(gap) > 6 {
		return "", false, false
	}
	between := x.text[s.toks[m1.te-1].end:s.toks[m2.ts].start]
	if strings.ContainsAny(between, ";()[]:") {
		return "", false, false
	}
	for k, t := range gap {
		if auxiliaries[t.lower] || strings.HasSuffix(t.lower, "ly") || t.lower == "who" || t.lower == "which" {
			continue
		}
		isVerb := verbs[t.lower] || (!t.cap && strings.HasSuffix(t.lower, "ed") && len(t.lower) >= 5 && !notVerbsEd[t.lower])
		if !isVerb {
			// A noun before the verb ("a British film directed by X") means
			// the verb belongs to that noun, not to the first mention.
			return "", false, false
		}
		verb := strings.ToUpper(strings.ReplaceAll(t.lower, "-", "_"))
		rest := gap[k+1:]
		for _, r := range rest {
			if r.lower == "by" { // passive: "founded in 1777 by William Bass"
				return verb, true, true
			}
		}
		switch {
		case len(rest) == 0:
			return verb, false, true
		case prepositions[rest[0].lower] && onlyDeterminers(rest[1:]):
			return verb + "_" + strings.ToUpper(rest[0].lower), false, true
		case onlyDeterminers(rest):
			return verb, false, true
		}
		return "", false, false
	}
	return "", false, false
}

// listLead returns the index of the token before the list that the name at
// token ts belongs to ("stars A, B, and C" → "stars" for C), or ts-1 when the
// name is not a later item of a list; -1 at the start of the sentence.
func (x *extractor) listLead(s sentence, ts int) int {
	j := ts
	for steps := 0; j > 0 && steps < 20; steps++ {
		p := j - 1
		gap := strings.TrimSpace(x.text[s.toks[p].end:s.toks[j].start])
		switch {
		case gap == "," && s.toks[p].cap:
		case gap == "" && (s.toks[p].lower == "and" || s.toks[p].lower == "or") && p > 0:
			p--
			if !s.toks[p].cap {
				return j - 1
			}
		default:
			return j - 1
		}
		for p > 0 && s.toks[p-1].cap && x.gapJoins(s, p) {
			p--
		}
		j = p
	}
	return j - 1
}

func onlyDeterminers(ts []token) bool {
	for _, t := range ts {
		if !determiners[t.lower] {
			return false
		}
	}
	return true
}

// placeVerbs before "in" say that a place follows ("born in Faversham").
var placeVerbs = set(`born died located based situated raised lived headquartered buried grew settled`)

// placeChain votes PLACE for a name in "in A, B, C" (each of A, B, C), the
// way places are written with their regions ("in Faversham, Kent"), and
// for "born in A".
func (x *extractor) placeChain(e *entity, s sentence, m mention) {
	j := m.ts
	// a comma-separated name follows or precedes
	inChain := m.te < len(s.toks) && strings.TrimSpace(x.text[s.toks[m.te-1].end:s.toks[m.te].start]) == "," && s.toks[m.te].cap
	for steps := 0; steps < 4 && j > 0; steps++ {
		p := j - 1
		gap := strings.TrimSpace(x.text[s.toks[p].end:s.toks[j].start])
		if gap == "" && (s.toks[p].lower == "in" || s.toks[p].lower == "at" || s.toks[p].lower == "near") {
			switch {
			case p > 0 && placeVerbs[s.toks[p-1].lower]:
				e.votes[TypePlace] += 1.5
			case inChain:
				e.votes[TypePlace]++
			}
			return
		}
		if gap != "," || !s.toks[p].cap {
			return
		}
		inChain = true
		for p > 0 && s.toks[p-1].cap && x.gapJoins(s, p) {
			p--
		}
		j = p
	}
}
