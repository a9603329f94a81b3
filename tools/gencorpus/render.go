package gencorpus

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// draft is a document being written: its text, the entities it names and the facts it
// states. Every name goes through the helpers (person, svc, ...) so that the generator
// knows what each document mentions.
type draft struct {
	w        *world
	r        *rand.Rand
	typ      string
	title    string
	b        strings.Builder
	mentions []int
	states   []int // fact indexes
	seen     map[int]bool
}

func (w *world) newDraft(typ string) *draft {
	return &draft{w: w, r: w.r, typ: typ, seen: map[int]bool{}}
}

func (d *draft) line(format string, args ...any) {
	fmt.Fprintf(&d.b, format, args...)
	d.b.WriteByte('\n')
}

func (d *draft) blank() { d.b.WriteByte('\n') }

func (d *draft) mention(e int) {
	if !d.seen[e] {
		d.seen[e] = true
		d.mentions = append(d.mentions, e)
	}
}

// person names p in full at first mention and by first name after.
func (d *draft) person(p int) string {
	e := d.w.pent(p)
	if d.seen[e] {
		return d.w.pfirst(p)
	}
	d.mention(e)
	return d.w.pname(p)
}

func (d *draft) full(p int) string { d.mention(d.w.pent(p)); return d.w.pname(p) }

func (d *draft) first(p int) string { d.mention(d.w.pent(p)); return d.w.pfirst(p) }

// svc names service s by its code name, its formal name or both.
func (d *draft) svc(s int) string {
	sv := d.w.services[s]
	d.mention(sv.id)
	switch d.r.IntN(3) {
	case 0:
		return sv.code
	case 1:
		return sv.formal
	}
	return sv.code + " (" + sv.formal + ")"
}

func (d *draft) team(t int) string { d.mention(d.w.teams[t]); return d.w.tname(t) }

func (d *draft) site(s int) string { d.mention(d.w.sites[s]); return d.w.sname(s) }

func (d *draft) city(s int) string {
	c := d.w.siteCity[s]
	d.mention(c)
	return d.w.entities[c].name
}

func (d *draft) customer(c int) string { d.mention(d.w.customers[c]); return d.w.cname(c) }

func (d *draft) vendor(v int) string { d.mention(d.w.vendors[v]); return d.w.vname(v) }

func (d *draft) incident(i int) string {
	d.mention(d.w.incidents[i].id)
	return d.w.incidents[i].key
}

func (d *draft) project(p int) string {
	d.mention(d.w.projects[p])
	return d.w.entities[d.w.projects[p]].name
}

func (d *draft) state(rel relation, src int) {
	f := d.w.factOf(rel, src)
	if f < 0 {
		panic(fmt.Sprintf("no %s fact from entity %d", rel, src))
	}
	d.states = append(d.states, f)
}

func (d *draft) pick(xs ...string) string { return xs[d.r.IntN(len(xs))] }

var epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func date(day int) string { return epoch.AddDate(0, 0, day).Format("2006-01-02") }

func (d *draft) stamp(day int) string {
	t := epoch.AddDate(0, 0, day)
	for t.Weekday() == time.Saturday || t.Weekday() == time.Sunday {
		t = t.AddDate(0, 0, 1)
	}
	t = t.Add(time.Duration(8*60+d.r.IntN(10*60)) * time.Minute)
	return t.Format("Mon, 2 Jan 2006 15:04")
}

func clock(minute int) string { return fmt.Sprintf("%02d:%02d", (minute/60)%24, minute%60) }

// email writes the header of an e-mail from person from (an employee or a vendor's
// contact) to a list or a person.
func (d *draft) email(from int, to string, day int, subject string) {
	d.title = subject
	d.line("From: %s <%s>", d.full(from), d.w.address(from))
	d.line("To: %s", to)
	d.line("Date: %s", d.stamp(day))
	d.line("Subject: %s", subject)
	d.blank()
}

func (w *world) address(p int) string {
	pp := w.people[p]
	if pp.external {
		return strings.ToLower(pp.first+"."+pp.last) + "@" + pp.vendorSlug + ".example"
	}
	return pp.handle + "@" + w.domain
}

func (d *draft) to(p int) string { return d.w.address(p) }

func (d *draft) list() string {
	return d.pick("eng-all", "engineering", "ops-announce", "everyone", "platform-leads", "staff") + "@" + d.w.domain
}

func (d *draft) hello(name string) string {
	return d.pick("Hi "+name+",", "Hey "+name+",", "Hello "+name+",", name+" —", "Morning "+name+",")
}

func (d *draft) signoff(p int) {
	d.blank()
	d.line("%s", d.pick("Thanks,", "Cheers,", "Best,", "Thanks!", "—"))
	d.line("%s", d.first(p))
}

var chitchat = []string{
	"Hope the week is treating you well.",
	"Sorry for the slow reply, I was out on Friday.",
	"(Unrelated: the coffee machine on the third floor works again.)",
	"Quick one before the long weekend.",
	"Apologies if you already got this through Slack.",
	"Reminder that the quarterly planning doc is due Thursday.",
	"No action needed unless something below looks wrong.",
	"I'll keep this short since everyone is heads down on the release.",
	"Ping me on chat if anything is unclear.",
	"PS: the all-hands moved to 4pm.",
}

func (d *draft) chat() string { return d.pick(chitchat...) }

type ticketer struct {
	r    *rand.Rand
	used map[string]bool
}

func (t *ticketer) next(prefix string) string {
	for {
		k := fmt.Sprintf("%s-%d", prefix, 100+t.r.IntN(9900))
		if !t.used[k] {
			t.used[k] = true
			return k
		}
	}
}

func (d *draft) ticketFields(key, typ, status string, reporter, assignee int, day int) {
	d.line("%s", key)
	d.line("Type: %s   Priority: %s   Status: %s", typ, d.pick("P1", "P2", "P3", "P4"), status)
	d.line("Reporter: %s", d.full(reporter))
	d.line("Assignee: %s", d.full(assignee))
	d.line("Created: %s %s", date(day), clock(d.r.IntN(24*60)))
	d.blank()
}

// someone returns an employee index different from all of not.
func (w *world) someone(not ...int) int {
	for {
		p := w.r.IntN(nEmployees)
		ok := true
		for _, n := range not {
			if p == n {
				ok = false
			}
		}
		if ok {
			return p
		}
	}
}
