package gencorpus

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// mentionIndex records, for every entity, the documents that contain one of its forms
// (case-sensitive, on word boundaries), and for each document which forms.
type mentionIndex struct {
	docs []string           // title + text
	in   []map[int]bool     // entity → docs
	form []map[int][]string // entity → doc → forms found
}

func newMentionIndex(w *world, docs []Doc) *mentionIndex {
	m := &mentionIndex{in: make([]map[int]bool, len(w.entities)), form: make([]map[int][]string, len(w.entities))}
	for _, d := range docs {
		m.docs = append(m.docs, d.Title+"\n"+d.Text)
	}
	for e, ent := range w.entities {
		m.in[e] = map[int]bool{}
		m.form[e] = map[int][]string{}
		for di, text := range m.docs {
			for _, f := range ent.forms {
				if containsWord(text, f) {
					m.in[e][di] = true
					m.form[e][di] = append(m.form[e][di], f)
				}
			}
		}
	}
	return m
}

func isWordByte(c byte) bool {
	return c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// containsWord reports whether s holds f with no letter, digit, '-' or '_' on either side.
func containsWord(s, f string) bool {
	for off := 0; ; {
		i := strings.Index(s[off:], f)
		if i < 0 {
			return false
		}
		i += off
		j := i + len(f)
		if (i == 0 || !isWordByte(s[i-1])) && (j == len(s) || !isWordByte(s[j])) {
			return true
		}
		off = i + 1
	}
}

// chain is a walk over facts: start entity, then one fact per hop.
type chain struct {
	start int
	facts []int
}

func (c chain) signature(w *world) string {
	var b []string
	for _, f := range c.facts {
		b = append(b, w.facts[f].rel.String())
	}
	return strings.Join(b, ">")
}

var relationsFrom = map[kind][]relation{
	kIncident: {relIncidentService, relIncidentLead},
	kPerson:   {relPersonTeam, relPersonOffice},
	kTeam:     {relTeamManager},
	kService:  {relServiceOwner, relServiceSite, relServiceVendor, relServiceStore},
	kSite:     {relSiteCity},
	kVendor:   {relVendorContact},
	kCustomer: {relCustomerAM, relCustomerService},
	kProject:  {relProjectService, relProjectLead},
}

// walks lists every chain of exactly hops facts from start that visits no entity twice.
func (w *world) walks(start, hops int) []chain {
	var out []chain
	var rec func(cur int, facts []int, seen map[int]bool)
	rec = func(cur int, facts []int, seen map[int]bool) {
		if len(facts) == hops {
			out = append(out, chain{start: start, facts: slices.Clone(facts)})
			return
		}
		for _, rel := range relationsFrom[w.entities[cur].kind] {
			f := w.factOf(rel, cur)
			if f < 0 || seen[w.facts[f].dst] {
				continue
			}
			seen[w.facts[f].dst] = true
			rec(w.facts[f].dst, append(facts, f), seen)
			delete(seen, w.facts[f].dst)
		}
	}
	rec(start, nil, map[int]bool{start: true})
	return out
}

// Question templates: np phrases a hop inside a longer question, q asks for its target.
var (
	npTemplates = [numRelations][]string{
		relIncidentService: {"the service that went down in %s", "the system hit by %s", "the service at the centre of %s"},
		relIncidentLead:    {"the person who ran the response to %s", "whoever was in charge during %s", "the person who coordinated %s"},
		relServiceOwner:    {"the team that owns %s", "the team responsible for %s", "the group looking after %s"},
		relTeamManager:     {"the manager of %s", "the person heading %s", "the boss of %s"},
		relPersonTeam:      {"the team %s is on", "the team that %s belongs to"},
		relPersonOffice:    {"the office %s works from", "the site where %s is based"},
		relServiceSite:     {"the data center hosting %s", "the site %s is deployed in"},
		relSiteCity:        {"the city where %s is located", "the town %s is in"},
		relServiceVendor:   {"the vendor behind %s", "the company supplying a component of %s"},
		relVendorContact:   {"our contact at %s", "the person we deal with at %s"},
		relCustomerAM:      {"the account manager of %s", "the person managing the %s account"},
		relCustomerService: {"the service %s integrates with", "the system the %s integration uses"},
		relProjectService:  {"the service %s is migrating", "the system targeted by %s"},
		relProjectLead:     {"the lead of %s", "the person leading %s"},
		relServiceStore:    {"the datastore behind %s", "the database used by %s"},
	}
	qTemplates = [numRelations][]string{
		relIncidentService: {"Which service went down in %s?", "What system was hit by %s?"},
		relIncidentLead:    {"Who ran the response to %s?", "Who was in charge during %s?", "Who coordinated %s?"},
		relServiceOwner:    {"Which team owns %s?", "Which team is responsible for %s?", "What group looks after %s?"},
		relTeamManager:     {"Who manages %s?", "Who is the manager of %s?", "Who heads %s?"},
		relPersonTeam:      {"Which team is %s on?", "What team does %s belong to?"},
		relPersonOffice:    {"Which office does %s work from?", "Where is %s based?"},
		relServiceSite:     {"Which data center hosts %s?", "In which site is %s deployed?"},
		relSiteCity:        {"In which city is %s located?", "What town is %s in?"},
		relServiceVendor:   {"Which vendor is behind %s?", "Which company supplies a component of %s?"},
		relVendorContact:   {"Who is our contact at %s?", "Whom do we deal with at %s?"},
		relCustomerAM:      {"Who is the account manager of %s?", "Who manages the %s account?"},
		relCustomerService: {"Which service does %s integrate with?", "What system does the %s integration use?"},
		relProjectService:  {"Which service is %s migrating?", "What system is targeted by %s?"},
		relProjectLead:     {"Who leads %s?", "Who is leading %s?"},
		relServiceStore:    {"Which datastore is behind %s?", "What database does %s use?"},
	}
)

// startPhrases are the ways a question can name its start entity; each must occur in
// the first gold document.
func (w *world) startPhrases(e int) []string {
	ent := w.entities[e]
	switch ent.kind {
	case kIncident:
		for _, in := range w.incidents {
			if in.id == e {
				return []string{in.key, "incident " + in.key, fmt.Sprintf("the outage %s reported on %s", w.pname(in.reporter), date(in.day))}
			}
		}
	case kPerson:
		return []string{ent.name}
	}
	return ent.forms
}

var stopwords = map[string]bool{}

func init() {
	for s := range strings.FieldsSeq("a an the of in on at to for by that which who whom what where is was does do did with from whose it its and or be are this there we our us one s") {
		stopwords[s] = true
	}
}

// stems are the content words of s, lower-cased and cut to five letters.
func stems(s string) map[string]bool {
	out := map[string]bool{}
	for _, t := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if stopwords[t] {
			continue
		}
		if len(t) > 5 {
			t = t[:5]
		}
		out[t] = true
	}
	return out
}

// valid reports why a chain cannot be a question, or "" when it can.
func (ds *Dataset) valid(c chain) string {
	w, m := ds.w, ds.index
	docs := map[int]bool{}
	for i, f := range c.facts {
		ft := w.facts[f]
		if docs[ft.doc] {
			return "two hops in one document"
		}
		docs[ft.doc] = true
		if !m.in[ft.src][ft.doc] || !m.in[ft.dst][ft.doc] {
			return "gold document does not name both entities"
		}
		for d := range m.in[ft.src] {
			if d != ft.doc && m.in[ft.dst][d] {
				return "another document names both entities of a hop"
			}
		}
		if i > 0 {
			prev := w.facts[c.facts[i-1]].doc
			shared := false
			for _, f := range m.form[ft.src][ft.doc] {
				if slices.Contains(m.form[ft.src][prev], f) {
					shared = true
				}
			}
			if !shared {
				return "bridge named differently in adjacent documents"
			}
		}
	}
	return ""
}

// phrase renders the question of chain c with template choice picks (one per hop) and
// start phrase sp.
func (ds *Dataset) phrase(c chain, sp string, picks []int) string {
	w := ds.w
	s := sp
	for i, f := range c.facts {
		rel := w.facts[f].rel
		if i == len(c.facts)-1 {
			t := qTemplates[rel]
			s = fmt.Sprintf(t[picks[i]%len(t)], s)
		} else {
			t := npTemplates[rel]
			s = fmt.Sprintf(t[picks[i]%len(t)], s)
		}
	}
	return s
}

// entitiesIn reports whether q names any entity of chain c other than its start.
func (ds *Dataset) namesInner(c chain, q string) bool {
	w := ds.w
	for _, f := range c.facts {
		for _, form := range w.entities[w.facts[f].dst].forms {
			if containsWord(q, form) {
				return true
			}
		}
	}
	return false
}

// overlap counts the question's content words found in the last gold document, leaving
// out the words of the bridge entity's names.
func (ds *Dataset) overlap(c chain, q string) int {
	w := ds.w
	last := w.facts[c.facts[len(c.facts)-1]]
	skip := map[string]bool{}
	for _, f := range w.entities[last.src].forms {
		for s := range stems(f) {
			skip[s] = true
		}
	}
	doc := stems(ds.index.docs[last.doc])
	n := 0
	for s := range stems(q) {
		if !skip[s] && doc[s] {
			n++
		}
	}
	return n
}

// compose picks the questions: 60 % two hops, 30 % three, the rest four; round robin
// over relation sequences so that no chain shape dominates, each start and answer
// entity used at most twice.
func (ds *Dataset) compose() error {
	w, cfg := ds.w, ds.Config
	n2 := (cfg.Questions*6 + 5) / 10
	n3 := (cfg.Questions*3 + 5) / 10
	quota := map[int]int{2: n2, 3: n3, 4: cfg.Questions - n2 - n3}
	var starts []int
	for e, ent := range w.entities {
		switch ent.kind {
		case kIncident, kCustomer, kProject, kService:
			starts = append(starts, e)
		case kPerson:
			if !w.people[slices.IndexFunc(w.people, func(p person) bool { return p.id == e })].external {
				starts = append(starts, e)
			}
		}
	}
	usedStart, usedAnswer := map[int]int{}, map[int]int{}
	for _, hops := range []int{4, 3, 2} {
		bySig := map[string][]chain{}
		for _, s := range starts {
			for _, c := range w.walks(s, hops) {
				if ds.valid(c) == "" {
					sig := c.signature(w)
					bySig[sig] = append(bySig[sig], c)
				}
			}
		}
		sigs := make([]string, 0, len(bySig))
		for s := range bySig {
			sigs = append(sigs, s)
		}
		slices.Sort(sigs)
		for _, s := range sigs {
			cs := bySig[s]
			w.r.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
		}
		got := 0
		for progress := true; got < quota[hops] && progress; {
			progress = false
			for _, s := range sigs {
				if got == quota[hops] {
					break
				}
				for len(bySig[s]) > 0 {
					c := bySig[s][0]
					bySig[s] = bySig[s][1:]
					ans := w.facts[c.facts[len(c.facts)-1]].dst
					if usedStart[c.start] >= 2 || usedAnswer[ans] >= 2 {
						continue
					}
					q, ok := ds.question(c)
					if !ok {
						continue
					}
					usedStart[c.start]++
					usedAnswer[ans]++
					ds.Questions = append(ds.Questions, q)
					got++
					progress = true
					break
				}
			}
		}
		if got < quota[hops] {
			return fmt.Errorf("only %d questions of %d hops, want %d", got, hops, quota[hops])
		}
	}
	// Two-hop questions first, as in the other sets; ids follow the order.
	slices.SortStableFunc(ds.Questions, func(a, b Question) int { return len(a.Gold) - len(b.Gold) })
	for i := range ds.Questions {
		ds.Questions[i].ID = fmt.Sprintf("wq%03d_%dhop", i, len(ds.Questions[i].Gold))
	}
	return nil
}

// question phrases chain c: of a few random template choices, the one whose words the
// last gold document shares least.
func (ds *Dataset) question(c chain) (Question, bool) {
	w := ds.w
	var sps []string
	for _, sp := range w.startPhrases(c.start) {
		if ds.startIn(c, sp) {
			sps = append(sps, sp)
		}
	}
	if len(sps) == 0 {
		return Question{}, false
	}
	best, bestOv := "", -1
	for range 8 {
		picks := make([]int, len(c.facts))
		for i := range picks {
			picks[i] = w.r.IntN(6)
		}
		q := ds.phrase(c, sps[w.r.IntN(len(sps))], picks)
		q = strings.ToUpper(q[:1]) + q[1:]
		if ds.namesInner(c, q) {
			continue
		}
		if ov := ds.overlap(c, q); bestOv < 0 || ov < bestOv {
			best, bestOv = q, ov
		}
	}
	if bestOv < 0 {
		return Question{}, false
	}
	ans := w.entities[w.facts[c.facts[len(c.facts)-1]].dst]
	q := Question{Question: best, Answer: ans.name, AnswerAliases: slices.Clone(ans.forms[1:]), chain: c, overlap: bestOv}
	if q.AnswerAliases == nil {
		q.AnswerAliases = []string{}
	}
	for _, f := range c.facts {
		q.Gold = append(q.Gold, fmt.Sprintf("w%04d", w.facts[f].doc))
	}
	return q, true
}

// startIn reports whether start phrase sp of chain c names what the first gold document
// names: the incident key, the reporter and date of an incident, or the entity itself.
func (ds *Dataset) startIn(c chain, sp string) bool {
	doc := ds.index.docs[ds.w.facts[c.facts[0]].doc]
	if !strings.HasPrefix(sp, "the outage ") {
		return containsWord(doc, strings.TrimPrefix(sp, "incident "))
	}
	for _, in := range ds.w.incidents {
		if in.id == c.start {
			return containsWord(doc, ds.w.pname(in.reporter)) && strings.Contains(doc, date(in.day))
		}
	}
	return false
}
