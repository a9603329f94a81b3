package gencorpus

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// GuidelineSet is a generated guidelines corpus with its single-fact questions.
type GuidelineSet struct {
	Config    Config
	Docs      []Doc
	Questions []Question
	g         *guidelineWorld
	states    [][]statement // per document, the facts it states
	asked     []statement   // per question, the fact it asks (value = answer)
	named     [][]string    // per question, the names of its topic it uses
}

// DefaultGuidelinesConfig is the set `make dataset-guidelines` writes.
func DefaultGuidelinesConfig() Config { return Config{Seed: 1, Questions: 100} }

// supersededShare is the share of sections that also exist as an older version with
// one or two different values.
const supersededShare = 0.35

// GenerateGuidelines draws the topics from cfg.Seed, writes the current and superseded
// sections and the documents that only mention topics, and composes the questions.
func GenerateGuidelines(cfg Config) (*GuidelineSet, error) {
	if cfg.Questions < 1 {
		return nil, fmt.Errorf("questions = %d, want at least 1", cfg.Questions)
	}
	g := newGuidelineWorld(cfg.Seed)
	drafts := g.render()
	gs := &GuidelineSet{Config: cfg, g: g}
	order := g.r.Perm(len(drafts))
	gs.Docs = make([]Doc, len(drafts))
	gs.states = make([][]statement, len(drafts))
	for pos, i := range order {
		d := drafts[i]
		gs.Docs[pos] = Doc{ID: fmt.Sprintf("g%04d", pos), Title: d.title, Text: d.b.String(), typ: d.typ}
		gs.states[pos] = d.states
	}
	if err := gs.compose(); err != nil {
		return nil, err
	}
	if err := gs.Check(); err != nil {
		return nil, fmt.Errorf("self-check: %w", err)
	}
	return gs, nil
}

// render writes every section, the superseded versions and the mentions.
func (g *guidelineWorld) render() []*glDraft {
	r := g.r
	var out []*glDraft
	secs := map[[2]int]int{} // (family, condition or 0) → sections so far
	secOf := make([]string, len(g.topics))
	for ti, t := range g.topics {
		if t.fam == famTreatment {
			secs[[2]int{0, t.cond}]++
			secOf[ti] = fmt.Sprintf("%d.%d", t.cond+3, secs[[2]int{0, t.cond}]+1)
		} else {
			secs[[2]int{1, 0}]++
			secOf[ti] = fmt.Sprintf("NP-%03d", 100+7*t.proc+secs[[2]int{1, 0}])
		}
	}
	for ti, t := range g.topics {
		attrs := attrsOf(t.fam)
		k := min(len(attrs), 4+r.IntN(3))
		order := make([]int, 0, k)
		for _, i := range r.Perm(len(attrs))[:k] {
			order = append(order, attrs[i])
		}
		values := map[int]string{}
		for _, a := range order {
			values[a] = glAttrs[a].value(r, g, t)
		}
		ver := glVersion{number: 2 + r.IntN(4), year: 2022 + r.IntN(4), current: true}
		out = append(out, g.section(ti, secOf[ti], ver, order, values, g.xref(ti, secOf)))
		if r.Float64() >= supersededShare {
			continue
		}
		old := maps.Clone(values)
		var changed []string
		for _, i := range r.Perm(len(order))[:1+r.IntN(2)] {
			a := order[i]
			for old[a] == values[a] {
				old[a] = glAttrs[a].value(r, g, t)
			}
			changed = append(changed, glAttrs[a].name)
		}
		prev := glVersion{number: ver.number - 1, year: ver.year - 1 - r.IntN(3)}
		out = append(out, g.section(ti, secOf[ti], prev, order, old, ""))
		if r.IntN(2) == 0 {
			out = append(out, g.changeNotice(ti, ver, changed))
		}
	}
	for p := range g.products {
		out = append(out, g.formulary(p))
	}
	for c := range g.conditions {
		out = append(out, g.overview(c))
	}
	for x := range g.procs {
		out = append(out, g.competency(x))
	}
	for _, ti := range r.Perm(len(g.topics))[:len(g.topics)/4] {
		out = append(out, g.audit(ti))
	}
	return out
}

// xref points from a section to a sibling's (the same product and condition for
// another population, the same procedure in another setting), or returns "".
func (g *guidelineWorld) xref(ti int, secOf []string) string {
	t := g.topics[ti]
	for j, u := range g.topics {
		if j == ti || u.fam != t.fam || g.r.IntN(2) == 0 {
			continue
		}
		if t.fam == famTreatment && u.product == t.product && u.cond == t.cond {
			return fmt.Sprintf("For %s, see section %s.", populations[u.pop], secOf[j])
		}
		if t.fam == famProcedure && u.proc == t.proc {
			return fmt.Sprintf("For %s, follow %s instead.", settings[u.setting], secOf[j])
		}
	}
	return ""
}

func (g *guidelineWorld) changeNotice(ti int, ver glVersion, changed []string) *glDraft {
	t := g.topics[ti]
	d := &glDraft{typ: "change notice"}
	what := strings.Join(changed, " and the ")
	if t.fam == famTreatment {
		d.title = fmt.Sprintf("Changes in version %d: %s guideline", ver.number, g.conditions[t.cond])
		d.line("Version %d of the %s guideline replaces version %d from %d.", ver.number, g.conditions[t.cond], ver.number-1, ver.year)
		d.line("The section on %s for %s revises the %s.", g.products[t.product], populations[t.pop], what)
	} else {
		d.title = fmt.Sprintf("Changes in version %d: %s", ver.number, g.procs[t.proc])
		d.line("Version %d of the %s procedure replaces version %d from %d.", ver.number, g.procs[t.proc], ver.number-1, ver.year)
		d.line("For %s it revises the %s.", settings[t.setting], what)
	}
	d.line("Staff should read the updated section before the next shift. Earlier printouts must be destroyed.")
	return d
}

func (g *guidelineWorld) formulary(p int) *glDraft {
	r := g.r
	d := &glDraft{typ: "formulary entry", title: "Formulary entry: " + g.products[p]}
	var conds, pops []string
	for _, t := range g.topics {
		if t.fam == famTreatment && t.product == p {
			if c := g.conditions[t.cond]; !slices.Contains(conds, c) {
				conds = append(conds, c)
			}
			if q := populations[t.pop]; !slices.Contains(pops, q) {
				pops = append(pops, q)
			}
		}
	}
	d.line("%s. Presentations: %d mg tablets, %d mg/5 mL oral solution, %d mg vial for infusion.", g.products[p], numbers(r, 5, 10, 25, 50), numbers(r, 100, 125, 250), numbers(r, 200, 500, 1000))
	if len(conds) > 0 {
		d.line("Formulary status: approved for %s, in %s; dosing is set out in each condition's guideline.", strings.Join(conds, " and "), strings.Join(pops, ", "))
	} else {
		d.line("Formulary status: restricted; no guideline currently recommends it.")
	}
	d.line("Monitoring marker: serum %s. Storage: below %d °C, protected from light.", g.markers[p], numbers(r, 8, 25, 30))
	d.line("Common side effects: %s.", pick(r, "nausea, headache and dizziness", "rash and itching", "fatigue and dry mouth", "loose stools"))
	return d
}

func (g *guidelineWorld) overview(c int) *glDraft {
	r := g.r
	d := &glDraft{typ: "condition overview", title: fmt.Sprintf("%s guideline, section %d.1: assessment", g.conditions[c], c+3)}
	var prods, pops []string
	for _, t := range g.topics {
		if t.fam == famTreatment && t.cond == c {
			if p := g.products[t.product]; !slices.Contains(prods, p) {
				prods = append(prods, p)
			}
			if q := populations[t.pop]; !slices.Contains(pops, q) {
				pops = append(pops, q)
			}
		}
	}
	d.line("%s is diagnosed on %s.", g.conditions[c], pick(r, "two consistent clinical assessments", "history, examination and a confirmatory test", "a specialist review"))
	d.line("Treatment options are %s; the following sections give their use in %s.", strings.Join(prods, ", "), strings.Join(pops, ", "))
	d.line("Refer urgently when %s.", pick(r, "breathing is affected", "symptoms progress within a day", "there are signs of dehydration", "the patient cannot keep fluids down"))
	return d
}

func (g *guidelineWorld) competency(x int) *glDraft {
	r := g.r
	d := &glDraft{typ: "competency record", title: "Competency assessment: " + g.procs[x]}
	var ss []string
	for _, t := range g.topics {
		if t.fam == famProcedure && t.proc == x {
			ss = append(ss, settings[t.setting])
		}
	}
	d.line("Staff performing the %s in %s must hold a current competency sign-off.", g.procs[x], strings.Join(ss, " or "))
	d.line("Assessment: %s observed procedures and a written test; renew every %d years.", pick(r, "two", "three", "five"), numbers(r, 1, 2, 3))
	return d
}

func (g *guidelineWorld) audit(ti int) *glDraft {
	r := g.r
	t := g.topics[ti]
	d := &glDraft{typ: "audit report"}
	var as []string
	for _, i := range r.Perm(len(attrsOf(t.fam)))[:2] {
		as = append(as, glAttrs[attrsOf(t.fam)[i]].name)
	}
	n := 20 + r.IntN(60)
	if t.fam == famTreatment {
		d.title = fmt.Sprintf("Audit: %s for %s in %s", g.products[t.product], g.conditions[t.cond], populations[t.pop])
		d.line("We reviewed %d records of %s with %s treated with %s.", n, populations[t.pop], g.conditions[t.cond], g.products[t.product])
	} else {
		d.title = fmt.Sprintf("Audit: %s in %s", g.procs[t.proc], settings[t.setting])
		d.line("We observed %d episodes of the %s in %s.", n, g.procs[t.proc], settings[t.setting])
	}
	d.line("The %s matched the guideline in %d of %d; the %s was recorded in %d.", as[0], n-r.IntN(n/2), n, as[1], n-r.IntN(n/2))
	d.line("Actions: reminder at the next staff meeting; re-audit in %s.", pick(r, "six months", "a year", "the spring"))
	return d
}

// compose picks the asked facts (one per topic, attributes spread evenly) and phrases
// the questions.
func (gs *GuidelineSet) compose() error {
	r := gs.g.r
	var cands []statement
	docOf := map[[2]int]int{}
	for di, ss := range gs.states {
		for _, s := range ss {
			if s.current {
				cands = append(cands, s)
				docOf[[2]int{s.topic, s.attr}] = di
			}
		}
	}
	byID := map[string]int{}
	for i, d := range gs.Docs {
		byID[d.ID] = i
	}
	r.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	perAttr := (gs.Config.Questions+len(glAttrs)-1)/len(glAttrs) + 2
	usedTopic := map[int]bool{}
	count := map[int]int{}
	for _, s := range cands {
		if len(gs.Questions) == gs.Config.Questions {
			break
		}
		if usedTopic[s.topic] || count[s.attr] >= perAttr {
			continue
		}
		// A question about a treatment leaves the condition out every other time
		// that the product and population alone name one topic, as a reader who
		// knows only those two would ask.
		cond := true
		if t := gs.g.topics[s.topic]; t.fam == famTreatment && gs.g.onlyTopic(t.forms[0], t.forms[2]) && r.IntN(2) == 0 {
			cond = false
		}
		q, named, ok := gs.phrase(s, cond)
		if !ok {
			return fmt.Errorf("every phrasing of the %s question copies its section", glAttrs[s.attr].name)
		}
		q.ID = fmt.Sprintf("gq%03d", len(gs.Questions))
		q.Gold = []string{gs.Docs[docOf[[2]int{s.topic, s.attr}]].ID}
		// Skip a fact that another document seems to state too (a contraindicated
		// product that an overview lists beside the topic's names).
		if gs.checkQuestion(q, s, named, byID) != nil {
			continue
		}
		usedTopic[s.topic] = true
		count[s.attr]++
		gs.Questions = append(gs.Questions, q)
		gs.asked = append(gs.asked, s)
		gs.named = append(gs.named, named)
	}
	if len(gs.Questions) < gs.Config.Questions {
		return fmt.Errorf("only %d distinct topics to ask about, want %d questions", len(gs.Questions), gs.Config.Questions)
	}
	return nil
}

// phrase writes the question of statement s in one of its attribute's phrasings that
// does not copy the stating sentence, naming the condition of a treatment only if cond,
// and returns it with the names of the topic it uses.
func (gs *GuidelineSet) phrase(s statement, cond bool) (Question, []string, bool) {
	a := glAttrs[s.attr]
	t := gs.g.topics[s.topic]
	named := t.forms
	if !cond {
		named = []string{t.forms[0], t.forms[2]}
	}
	for _, i := range gs.g.r.Perm(len(a.ask)) {
		text := gs.g.fillNaming(a.ask[i], t, "", cond)
		text = strings.ToUpper(text[:1]) + text[1:]
		if sharedRun(text, s.line, gs.g.entityForms(t)) < copyRun {
			return Question{Question: text, Answer: s.value, AnswerAliases: a.aliases(s.value)}, named, true
		}
	}
	return Question{}, nil, false
}

// onlyTopic reports whether exactly one topic has both names.
func (g *guidelineWorld) onlyTopic(a, b string) bool {
	n := 0
	for _, t := range g.topics {
		if slices.Contains(t.forms, a) && slices.Contains(t.forms, b) {
			n++
		}
	}
	return n == 1
}

// entityForms are the names a text about topic t may contain: its own and the
// product's marker.
func (g *guidelineWorld) entityForms(t topic) []string {
	if t.fam == famTreatment {
		return append(slices.Clone(t.forms), g.markers[t.product])
	}
	return t.forms
}

// copyRun is the number of consecutive words (names counted as one) a question may not
// share with the sentence stating its answer.
const copyRun = 4

// sharedRun returns the longest run of consecutive words two texts share, lower-cased,
// with each name of forms counted as one word.
func sharedRun(a, b string, forms []string) int {
	words := func(s string) []string {
		s = strings.ToLower(s)
		for i, f := range forms {
			s = strings.ReplaceAll(s, strings.ToLower(f), fmt.Sprintf(" name%d ", i))
		}
		return strings.FieldsFunc(s, func(r rune) bool { return !isWordByte(byte(r)) || r > 127 })
	}
	x, y := words(a), words(b)
	best := 0
	for i := range x {
		for j := range y {
			n := 0
			for i+n < len(x) && j+n < len(y) && x[i+n] == y[j+n] {
				n++
			}
			best = max(best, n)
		}
	}
	return best
}
