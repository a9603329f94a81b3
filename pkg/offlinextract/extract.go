package offlinextract

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/normalize"
	"github.com/graphrag/graphrag/pkg/textseg"
)

// Entity types.
const (
	TypePerson       = "PERSON"
	TypePlace        = "PLACE"
	TypeOrganization = "ORGANIZATION"
	TypeWork         = "WORK"
	TypeEvent        = "EVENT"
	TypeDate         = "DATE"
	TypeConcept      = "CONCEPT"
	// TypeOther is the graph store's fallback type, which wins an entity's type
	// only when no chunk gives another.
	TypeOther = graphstore.TypeOther
)

// RelatedTo is the type of a relationship with no verb found.
const RelatedTo = "RELATED_TO"

// Defaults of the caps.
const (
	DefaultMaxEntities      = 25
	DefaultMaxRelationships = 40
	// MaxDescription is the longest description in bytes (before "…").
	MaxDescription = 300
)

// Entity is a named thing found in a chunk. Name is a surface form; callers
// key entities by normalize.Name(Name).
type Entity struct {
	Name, Type, Description string
}

// Relationship links two entities (by surface Name) of the same chunk.
type Relationship struct {
	Source, Target, Type, Description string
	Strength                          float64 // 1 - 0.5^n for n sentences of co-occurrence, in (0, 1)
}

type config struct {
	maxEntities, maxRelationships int
	dates, nounPhrases            bool
	aliases                       []string
}

// Option configures Extract.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithMaxEntities caps the entities of a chunk (default 25; the title is
// always kept). Values below 1 mean the default.
func WithMaxEntities(n int) Option {
	return optionFunc(func(c *config) {
		if n > 0 {
			c.maxEntities = n
		}
	})
}

// WithMaxRelationships caps the relationships of a chunk (default 40).
// Values below 1 mean the default.
func WithMaxRelationships(n int) Option {
	return optionFunc(func(c *config) {
		if n > 0 {
			c.maxRelationships = n
		}
	})
}

// WithDates makes years ("1995") and months entities of type DATE (default
// off: a year links every document that mentions it, which makes hubs
// without meaning in the graph).
func WithDates(on bool) Option { return optionFunc(func(c *config) { c.dates = on }) }

// WithAliases gives other names of the title entity (DocumentSubject.Aliases): each
// becomes an entity of the chunk with an ALIAS_OF relationship to the title, so that
// the graph joins the passages that name the subject either way. They count against
// the caps, after the title.
func WithAliases(names ...string) Option {
	return optionFunc(func(c *config) { c.aliases = append(c.aliases, names...) })
}

// WithNounPhrases turns the CONCEPT noun phrases on or off (default on).
func WithNounPhrases(on bool) Option { return optionFunc(func(c *config) { c.nounPhrases = on }) }

type token struct {
	text, lower string
	start, end  int // byte offsets in the text
	cap         bool
	allCaps     bool
	line        int  // byte offset of the start of the token's line
	lineStart   bool // first word of a line or a column (see placeOnLine)
	label       bool // part of a field label ("Reporter:", see markLabels)
	calendar    bool // a month or weekday abbreviation in a date, a time zone (see markCalendar)
	code        codeKind
}

type mention struct {
	key, surface string
	sent         int
	ts, te       int // token range in the sentence
	start        int // byte offset in the text, for ordering
	proper       bool
	typ          string // the type the text states (a Chinese name's type word), or ""
}

type entity struct {
	key, name   string
	surfaces    map[string]int
	first       int // byte offset of the first mention (-1 for a title not mentioned)
	sents       []int
	mentions    int
	proper      bool
	title       bool
	votes       map[string]float64
	description string
}

type sentence struct {
	start, end int
	toks       []token
}

type extractor struct {
	cfg       config
	text      string
	sents     []sentence
	capsMid   map[string]bool // lower forms of words capitalized inside a sentence
	titleKeys map[string]bool // normalized words of the title
	// kebabNames are the lower forms of hyphenated lower-case words that the chunk uses
	// as names at least once (see nameUse).
	kebabNames map[string]bool
	// families are the normalized family names the chunk speaks of ("the Fenwick
	// family"): names that end with one are people.
	families map[string]bool
	mentions []mention
	// prevEnd and line are where the last token ended and where its line began, as
	// tokenize goes (see placeOnLine).
	prevEnd, line int
}

var disambiguator = regexp.MustCompile(`\s*\(([^()]*)\)\s*$`)

// Extract finds the entities and relationships of one chunk of text. title
// is the title of the chunk's document ("" if none): it is an entity of every
// chunk of that document and is related to every other entity of the chunk.
// A trailing parenthetical of the title ("The Prestige (film)") is not part
// of its name but a cue of its type. The result is deterministic.
func Extract(title, text string, opts ...Option) ([]Entity, []Relationship) {
	cfg := config{maxEntities: DefaultMaxEntities, maxRelationships: DefaultMaxRelationships, nounPhrases: true}
	for _, o := range opts {
		o.apply(&cfg)
	}
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	title = strings.Join(strings.Fields(strings.ToValidUTF8(title, "")), " ")
	titleCue := ""
	if m := disambiguator.FindStringSubmatchIndex(title); m != nil && m[0] > 0 {
		titleCue = strings.ToLower(title[m[2]:m[3]])
		title = title[:m[0]]
	}
	x := newExtractor(cfg, text)
	for w := range strings.FieldsSeq(normalize.Name(title)) {
		x.titleKeys[w] = true
	}
	x.tokenize()
	for i := range x.sents {
		if x.heading(i) {
			continue // a heading labels the text; the prose below it names the entities
		}
		x.properNouns(i)
		x.cjkNames(i)
		x.identifiers(i)
		if cfg.nounPhrases {
			x.nounPhrases(i)
		}
		if cfg.dates {
			x.dates(i)
		}
	}
	ents := x.entities(title, titleCue)
	if len(ents) == 0 {
		return nil, nil
	}
	return x.finish(ents)
}

func newExtractor(cfg config, text string) *extractor {
	return &extractor{cfg: cfg, text: text, capsMid: map[string]bool{}, titleKeys: map[string]bool{}, kebabNames: map[string]bool{},
		families: map[string]bool{}}
}

func (x *extractor) tokenize() {
	for _, sp := range textseg.Sentences(x.text) {
		s := sentence{start: sp.Start, end: sp.End}
		var raw []token
		for _, w := range textseg.ScriptWords(x.text[sp.Start:sp.End]) {
			raw = append(raw, token{text: w.Text(x.text[sp.Start:sp.End]), start: sp.Start + w.Start, end: sp.Start + w.End})
		}
		for _, t := range x.joinCodes(raw) {
			t.lower = strings.ToLower(t.text)
			t.code = classifyCode(t.text)
			r, _ := utf8.DecodeRuneInString(t.text)
			t.cap = unicode.IsUpper(r) || unicode.IsTitle(r)
			letters, upper := 0, 0
			for _, r := range t.text {
				if unicode.IsLetter(r) {
					letters++
					if unicode.IsUpper(r) {
						upper++
					}
				}
			}
			t.allCaps = letters >= 2 && upper == letters
			x.placeOnLine(&t, len(s.toks) > 0)
			s.toks = append(s.toks, t)
		}
		x.markLabels(&s)
		x.markCalendar(&s)
		for k, t := range s.toks {
			if t.code == codeKebab && !x.kebabNames[t.lower] && x.nameUse(s, k) {
				x.kebabNames[t.lower] = true
			}
		}
		for k := 1; k < len(s.toks); k++ {
			if (s.toks[k].lower == "family" || s.toks[k].lower == "families") && s.toks[k-1].cap && x.gapJoins(s, k) {
				x.families[normalize.Name(s.toks[k-1].text)] = true
			}
		}
		// Words capitalized inside the sentence are names there; this lets a
		// sentence-initial single word count as a name (see properNouns).
		for k, t := range s.toks {
			if k > 0 && t.cap && !t.label && !x.afterOpener(s, k) {
				x.capsMid[t.lower] = true
			}
		}
		x.sents = append(x.sents, s)
	}
}

// afterOpener reports whether token k of s opens a line or follows a colon or
// an opening quote, where a capital letter starts a new phrase as at a sentence
// start.
func (x *extractor) afterOpener(s sentence, k int) bool {
	if s.toks[k].lineStart {
		return true
	}
	gap := strings.TrimSpace(x.text[s.toks[k-1].end:s.toks[k].start])
	return strings.HasSuffix(gap, ":") || strings.HasSuffix(gap, "\"") || strings.HasSuffix(gap, "“")
}

// quotedName reports whether tokens [start, end) of s are a whole quoted span
// inside a sentence: a quote before, a closing quote right after, and a word before
// the opening quote.
func (x *extractor) quotedName(s sentence, start, end int) bool {
	if start == 0 {
		return false
	}
	before := strings.TrimSpace(x.text[s.toks[start-1].end:s.toks[start].start])
	if before != "\"" && before != "“" {
		return false
	}
	after := x.text[s.toks[end-1].end:]
	if end < len(s.toks) {
		after = x.text[s.toks[end-1].end:s.toks[end].start]
	}
	return strings.HasPrefix(after, "\"") || strings.HasPrefix(after, "”")
}

// gapJoins reports whether tokens k-1 and k of s may be in one name: only
// white space between them, "&" ("Procter & Gamble"), or the period of an
// initial ("J. K. Rowling"); never a line break or a column gap (hardBreak).
func (x *extractor) gapJoins(s sentence, k int) bool {
	prev := s.toks[k-1]
	gap := x.text[prev.end:s.toks[k].start]
	if hardBreak(gap) {
		return false
	}
	switch strings.TrimSpace(gap) {
	case "":
		return gap != "" && !strings.Contains(gap, "\n\n")
	case "&":
		return true
	case "'", "’":
		// A plural possessive inside an organization's name: "Fishers' Cooperative".
		cur := s.toks[k]
		return gap[0] != ' ' && strings.HasSuffix(prev.lower, "s") && cur.cap && orgCues[cur.lower]
	case ".":
		return prev.cap && (utf8.RuneCountInString(prev.text) == 1 || titleAbbreviations[prev.lower])
	}
	return false
}

func (x *extractor) isNameWord(t token) bool {
	if !t.cap || t.label || t.calendar || t.code == codeAddress || t.lower == "i" || weekdays[t.lower] || months[t.lower] && !x.cfg.dates {
		return false
	}
	// "Los Angeles-based", "Malayalam-language": an adjective, not a name.
	if k := strings.LastIndexAny(t.text, "-‐"); k > 0 {
		r, _ := utf8.DecodeRuneInString(t.text[k+1:])
		if unicode.IsLower(r) {
			return false
		}
	}
	return true
}

// possessive reports a token that ends in "'s": a name ends there, unless an
// organization's cue word follows ("Women's Institute").
func possessive(t token) bool {
	return strings.HasSuffix(t.lower, "'s") || strings.HasSuffix(t.lower, "’s")
}

// properNouns finds the names of sentence i: maximal runs of capitalized
// words, with connectors ("of", "de", "von", ...; at most two in a row) only
// between capitalized words, and "and" only inside a name that already has
// a connector ("Department of Health and Human Services").
//
// At the start of a sentence (or after a colon or an opening quote) capitals
// are not evidence: a first word from the common-word list is dropped ("The
// Beatles" → "Beatles", "In Poland" → "Poland"), and a name of a single other
// word is kept only if that word is capitalized inside some sentence of the
// chunk, is a word of the title, or is an acronym.
func (x *extractor) properNouns(i int) {
	s := x.sents[i]
	upper := 0
	for _, t := range s.toks {
		if t.allCaps {
			upper++
		}
	}
	shouting := upper*2 > len(s.toks) && len(s.toks) > 2
	for k := 0; k < len(s.toks); {
		if !x.isNameWord(s.toks[k]) {
			k++
			continue
		}
		start, end := k, k+1
		hasConnector := false
		ofAt := -1 // the first "of" joining two names
		for end < len(s.toks) && x.gapJoins(s, end) && (!possessive(s.toks[end-1]) || orgCues[s.toks[end].lower] && s.toks[end].cap) {
			if x.isNameWord(s.toks[end]) {
				end++
				continue
			}
			c := end
			for c < len(s.toks) && c-end < 2 && (connectors[s.toks[c].lower] || (s.toks[c].lower == "and" && hasConnector && x.hasOrgCue(s, start, end))) && !s.toks[c].cap && x.gapJoins(s, c) {
				c++
			}
			if c > end && c < len(s.toks) && x.isNameWord(s.toks[c]) && x.gapJoins(s, c) {
				if s.toks[end].lower == "of" && ofAt < 0 {
					ofAt = end
				}
				hasConnector = true
				end = c + 1
				continue
			}
			break
		}
		k = end
		if end < len(s.toks) && s.toks[end].cap && s.toks[end].code == codeNone && !x.isNameWord(s.toks[end]) && x.gapJoins(s, end) && strings.ContainsAny(s.toks[end].text, "-‐") {
			continue // "Los Angeles-based": the name is cut off by the adjective
		}
		// A capital after an opening quote proves nothing ("He said: "Go""), unless
		// the quote closes right after the name mid-sentence: the title of a work, as in
		// the soap opera "Neighbours".
		initial := start == 0 || (x.afterOpener(s, start) && !x.quotedName(s, start, end))
		if initial {
			orig := start
			// "I'm Cehel" → "Cehel"; a quoted "I'm Your Aunt" stays whole.
			for start < end && (commonWords[s.toks[start].lower] || connectors[s.toks[start].lower] || pronounI[s.toks[start].lower]) {
				start++
			}
			if start == end {
				continue
			}
			// "Starring Rajendra Prasad", "Located in …": a participle that
			// opens a sentence is no part of a name.
			if start < end-1 && (isParticiple(s.toks[start].lower) || strings.HasSuffix(s.toks[start].lower, "ing")) && !x.capsMid[s.toks[start].lower] {
				start++
			}
			// A capital after a dropped word is real evidence again.
			initial = start == orig
		}
		if end-start == 1 && pronounI[s.toks[start].lower] {
			continue // "; I'll send it"
		}
		if end-start == 1 && initial {
			t := s.toks[start]
			// An identifier ("INC-2589") is a name at the start of a line too.
			if !x.capsMid[t.lower] && !x.titleKeys[normalize.Name(t.text)] && t.code != codeID && (!t.allCaps || shouting || len([]rune(t.text)) > 6) {
				continue
			}
		}
		if shouting && end-start == 1 {
			continue
		}
		if x.attributiveDemonym(s, start, end) {
			continue
		}
		// "Mayor George Moscone" → "George Moscone": the office is a type cue
		// (see vote), not part of the name.
		if end-start >= 3 && (personTitles[s.toks[start].lower] || personCues[s.toks[start].lower]) && x.isNameWord(s.toks[start+1]) && !connectors[s.toks[start+1].lower] {
			start++
		}
		if split := x.ofSplit(s, start, ofAt, end); split > 0 {
			x.addMention(i, start, ofAt, true)
			x.addMention(i, split, end, true)
			continue
		}
		x.addMention(i, start, end, true)
	}
}

// ofSplit returns where the second name starts when "of" joins two full names
// ("Trent Reznor of Nine Inch Nails", "Mick Jagger of the Rolling Stones"), else 0:
// a name of two words or more before "of" that is no organization, place, event or
// work ("Royal Bank of Scotland", "State University of New York" stay whole).
func (x *extractor) ofSplit(s sentence, start, ofAt, end int) int {
	if ofAt < 0 || ofAt-start < 2 || x.hasOrgCue(s, start, ofAt) {
		return 0
	}
	for _, t := range s.toks[start:ofAt] {
		if placeCues[t.lower] || eventCues[t.lower] || workCues[t.lower] {
			return 0
		}
	}
	split := ofAt + 1
	for split < end && connectors[s.toks[split].lower] {
		split++
	}
	if split >= end {
		return 0
	}
	return split
}

// addMention records tokens [ts, te) of sentence i as a mention; a
// possessive "'s" is not part of the name.
func (x *extractor) addMention(i, ts, te int, proper bool) {
	s := x.sents[i]
	from, to := s.toks[ts].start, s.toks[te-1].end
	surface := x.text[from:to]
	for _, suf := range []string{"'s", "’s"} {
		surface = strings.TrimSuffix(surface, suf)
	}
	surface = strings.Join(strings.Fields(surface), " ")
	key := normalize.Name(surface)
	if utf8.RuneCountInString(key) < 2 || commonWords[key] || notNames[key] {
		return
	}
	x.mentions = append(x.mentions, mention{key: key, surface: surface, sent: i, ts: ts, te: te, start: from, proper: proper})
}

// nounPhrases finds CONCEPT candidates in sentence i: after a determiner,
// two or three lower-case words that are not function words, adverbs (-ly)
// or verbs of the list, the last not a participle (-ed, -ing): "a collectible
// dice game", "the demon algorithm". Heuristic, not a parser: it favours
// precision, and concepts rank below names when the entity cap applies.
func (x *extractor) nounPhrases(i int) {
	s := x.sents[i]
	for k := 0; k < len(s.toks)-2; k++ {
		if !determiners[s.toks[k].lower] {
			continue
		}
		end := k + 1
		for end < len(s.toks) && end-k <= 3 && x.gapJoins(s, end) && nounWord(s.toks[end]) && !x.identifier(s.toks[end]) {
			end++
		}
		for end-(k+1) >= 2 && isParticiple(s.toks[end-1].lower) {
			end--
		}
		// "the film reunites Nolan", "the band took an": a last word before a
		// determiner, or in -s before a name, is a verb with its object.
		if end-(k+1) >= 2 && end < len(s.toks) && (determiners[s.toks[end].lower] ||
			strings.HasSuffix(s.toks[end-1].lower, "s") && s.toks[end].cap) {
			end--
		}
		if end-(k+1) >= 2 {
			x.addMention(i, k+1, end, false)
			k = end - 1
		}
	}
}

func nounWord(t token) bool {
	if t.cap || commonWords[t.lower] || auxiliaries[t.lower] || verbs[t.lower] || nounPhraseStop[t.lower] || determiners[t.lower] || strings.HasSuffix(t.lower, "ly") {
		return false
	}
	for _, r := range t.text {
		if !unicode.IsLetter(r) && r != '-' {
			return false
		}
	}
	return utf8.RuneCountInString(t.text) > 1
}

func isParticiple(w string) bool {
	return (strings.HasSuffix(w, "ed") || strings.HasSuffix(w, "ing")) && len(w) > 4 || irregularParticiples[w]
}

// dates finds years (1000-2099) as DATE mentions.
func (x *extractor) dates(i int) {
	s := x.sents[i]
	for k, t := range s.toks {
		if len(t.text) == 4 && (strings.HasPrefix(t.text, "1") || strings.HasPrefix(t.text, "20")) && allDigits(t.text) {
			x.mentions = append(x.mentions, mention{key: t.text, surface: t.text, sent: i, ts: k, te: k + 1, start: t.start, proper: true})
		}
	}
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// demonymSuffixes end adjectives of peoples and languages ("British",
// "Akkadian", "Sinhalese").
var demonymSuffixes = []string{"an", "ish", "ese", "ic", "i"}

// attributiveDemonym reports a name of one word (or a direction and one
// word: "South Korean") that is an adjective here: it
// ends like a demonym and a lower-case word follows it ("British comedy
// film", "Sinhalese folklore"). Such words would link every document about
// anything British; the noun they qualify is the entity, if any.
func (x *extractor) attributiveDemonym(s sentence, start, end int) bool {
	if end-start > 2 || end >= len(s.toks) || !x.gapJoins(s, end) {
		return false
	}
	if end-start == 2 && !directionWords[s.toks[start].lower] {
		return false // only "South Korean", "West German"
	}
	next := s.toks[end]
	if next.cap || commonWords[next.lower] || auxiliaries[next.lower] || verbs[next.lower] {
		return false
	}
	for _, suf := range demonymSuffixes {
		if strings.HasSuffix(s.toks[end-1].lower, suf) {
			return true
		}
	}
	return false
}

var directionWords = set(`north south east west northern southern eastern western central`)

// hasOrgCue reports whether tokens [from, to) of s contain an organization cue word.
func (x *extractor) hasOrgCue(s sentence, from, to int) bool {
	for _, t := range s.toks[from:to] {
		if orgCues[t.lower] {
			return true
		}
	}
	return false
}
