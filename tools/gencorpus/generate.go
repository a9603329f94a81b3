package gencorpus

import (
	"fmt"
	"slices"
)

// Config says what to generate. Two fields, so a struct rather than options.
type Config struct {
	Seed      uint64
	Questions int
}

// DefaultConfig is the set `make dataset-workplace` writes.
func DefaultConfig() Config { return Config{Seed: 1, Questions: 100} }

// Doc is one line of corpus.jsonl.
type Doc struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Text  string `json:"text"`
	typ   string
}

// Question is one line of questions.jsonl.
type Question struct {
	ID            string   `json:"id"`
	Question      string   `json:"question"`
	Answer        string   `json:"answer"`
	AnswerAliases []string `json:"answer_aliases"`
	Gold          []string `json:"gold"`
	chain         chain
	overlap       int // content words of the question in the last gold document
}

// Dataset is a generated corpus with its questions and the world they come from.
type Dataset struct {
	Config    Config
	Docs      []Doc
	Questions []Question
	w         *world
	index     *mentionIndex
}

// Generate draws a world from cfg.Seed, writes its documents and composes the questions.
func Generate(cfg Config) (*Dataset, error) {
	if cfg.Questions < 1 {
		return nil, fmt.Errorf("questions = %d, want at least 1", cfg.Questions)
	}
	w := newWorld(cfg.Seed)
	drafts := w.render()
	ds := &Dataset{Config: cfg, w: w}
	order := w.r.Perm(len(drafts))
	ds.Docs = make([]Doc, len(drafts))
	for pos, i := range order {
		d := drafts[i]
		if d.title == "" {
			return nil, fmt.Errorf("a %s document has no title", d.typ)
		}
		ds.Docs[pos] = Doc{ID: fmt.Sprintf("w%04d", pos), Title: d.title, Text: d.b.String(), typ: d.typ}
		for _, f := range d.states {
			if w.facts[f].doc >= 0 {
				return nil, fmt.Errorf("fact %s of %s stated twice", w.facts[f].rel, w.entities[w.facts[f].src].name)
			}
			w.facts[f].doc = pos
		}
	}
	for _, f := range w.facts {
		if f.doc < 0 {
			return nil, fmt.Errorf("fact %s of %s stated in no document", f.rel, w.entities[f.src].name)
		}
	}
	ds.index = newMentionIndex(w, ds.Docs)
	if err := ds.compose(); err != nil {
		return nil, err
	}
	if err := ds.Check(); err != nil {
		return nil, fmt.Errorf("self-check: %w", err)
	}
	return ds, nil
}

// render writes every fact document and the distractors.
func (w *world) render() []*draft {
	tk := &ticketer{r: w.r, used: map[string]bool{}}
	var out []*draft
	add := func(ds ...*draft) {
		for _, d := range ds {
			if d != nil {
				out = append(out, d)
			}
		}
	}
	for i := range w.incidents {
		add(w.postmortem(tk, i))
	}
	for s, sv := range w.services {
		add(w.ownership(tk, s)...)
		add(w.changeRequest(tk, s)...)
		if sv.vendor >= 0 {
			add(w.procurement(tk, s))
		}
		if sv.datastore >= 0 {
			add(w.designReview(tk, s))
		}
	}
	for t := range w.teams {
		add(w.orgAnnouncement(t))
	}
	var movers []int
	for p := range nEmployees {
		switch {
		case w.people[p].manager:
			movers = append(movers, p)
		case w.r.IntN(3) == 0:
			add(w.onboarding(p, false))
			movers = append(movers, p)
		default:
			add(w.onboarding(p, true))
		}
	}
	w.r.Shuffle(len(movers), func(i, j int) { movers[i], movers[j] = movers[j], movers[i] })
	for len(movers) > 0 {
		n := min(len(movers), 2+w.r.IntN(3))
		add(w.deskMoves(slices.Clone(movers[:n])))
		movers = movers[n:]
	}
	for s := range w.sites {
		add(w.facilities(s))
	}
	for v := range w.vendors {
		add(w.vendorIntro(v))
	}
	for c := range w.customers {
		add(w.amIntro(c), w.integrationTicket(tk, c))
	}
	for p := range w.projects {
		add(w.kickoff(p))
		add(w.distractor(func() *draft { return w.projectStatus(p) }))
	}
	for n := range 40 {
		add(w.distractor(func() *draft { return w.staffSync(n) }))
	}
	for n := range 30 {
		add(w.distractor(func() *draft { return w.handover(tk, n) }))
	}
	for range 40 {
		add(w.distractor(func() *draft { return w.bugTicket(tk) }))
	}
	for i := range w.incidents {
		if i%2 == 0 {
			add(w.distractor(func() *draft { return w.customerUpdate(i) }))
		}
		if i%3 == 0 {
			add(w.distractor(func() *draft { return w.followUps(i) }))
		}
	}
	for n := range 10 {
		add(w.distractor(func() *draft { return w.social(n) }))
	}
	return out
}
