package gencorpus

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// The guidelines set: single-fact questions over practice guidelines and operating
// procedures. A topic is what a guideline section is about: a product given for a
// condition to a population, or a procedure in a care setting. A section states several
// attributes of its topic (a dose, an interval, a threshold, a role, ...), and many
// sections state the same attributes of neighbouring topics, so that the words of a
// question pick out its section only through the names of its topic.

// family is the kind of topic: a treatment or a procedure.
type family int

const (
	famTreatment family = iota
	famProcedure
)

// topic is the subject of one current guideline section. forms are the names the
// question uses, each of which the section's text contains.
type topic struct {
	fam     family
	product int // treatment: product, condition and population indexes
	cond    int
	pop     int
	proc    int // procedure: procedure and setting indexes
	setting int
	forms   []string
}

// attr is one kind of fact a section states. The templates use {v} for the value and
// {P} product, {C} condition, {Pop} population, {M} the product's marker, {X} procedure,
// {S} setting; in questions, which may leave the condition out, " with {C}" is written
// {with C} and " for {C}" {for C}. state phrasings are the document's, ask phrasings the
// question's; no ask phrasing repeats a state phrasing's wording.
type attr struct {
	name    string
	fam     family
	value   func(r *rand.Rand, g *guidelineWorld, t topic) string
	aliases func(v string) []string
	state   []string
	ask     []string
}

// statement is one fact a document states: the value of an attribute of a topic, as
// current guidance or as a superseded version's.
type statement struct {
	topic   int
	attr    int
	value   string
	line    string // the document's sentence stating it
	current bool
}

type guidelineWorld struct {
	r          *rand.Rand
	products   []string
	markers    []string // per product: the lab value it is monitored by
	conditions []string
	procs      []string
	topics     []topic
}

var (
	populations = []string{"adults", "adolescents", "children", "infants", "pregnant patients"}
	settings    = []string{"inpatient wards", "day units", "critical care", "community clinics", "operating theatres"}
	// Who prescribes or takes over a treatment, and who performs or answers for a procedure.
	clinicians     = []string{"ward pharmacist", "duty consultant", "specialist nurse", "clinical lead", "on-call registrar", "attending physician"}
	staff          = []string{"charge nurse", "infusion nurse", "device technician", "senior physiotherapist", "theatre coordinator", "nurse practitioner"}
	conditionKinds = []string{"syndrome", "disease", "fever", "disorder", "palsy", "myopathy"}
	procedureKinds = []string{"line flush", "drain review", "catheter change", "pump calibration", "dressing change", "sampling round", "skin check", "cannula review"}
)

const (
	nGlConditions = 16
	nGlProducts   = 24
	nGlProcs      = 14
)

func numbers(r *rand.Rand, xs ...int) int { return xs[r.IntN(len(xs))] }

func mg(r *rand.Rand, xs ...int) string { return fmt.Sprintf("%d mg", numbers(r, xs...)) }

func suffixAliases(v string, pairs ...string) []string {
	n, _, _ := strings.Cut(v, " ")
	out := make([]string, 0, len(pairs))
	for _, p := range pairs {
		out = append(out, strings.ReplaceAll(p, "N", n))
	}
	return out
}

// numAfter is the number in a value like "every 8 hours" or "within 15 minutes".
func numAfter(v string) string {
	for f := range strings.FieldsSeq(v) {
		if f[0] >= '0' && f[0] <= '9' {
			return f
		}
	}
	return v
}

func roleValue(r *rand.Rand, _ *guidelineWorld, t topic) string {
	if t.fam == famTreatment {
		return clinicians[r.IntN(len(clinicians))]
	}
	return staff[r.IntN(len(staff))]
}

func theAlias(v string) []string { return []string{"the " + v} }

var glAttrs = []attr{
	{
		name: "starting dose", fam: famTreatment,
		value: func(r *rand.Rand, _ *guidelineWorld, _ topic) string {
			return mg(r, 5, 10, 20, 25, 40, 50, 75, 100, 150, 200)
		},
		aliases: func(v string) []string { return suffixAliases(v, "N milligrams", "Nmg") },
		state:   []string{"Start at {v}.", "The initial dose is {v}.", "Begin treatment with {v}.", "Open with a single dose of {v}."},
		ask: []string{
			"How much {P} should {Pop}{with C} be given at the outset?",
			"When {P} is commenced{for C} in {Pop}, what is the first amount prescribed?",
			"What quantity of {P} do {Pop}{with C} receive on day one?",
		},
	},
	{
		name: "dosing interval", fam: famTreatment,
		value: func(r *rand.Rand, _ *guidelineWorld, _ topic) string {
			return fmt.Sprintf("every %d hours", numbers(r, 4, 6, 8, 12, 24, 48))
		},
		aliases: func(v string) []string { n := numAfter(v); return []string{n + " hours", n + "-hourly"} },
		state:   []string{"Repeat the dose {v}.", "Dosing interval: {v}.", "Further doses follow {v}.", "Give subsequent doses {v}."},
		ask: []string{
			"How often should {Pop}{with C} take {P}?",
			"How many hours apart are doses of {P} for {Pop}{with C}?",
			"At what frequency is {P} administered to {Pop}{with C}?",
		},
	},
	{
		name: "maximum daily dose", fam: famTreatment,
		value: func(r *rand.Rand, _ *guidelineWorld, _ topic) string {
			return mg(r, 60, 80, 120, 160, 240, 300, 320, 400, 600, 800, 1000)
		},
		aliases: func(v string) []string { return suffixAliases(v, "N milligrams", "Nmg") },
		state:   []string{"Do not exceed {v} in 24 hours.", "The maximum daily dose is {v}.", "The total per day must stay at or below {v}.", "Cap the daily total at {v}."},
		ask: []string{
			"What is the most {P} that {Pop}{with C} may receive in one day?",
			"For {Pop}{with C}, what upper limit applies to the amount of {P} over a whole day?",
			"Up to what quantity per day can {P} be prescribed to {Pop}{with C}?",
		},
	},
	{
		name: "course duration", fam: famTreatment,
		value: func(r *rand.Rand, _ *guidelineWorld, _ topic) string {
			return fmt.Sprintf("%d days", numbers(r, 3, 5, 7, 10, 14, 21, 28, 42, 56, 90))
		},
		aliases: func(v string) []string { return suffixAliases(v, "N-day") },
		state:   []string{"Continue for {v}.", "Course length: {v}.", "Treat for a total of {v}.", "Stop after {v} of therapy."},
		ask: []string{
			"How long should {Pop}{with C} stay on {P}?",
			"For how many days is {P} kept up in {Pop}{with C}?",
			"What is the length of a {P} course for {Pop}{with C}?",
		},
	},
	{
		name: "monitoring interval", fam: famTreatment,
		value: func(r *rand.Rand, _ *guidelineWorld, _ topic) string {
			return fmt.Sprintf("every %d weeks", numbers(r, 2, 3, 4, 6, 8, 12))
		},
		aliases: func(v string) []string { n := numAfter(v); return []string{n + " weeks", n + "-weekly"} },
		state:   []string{"Measure serum {M} {v}.", "Check the {M} level {v} while on treatment.", "Monitoring: serum {M}, {v}."},
		ask: []string{
			"How frequently is {M} tested in {Pop} taking {P}{for C}?",
			"On what schedule do {Pop} on {P}{for C} have their {M} drawn?",
		},
	},
	{
		name: "stopping threshold", fam: famTreatment,
		value: func(r *rand.Rand, _ *guidelineWorld, _ topic) string {
			return fmt.Sprintf("%d units/L", numbers(r, 15, 20, 30, 40, 45, 60, 80, 90, 120))
		},
		aliases: func(v string) []string { return suffixAliases(v, "N units per litre", "N U/L") },
		state:   []string{"Stop {P} if serum {M} rises above {v}.", "Withhold treatment when {M} exceeds {v}.", "A serum {M} over {v} means the drug must be discontinued."},
		ask: []string{
			"At what {M} reading must {P} be withdrawn in {Pop}{with C}?",
			"Which {M} result obliges clinicians to halt {P} for {Pop}{with C}?",
		},
	},
	{
		name: "contraindicated combination", fam: famTreatment,
		value: func(r *rand.Rand, g *guidelineWorld, t topic) string {
			for {
				if p := r.IntN(len(g.products)); p != t.product {
					return g.products[p]
				}
			}
		},
		aliases: func(string) []string { return nil },
		state:   []string{"Do not combine with {v}.", "Contraindicated: concurrent use of {v}.", "Never co-prescribe {v}."},
		ask: []string{
			"Which other medicine must not be given alongside {P} to {Pop}{with C}?",
			"What agent is ruled out together with {P} when treating {Pop}{with C}?",
		},
	},
	{
		name: "prescriber", fam: famTreatment,
		value:   roleValue,
		aliases: theAlias,
		state:   []string{"Only the {v} may initiate this treatment.", "Initiation is restricted to the {v}.", "Prescribing rests with the {v}."},
		ask: []string{
			"Who is allowed to start {P} for {Pop}{with C}?",
			"Which member of staff has the authority to begin {P} in {Pop}{with C}?",
		},
	},
	{
		name: "escalation", fam: famTreatment,
		value:   roleValue,
		aliases: theAlias,
		state:   []string{"If there is no response after a week, refer to the {v}.", "Escalate non-responders to the {v}.", "Where symptoms persist, involve the {v}."},
		ask: []string{
			"If {Pop}{with C} fail to improve on {P}, who should they be passed on to?",
			"Whom do staff contact when {P} is not working for {Pop}{with C}?",
		},
	},
	{
		name: "frequency", fam: famProcedure,
		value: func(r *rand.Rand, _ *guidelineWorld, _ topic) string {
			return fmt.Sprintf("every %d hours", numbers(r, 2, 4, 6, 8, 12, 24))
		},
		aliases: func(v string) []string { n := numAfter(v); return []string{n + " hours", n + "-hourly"} },
		state:   []string{"Carry out the procedure {v}.", "Frequency: {v}.", "Repeat {v} while the device remains in place."},
		ask: []string{
			"How often is the {X} done in {S}?",
			"At what interval should staff in {S} perform the {X}?",
		},
	},
	{
		name: "responsible role", fam: famProcedure,
		value:   roleValue,
		aliases: theAlias,
		state:   []string{"The {v} performs this procedure.", "Responsible: the {v}.", "This task belongs to the {v}."},
		ask: []string{
			"Who carries out the {X} in {S}?",
			"Which member of staff is accountable for the {X} in {S}?",
		},
	},
	{
		name: "alarm response time", fam: famProcedure,
		value: func(r *rand.Rand, _ *guidelineWorld, _ topic) string {
			return fmt.Sprintf("%d minutes", numbers(r, 2, 5, 10, 15, 20, 30))
		},
		aliases: func(v string) []string { return suffixAliases(v, "N min", "N-minute") },
		state:   []string{"Respond to any alarm within {v}.", "Alarms are answered in no more than {v}.", "Attend the bedside within {v} of an alert."},
		ask: []string{
			"How quickly must staff in {S} react to a {X} alert?",
			"What is the longest delay allowed before someone attends a {X} alert in {S}?",
		},
	},
	{
		name: "pressure limit", fam: famProcedure,
		value: func(r *rand.Rand, _ *guidelineWorld, _ topic) string {
			return fmt.Sprintf("%d mmHg", numbers(r, 40, 60, 80, 100, 150, 200, 250, 300))
		},
		aliases: func(v string) []string { return suffixAliases(v, "N mm Hg") },
		state:   []string{"Stop and reassess if line pressure exceeds {v}.", "Pressure limit: {v}.", "Halt when the measured pressure goes above {v}."},
		ask: []string{
			"Above which pressure reading is the {X} in {S} interrupted?",
			"What pressure ceiling applies during the {X} in {S}?",
		},
	},
	{
		name: "escalation contact", fam: famProcedure,
		value:   roleValue,
		aliases: theAlias,
		state:   []string{"Escalate unresolved problems to the {v}.", "If the problem persists, call the {v}.", "Report failures to the {v} without delay."},
		ask: []string{
			"Whom should staff ring when a {X} problem in {S} cannot be fixed?",
			"In {S}, who is told when the {X} goes wrong and stays wrong?",
		},
	},
	{
		name: "documentation deadline", fam: famProcedure,
		value: func(r *rand.Rand, _ *guidelineWorld, _ topic) string {
			return fmt.Sprintf("%d hours", numbers(r, 1, 2, 4, 6, 12, 24))
		},
		aliases: func(v string) []string { return suffixAliases(v, "N h", "N-hour") },
		state:   []string{"Record the procedure in the care log within {v}.", "Documentation is due within {v}.", "Enter the result in the record no later than {v} afterwards."},
		ask: []string{
			"How long do staff in {S} have to write up a {X}?",
			"By when must a {X} in {S} be noted in the chart?",
		},
	},
}

// fill replaces the placeholders of a template for topic t and value v.
func (g *guidelineWorld) fill(tmpl string, t topic, v string) string {
	return g.fillNaming(tmpl, t, v, true)
}

// fillNaming is fill for a question, which names the condition only if cond.
func (g *guidelineWorld) fillNaming(tmpl string, t topic, v string, cond bool) string {
	var pairs []string
	if t.fam == famTreatment {
		c := g.conditions[t.cond]
		with, forC := " with "+c, " for "+c
		if !cond {
			with, forC = "", ""
		}
		pairs = []string{"{P}", g.products[t.product], "{C}", c, "{with C}", with, "{for C}", forC, "{Pop}", populations[t.pop], "{M}", g.markers[t.product]}
	} else {
		pairs = []string{"{X}", g.procs[t.proc], "{S}", settings[t.setting]}
	}
	return strings.NewReplacer(append(pairs, "{v}", v)...).Replace(tmpl)
}

// templateWords are the words of every template and fixed list, which no invented name
// may be.
func templateWords() []string {
	var out []string
	add := func(ss ...string) {
		for _, s := range ss {
			out = append(out, strings.FieldsFunc(s, func(r rune) bool { return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') })...)
		}
	}
	for _, a := range glAttrs {
		add(a.name)
		add(a.state...)
		add(a.ask...)
	}
	add(populations...)
	add(settings...)
	add(clinicians...)
	add(staff...)
	add(conditionKinds...)
	add(procedureKinds...)
	add(fillers...)
	add(procFillers...)
	return out
}

func newGuidelineWorld(seed uint64) *guidelineWorld {
	r := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	nm := newNamer(r)
	nm.reserve(templateWords()...)
	g := &guidelineWorld{r: r}
	for range nGlProducts {
		g.products = append(g.products, nm.word(3))
		g.markers = append(g.markers, nm.word(2+r.IntN(2)))
	}
	for range nGlConditions {
		g.conditions = append(g.conditions, nm.word(2+r.IntN(2))+" "+conditionKinds[r.IntN(len(conditionKinds))])
	}
	for range nGlProcs {
		g.procs = append(g.procs, nm.word(2)+" "+procedureKinds[r.IntN(len(procedureKinds))])
	}
	// Treatment topics: each condition is treated with three products (so a product
	// serves two conditions on average), each for two or three populations.
	for c := range nGlConditions {
		for _, p := range r.Perm(nGlProducts)[:3] {
			k := 2 + r.IntN(2)
			for _, pop := range r.Perm(len(populations))[:k] {
				g.topics = append(g.topics, topic{fam: famTreatment, product: p, cond: c, pop: pop,
					forms: []string{g.products[p], g.conditions[c], populations[pop]}})
			}
		}
	}
	// Procedure topics: each procedure in two or three settings.
	for x := range nGlProcs {
		k := 2 + r.IntN(2)
		for _, s := range r.Perm(len(settings))[:k] {
			g.topics = append(g.topics, topic{fam: famProcedure, proc: x, setting: s,
				forms: []string{g.procs[x], settings[s]}})
		}
	}
	return g
}

// attrsOf returns the indexes of the attributes of a family.
func attrsOf(f family) []int {
	var out []int
	for i, a := range glAttrs {
		if a.fam == f {
			out = append(out, i)
		}
	}
	return out
}

// glDraft is a guideline document being written, with the statements it makes.
type glDraft struct {
	typ, title string
	b          strings.Builder
	states     []statement
}

func (d *glDraft) line(format string, args ...any) {
	fmt.Fprintf(&d.b, format, args...)
	d.b.WriteByte('\n')
}

// Recommendations that state nothing a question asks: shared vocabulary.
var (
	fillers = []string{
		"Take with food to reduce stomach upset.",
		"Counsel the patient on what to do after a missed dose.",
		"Review the need for treatment at every clinic visit.",
		"Record the indication on the prescription.",
		"Check for interactions before each new prescription.",
		"Document weight and renal function before the first dose.",
		"Provide the written patient information leaflet.",
	}
	procFillers = []string{
		"Wash hands and wear gloves before starting.",
		"Explain the procedure to the patient and obtain consent.",
		"Use a sterile single-use kit.",
		"Dispose of sharps in the container at the point of use.",
		"Check the patient's identity band against the care plan.",
	}
)

type glVersion struct {
	number  int
	year    int
	current bool
}

func (v glVersion) status() string {
	if v.current {
		return fmt.Sprintf("version %d, effective %d", v.number, v.year)
	}
	return fmt.Sprintf("version %d (%d), superseded by version %d", v.number, v.year, v.number+1)
}

// section writes the guideline section of topic ti at a version with the given values
// (attribute index → value; attributes in order of appearance).
func (g *guidelineWorld) section(ti int, sec string, ver glVersion, order []int, values map[int]string, xref string) *glDraft {
	t := g.topics[ti]
	r := g.r
	d := &glDraft{typ: "guideline section"}
	if !ver.current {
		d.typ = "superseded guideline section"
	}
	superseded := ""
	if !ver.current {
		superseded = " [superseded]"
	}
	fill := func(s string) string { return g.fill(s, t, "") }
	if t.fam == famTreatment {
		d.title = fill(pick(r, "{C} guideline, section "+sec+": {P} for {Pop}", "{C}: {P} in {Pop} (section "+sec+")", "Section "+sec+" {P} — {Pop} with {C}")) + superseded
		d.line("%s treatment guideline, %s.", g.conditions[t.cond], ver.status())
		d.line("%s", fill(pick(r,
			"Section "+sec+" covers {Pop} with {C} who are prescribed {P}.",
			"Section "+sec+": {P} for {C} in {Pop}.",
			"Scope of section "+sec+": {Pop} diagnosed with {C} and started on {P}.")))
	} else {
		d.typ = strings.Replace(d.typ, "guideline", "procedure", 1)
		d.title = fill(pick(r, "SOP "+sec+": {X} in {S}", "{X} ({S}), standard operating procedure "+sec, "Operating procedure "+sec+" — {X}, {S}")) + superseded
		d.line("Standard operating procedure %s, %s.", sec, ver.status())
		d.line("%s", fill(pick(r,
			"Applies to the {X} in {S}.",
			"This procedure governs the {X} as carried out in {S}.",
			"Setting: {S}. Procedure: {X}.")))
	}
	d.line("")
	d.line("Recommendations")
	lines := make([]string, 0, len(order)+2)
	for _, a := range order {
		v := values[a]
		line := g.fill(glAttrs[a].state[r.IntN(len(glAttrs[a].state))], t, v)
		d.states = append(d.states, statement{topic: ti, attr: a, value: v, line: line, current: ver.current})
		lines = append(lines, line)
	}
	fs := fillers
	if t.fam == famProcedure {
		fs = procFillers
	}
	for _, i := range r.Perm(len(fs))[:1+r.IntN(2)] {
		lines = append(lines, fs[i])
	}
	r.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	for i, l := range lines {
		d.line("%d. %s", i+1, l)
	}
	d.line("")
	if xref != "" {
		d.line("%s", xref)
	}
	d.line("Grade of evidence: %s. Next review: %d.", pick(r, "A", "B", "C"), ver.year+3)
	return d
}
