package gencorpus

import (
	"fmt"
	"strings"
)

// Distractor documents name the world's entities without stating a fact between any two
// they name: (*world).distractor redraws one until no two of its mentions are related.

func (w *world) clean(d *draft) bool {
	for i, a := range d.mentions {
		for _, b := range d.mentions[i+1:] {
			if w.related[[2]int{a, b}] {
				return false
			}
		}
	}
	return true
}

func (w *world) distractor(make func() *draft) *draft {
	for range 200 {
		if d := make(); w.clean(d) {
			return d
		}
	}
	return nil
}

func (w *world) anyService() int { return w.r.IntN(len(w.services)) }

func (w *world) staffSync(n int) *draft {
	d := w.newDraft("meeting-notes")
	day := 7 * (n + 1)
	d.title = d.pick("Eng staff sync "+date(day), "Ops review "+date(day), "Weekly sync "+date(day))
	d.line("%s", d.title)
	var att []string
	for range 3 + w.r.IntN(3) {
		att = append(att, d.full(w.someone()))
	}
	d.line("Attendees: %s", strings.Join(att, ", "))
	d.line("Notes: %s", d.first(w.someone()))
	d.blank()
	for range 3 + w.r.IntN(3) {
		switch w.r.IntN(6) {
		case 0:
			d.line("- %s error budget at %d%%, %s", d.svc(w.anyService()), 20+w.r.IntN(80), d.pick("fine", "watch it", "freeze deploys if it drops further"))
		case 1:
			i := w.r.IntN(len(w.incidents))
			d.line("- %s: %d of %d action items closed", d.incident(i), w.r.IntN(3), 3+w.r.IntN(3))
		case 2:
			d.line("- %s asked about the renewal; nothing technical needed", d.customer(w.r.IntN(len(w.customers))))
		case 3:
			d.line("- Hiring: %d onsites this week, %s is collecting feedback", 1+w.r.IntN(4), d.person(w.someone()))
		case 4:
			d.line("- %s to chase the flaky integration test in %s", d.person(w.someone()), d.svc(w.anyService()))
		default:
			d.line("- %s", d.pick("Holiday calendar: please fill it in.", "Reminder: quarterly access review.", "Nothing from security this week.", "Cost report is out, storage is up 8%."))
		}
	}
	return d
}

func (w *world) handover(tk *ticketer, n int) *draft {
	d := w.newDraft("handover")
	from, to := w.someone(), w.someone()
	for to == from {
		to = w.someone()
	}
	day := 3 + 7*n + w.r.IntN(4)
	d.email(from, d.to(to), day, d.pick(fmt.Sprintf("On-call handover week %d", n+1), "Handover "+date(day), "Pager handover"))
	d.line("%s", d.hello(d.first(to)))
	d.blank()
	d.line("%s", d.pick("Quiet-ish week. Notes:", "Here's where things stand:", "Handing over, mostly calm:"))
	for range 2 + w.r.IntN(3) {
		switch w.r.IntN(4) {
		case 0:
			d.line("- %s paged %d times overnight (%s), auto-resolved", d.svc(w.anyService()), 1+w.r.IntN(4), d.pick("disk", "latency", "cert check", "probe flap"))
		case 1:
			d.line("- %s follow-ups still open, nothing urgent", d.incident(w.r.IntN(len(w.incidents))))
		case 2:
			d.line("- silenced the noisy %s alert until Monday", d.svc(w.anyService()))
		default:
			d.line("- %s may call about %s; they know it's being looked at", d.customer(w.r.IntN(len(w.customers))), d.pick("the invoice", "a slow export", "their sandbox"))
		}
	}
	d.signoff(from)
	return d
}

func (w *world) bugTicket(tk *ticketer) *draft {
	d := w.newDraft("ticket")
	key := tk.next("BUG")
	s := w.anyService()
	issue := d.pick("flaky test", "memory creep", "wrong timezone in logs", "retry storm", "slow cold start", "noisy warnings")
	d.title = key + ": " + issue + " in " + w.services[s].formal
	d.ticketFields(key, "Bug", d.pick("Open", "Triage", "Won't fix", "Done"), w.someone(), w.someone(), w.r.IntN(360))
	d.line("Seeing %s in %s since the last release.", issue, d.svc(s))
	d.line("%s", d.pick("Repro steps in the thread.", "Happens maybe once a day.", "Attached a heap profile.", "Could be the new client library."))
	if w.r.IntN(2) == 0 {
		d.line("Comment from %s: %s", d.person(w.someone()), d.pick("can't reproduce locally", "same on staging", "bumping priority, a customer noticed", "dup of an older ticket?"))
	}
	return d
}

func (w *world) customerUpdate(i int) *draft {
	in := w.incidents[i]
	d := w.newDraft("email")
	from := w.someone()
	d.email(from, "status@"+w.domain, in.day, d.pick("Update on today's disruption", "Service disruption — resolved", "Follow-up: "+in.key))
	d.line("%s", d.pick("Dear customer,", "Hello,", "Hi all,"))
	d.blank()
	d.line("Earlier today some requests failed or were slow (%s, our reference %s). %s and a few other accounts were affected. It is resolved and a full review will follow.", in.symptom, d.incident(i), d.customer(w.r.IntN(len(w.customers))))
	d.line("We're sorry for the disruption.")
	d.signoff(from)
	return d
}

func (w *world) followUps(i int) *draft {
	in := w.incidents[i]
	d := w.newDraft("email")
	from := w.someone()
	d.email(from, "incident-review@"+w.domain, in.day+14+w.r.IntN(20), "Open action items from "+in.key)
	d.line("%s", d.pick("Hi all,", "Friendly nudge,", "Hello,"))
	d.blank()
	d.line("Two weeks on, these items from %s are still open:", d.incident(i))
	for range 2 {
		d.line("- %s: %s", d.person(w.someone()), d.pick("runbook update", "alert threshold review", "load test", "dashboard cleanup"))
	}
	d.line("%s", d.chat())
	d.signoff(from)
	return d
}

func (w *world) social(n int) *draft {
	d := w.newDraft("email")
	from := w.someone()
	day := 14 + 23*n
	switch w.r.IntN(3) {
	case 0:
		d.email(from, d.list(), day, "Friday lunch")
		d.line("Hi all,")
		d.blank()
		d.line("Lunch is at the noodle place this Friday. %s and %s are booking the table, reply by Thursday.", d.full(w.someone()), d.full(w.someone()))
	case 1:
		leaver := w.someone(from)
		d.email(from, d.list(), day, "Leaving drinks")
		d.line("Hi all,")
		d.blank()
		d.line("%s's last day is Friday after %d years with us. Drinks from 5. Card is going round.", d.full(leaver), 2+w.r.IntN(6))
	default:
		d.email(from, d.list(), day, "Offsite logistics")
		d.line("Hello,")
		d.blank()
		d.line("Coaches leave at 8:30. %s has the dietary list; %s is running the quiz.", d.full(w.someone()), d.full(w.someone()))
	}
	d.signoff(from)
	return d
}

func (w *world) projectStatus(p int) *draft {
	d := w.newDraft("meeting-notes")
	day := 60 + w.r.IntN(280)
	name := w.entities[w.projects[p]].name
	d.title = name + " status " + date(day)
	d.line("%s — status %s", d.project(p), date(day))
	d.line("Present: %s, %s", d.full(w.someone()), d.full(w.someone()))
	d.blank()
	d.line("- Dry run %s; %s", d.pick("went fine", "slipped a week", "found two blockers"), d.pick("nothing else to report", "rollout plan under review", "waiting on security sign-off"))
	d.line("- Dependency on %s's new client library, ETA unclear", d.svc(w.anyService()))
	d.line("- %s", d.pick("Green.", "Amber.", "Amber, trending green."))
	return d
}
