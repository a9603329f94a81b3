package gencorpus

import (
	"fmt"
	"strings"
)

// Fact documents: each states one or two facts of the world, in one of several forms.

func (w *world) postmortem(tk *ticketer, i int) *draft {
	in := w.incidents[i]
	d := w.newDraft("postmortem")
	d.title = d.pick(in.key+" postmortem", "Postmortem: "+in.key, "[Retro] "+in.key+" — "+in.symptom, in.key+" incident review")
	d.state(relIncidentService, in.id)
	d.state(relIncidentLead, in.id)
	sev := fmt.Sprintf("SEV%d", in.severity)
	d.line("Incident: %s", d.incident(i))
	d.line("Date: %s", date(in.day))
	d.line("Severity: %s", sev)
	d.line("Reported by: %s", d.full(in.reporter))
	d.line("%s: %s", d.pick("Incident commander", "IC", "Incident lead"), d.full(in.lead))
	d.line("Status: %s", d.pick("resolved", "resolved, action items open", "closed"))
	d.blank()
	d.line("Summary")
	s := d.svc(in.service)
	switch d.r.IntN(3) {
	case 0:
		d.line("At %s UTC %s got paged for %s on %s. Customer traffic was affected for roughly %d minutes.", clock(in.minute), d.first(in.reporter), in.symptom, s, 10+d.r.IntN(170))
	case 1:
		d.line("%s was degraded for about %d minutes after %s; %s noticed it first and opened the incident.", s, 10+d.r.IntN(170), in.symptom, d.first(in.reporter))
	default:
		d.line("We saw %s in %s starting %s UTC. %s raised it in #incidents a few minutes later.", in.symptom, s, clock(in.minute), d.first(in.reporter))
	}
	d.blank()
	d.line("Timeline (UTC)")
	m := in.minute
	d.line("- %s first alert", clock(m))
	m += 3 + d.r.IntN(20)
	d.line("- %s %s declares %s and takes command", clock(m), d.first(in.lead), sev)
	m += 5 + d.r.IntN(40)
	d.line("- %s %s", clock(m), d.pick("rollback of the last deploy started", "traffic shifted away from the bad pool", "config reverted", "feature flag turned off"))
	m += 5 + d.r.IntN(60)
	d.line("- %s error rate back to baseline, monitoring", clock(m))
	d.blank()
	d.line("Impact")
	d.line("%s", d.pick(
		fmt.Sprintf("%s reported failed requests; a handful of other tenants saw retries.", d.customer(in.customer)),
		fmt.Sprintf("Mostly internal. %s opened a ticket about timeouts during the window.", d.customer(in.customer)),
		fmt.Sprintf("Around %d%% of requests failed, %s among the loudest.", 2+d.r.IntN(40), d.customer(in.customer)),
	))
	d.blank()
	d.line("Action items")
	for _, p := range in.followups {
		d.line("- [ ] %s: %s", d.person(p), d.pick("add an alert on saturation", "write the runbook section", "load test the fix", "review timeouts on callers", "check the other regions", "add a canary stage"))
	}
	return d
}

func (w *world) ownership(tk *ticketer, s int) []*draft {
	sv := w.services[s]
	var out []*draft
	if sv.oldTeam >= 0 {
		old := w.newDraft("ticket")
		key := tk.next("OPS")
		old.title = key + ": on-call rotation for " + sv.formal
		old.ticketFields(key, "Task", "Done", w.someone(), w.someone(), 2+w.r.IntN(60))
		old.line("Setting up the rotation for %s. %s will carry the pager for it for now; escalation goes to their secondary.", old.svc(s), old.team(sv.oldTeam))
		old.line("%s", old.chat())
		out = append(out, old)

		d := w.newDraft("change-request")
		key = tk.next("CHG")
		d.title = key + ": ownership transfer"
		d.state(relServiceOwner, sv.id)
		req := w.someone()
		d.line("%s — ownership transfer", key)
		d.line("Requested by: %s", d.full(req))
		d.line("Effective: %s", date(120+w.r.IntN(200)))
		d.blank()
		d.line("%s moves from %s to %s. Pager, dashboards, the error budget and the backlog all go with it; %s keeps read access for a quarter.", d.svc(s), d.team(sv.oldTeam), d.team(sv.team), d.team(sv.oldTeam))
		d.line("Reason: %s", d.pick("the reorg in Q2", "the new team already runs most of its callers", "balancing on-call load"))
		return append(out, d)
	}
	d := w.newDraft("")
	d.state(relServiceOwner, sv.id)
	switch w.r.IntN(3) {
	case 0:
		key := tk.next("OPS")
		d.typ = "ticket"
		d.title = key + ": alerts for " + sv.formal + " page the wrong rotation"
		d.ticketFields(key, "Bug", d.pick("In progress", "Done", "Open"), w.someone(), w.someone(), 10+w.r.IntN(300))
		d.line("Alerts from %s still page the old shared rotation.", d.svc(s))
		d.line("%s are the ones on call for it, please point the escalation policy at their schedule.", d.team(sv.team))
		d.line("%s", d.chat())
	case 1:
		asker := w.someone()
		d.typ = "email"
		from := w.someone(asker)
		d.email(from, d.to(asker), 10+w.r.IntN(300), "Re: who do I talk to about "+sv.formal+"?")
		d.line("%s", d.hello(d.first(asker)))
		d.blank()
		d.line("%s sits with %s — they carry the pager and review every change to it. Open a ticket in their queue rather than DMing people.", d.svc(s), d.team(sv.team))
		d.line("%s", d.chat())
		d.signoff(from)
	default:
		d.typ = "runbook"
		d.title = sv.formal + " runbook (header)"
		d.line("Service: %s", d.svc(s))
		d.line("Owning team: %s", d.team(sv.team))
		d.line("Tier: %d", 1+w.r.IntN(3))
		d.line("Dashboards: grafana/d/%s", strings.ToLower(sv.code))
		d.blank()
		d.line("First steps when paged: check the deploy log, then the saturation panel. Do not restart all pods at once.")
	}
	return append(out, d)
}

func (w *world) orgAnnouncement(t int) *draft {
	m := w.managers[t]
	d := w.newDraft("email")
	d.state(relTeamManager, w.teams[t])
	from := w.someone(m)
	subj := d.pick("Org update", "Leadership change in "+w.tname(t), "Re: "+w.tname(t)+" reporting lines", "Team changes this quarter")
	d.email(from, d.list(), 2+w.r.IntN(40), subj)
	d.line("%s", d.pick("Hi all,", "Hello everyone,", "Team,"))
	d.blank()
	switch w.r.IntN(3) {
	case 0:
		d.line("Please join me in welcoming %s, who takes over %s from today. Their 1:1s, hiring and headcount now go through %s.", d.full(m), d.team(t), d.first(m))
	case 1:
		d.line("From Monday the people on %s report to %s. %s has been acting in the role since the autumn, so this mostly makes it official.", d.team(t), d.full(m), d.first(m))
	default:
		d.line("Quick note: %s is now the engineering manager for %s. Roadmap questions for that group should go to them.", d.full(m), d.team(t))
	}
	d.line("%s", d.chat())
	d.signoff(from)
	return d
}

func (w *world) onboarding(p int, withOffice bool) *draft {
	pp := w.people[p]
	d := w.newDraft("email")
	d.state(relPersonTeam, pp.id)
	from := w.someone(p, w.managers[pp.team])
	d.email(from, d.list(), 5+w.r.IntN(330), d.pick("Welcome "+pp.first+"!", "New starter on Monday", "Please say hello to our new joiner"))
	d.line("%s", d.pick("Hi all,", "Hello folks,", "Everyone,"))
	d.blank()
	name := d.full(p)
	office := ""
	if withOffice {
		d.state(relPersonOffice, pp.id)
		office = fmt.Sprintf(" and will sit in %s", d.site(pp.office))
	}
	switch w.r.IntN(3) {
	case 0:
		d.line("%s starts on Monday on %s%s. %s", name, d.team(pp.team), office, d.pick("Say hi!", "Please make them feel welcome.", "Lunch is on the team."))
	case 1:
		d.line("Happy to say %s has joined us. %s is part of %s%s.", name, pp.first, d.team(pp.team), office)
	default:
		d.line("%s joins %s this week%s. First few days are laptop setup and shadowing on-call.", name, d.team(pp.team), office)
	}
	d.line("%s", d.chat())
	d.signoff(from)
	return d
}

func (w *world) deskMoves(ps []int) *draft {
	d := w.newDraft("email")
	from := w.someone(ps...)
	d.email(from, d.list(), 20+w.r.IntN(300), d.pick("Desk moves next week", "Seating plan update", "Office moves"))
	d.line("%s", d.pick("Hi all,", "Hello,", "Folks,"))
	d.blank()
	d.line("%s", d.pick("A few people are changing desks:", "Here are the moves for next week:", "Updated seating:"))
	for _, p := range ps {
		d.state(relPersonOffice, w.pent(p))
		d.line("- %s → %s", d.full(p), d.site(w.people[p].office))
	}
	d.line("Boxes will be in the kitchen on Thursday.")
	d.signoff(from)
	return d
}

func (w *world) changeRequest(tk *ticketer, s int) []*draft {
	sv := w.services[s]
	d := w.newDraft("change-request")
	d.state(relServiceSite, sv.id)
	key := tk.next("CHG")
	d.title = d.pick(key+": migrate "+sv.formal, key+" rack move", key+": "+sv.formal+" capacity change")
	d.line("%s", key)
	d.line("Requested by: %s", d.full(w.someone()))
	d.line("Window: %s 22:00–02:00 UTC", date(30+w.r.IntN(300)))
	d.line("Risk: %s", d.pick("low", "medium", "medium (stateful)"))
	d.blank()
	d.line("%s", d.pick(
		fmt.Sprintf("Move the %s primaries onto the new racks in %s. After this %s serves only from there.", d.svc(s), d.site(sv.site), sv.code),
		fmt.Sprintf("%s gets rehomed to %s; the old hosts are decommissioned once traffic is at zero.", d.svc(s), d.site(sv.site)),
		fmt.Sprintf("Final step of the consolidation: %s runs out of %s from this change on.", d.svc(s), d.site(sv.site)),
	))
	d.line("Rollback: flip the DNS weight back, data is replicated both ways during the window.")
	out := []*draft{d}
	if w.r.IntN(4) == 0 {
		other := w.dcs[w.r.IntN(len(w.dcs))]
		if other != sv.site {
			x := w.newDraft("change-request")
			key := tk.next("CHG")
			x.title = key + ": failover test"
			x.line("%s", key)
			x.line("Requested by: %s", x.full(w.someone()))
			x.line("Outcome: rolled back")
			x.blank()
			x.line("Trial failover of %s to %s. Replication lag was too high, so we reverted after 20 minutes; nothing moved permanently.", x.svc(s), x.site(other))
			out = append(out, x)
		}
	}
	return out
}

func (w *world) facilities(s int) *draft {
	d := w.newDraft("email")
	d.state(relSiteCity, w.sites[s])
	from := w.someone()
	name := w.sname(s)
	d.email(from, d.list(), 10+w.r.IntN(300), d.pick(name+": access and parking", "Visiting "+name+"?", "Re: badge access at "+name))
	d.line("%s", d.pick("Hi all,", "Hello,", "Quick reminder,"))
	d.blank()
	d.line("%s", d.pick(
		fmt.Sprintf("if you're heading to %s, it's the building on the ring road out in %s — book parking a day ahead.", d.site(s), d.city(s)),
		fmt.Sprintf("visits to %s (the %s one) need a badge request 48 hours ahead.", d.site(s), d.city(s)),
		fmt.Sprintf("the trains to %s are on strike Tuesday, so anyone due at %s should plan to work from home.", d.city(s), d.site(s)),
	))
	d.signoff(from)
	return d
}

func (w *world) procurement(tk *ticketer, s int) *draft {
	sv := w.services[s]
	d := w.newDraft("")
	d.state(relServiceVendor, sv.id)
	if w.r.IntN(2) == 0 {
		d.typ = "ticket"
		key := tk.next("PROC")
		d.title = key + ": " + sv.component + " renewal"
		d.ticketFields(key, "Purchase", d.pick("Awaiting approval", "Approved", "Open"), w.someone(), w.someone(), 20+w.r.IntN(300))
		d.line("Supplier: %s", d.vendor(sv.vendor))
		d.line("Needed by: %s", d.svc(s))
		d.line("Contract ends next month; renewal is flat on last year. Finance wants the PO by Friday.")
	} else {
		d.typ = "email"
		from := w.someone()
		d.email(from, "finance@"+w.domain, 20+w.r.IntN(300), "PO sign-off: "+sv.component)
		d.line("%s", d.hello("Finance team"))
		d.blank()
		d.line("The %s that %s relies on comes from %s. Can we get the PO signed this week? Otherwise we lose the discount.", sv.component, d.svc(s), d.vendor(sv.vendor))
		d.signoff(from)
	}
	return d
}

func (w *world) vendorIntro(v int) *draft {
	c := w.contacts[v]
	d := w.newDraft("email")
	d.state(relVendorContact, w.vendors[v])
	to := w.someone()
	d.email(c, d.to(to), 10+w.r.IntN(300), d.pick("Introduction", "Quarterly business review", "Your account with us"))
	d.line("%s", d.hello(d.first(to)))
	d.blank()
	d.line("%s", d.pick(
		fmt.Sprintf("I've taken over your account here at %s, so I'm who to chase for renewals and escalations from now on.", d.vendor(v)),
		fmt.Sprintf("following up on our call: happy to set up the quarterly review. For anything about your %s contract, come straight to me.", d.vendor(v)),
	))
	d.line("Best regards,")
	d.line("%s", d.full(c))
	d.line("%s", d.vendor(v))
	return d
}

func (w *world) amIntro(c int) *draft {
	am, old := w.custAM[c], w.custOldAM[c]
	d := w.newDraft("email")
	d.state(relCustomerAM, w.customers[c])
	cust := w.cname(c)
	d.email(am, "ops@"+strings.ToLower(strings.Fields(cust)[0])+".example", 10+w.r.IntN(300), d.pick(cust+" account — handover", "Intro: your point of contact", "Checking in"))
	d.line("%s", d.pick("Hi there,", "Hello,", "Dear "+cust+" team,"))
	d.blank()
	name := d.first(am)
	if old >= 0 {
		d.line("I'm %s and I'm taking over the %s relationship from %s, who has moved to another role. Renewals, escalations and roadmap questions now come to me.", name, d.customer(c), d.full(old))
	} else {
		d.line("I'm %s, the person on our side for everything %s: renewals, escalations, roadmap questions.", name, d.customer(c))
	}
	d.line("You're on the %s plan; I'll send the usage review next week.", w.custPlan[c])
	d.line("%s", d.chat())
	d.blank()
	d.line("%s", d.full(am))
	return d
}

func (w *world) integrationTicket(tk *ticketer, c int) *draft {
	s := w.custSvc[c]
	d := w.newDraft("ticket")
	d.state(relCustomerService, w.customers[c])
	key := tk.next("SUP")
	cust := w.cname(c)
	d.title = key + ": " + cust + " — " + d.pick("intermittent 401s", "webhook retries", "slow responses", "sandbox credentials")
	d.ticketFields(key, "Support", d.pick("Waiting on customer", "Open", "Solved"), w.someone(), w.someone(), 30+w.r.IntN(300))
	d.line("Customer: %s", d.customer(c))
	d.line("%s", d.pick(
		fmt.Sprintf("Their integration only talks to %s, so I've looked at its logs for the customer's key.", d.svc(s)),
		fmt.Sprintf("Checked with their developer: everything they send hits %s, nothing else.", d.svc(s)),
		fmt.Sprintf("Their whole integration is built on %s; the errors line up with a key rotation on their side.", d.svc(s)),
	))
	d.line("%s", d.pick("Asked them for request IDs.", "Will update after the call tomorrow.", "Probably not a bug on our side."))
	return d
}

func (w *world) kickoff(p int) *draft {
	lead, s := w.projLead[p], w.projSvc[p]
	d := w.newDraft("meeting-notes")
	d.state(relProjectService, w.projects[p])
	d.state(relProjectLead, w.projects[p])
	day := 10 + w.r.IntN(300)
	name := w.entities[w.projects[p]].name
	d.title = d.pick(name+" kickoff "+date(day), "Notes: "+name+" planning", name+" — first sync")
	d.line("%s — %s", d.project(p), date(day))
	att := []string{d.full(lead)}
	for range 2 + w.r.IntN(3) {
		att = append(att, d.full(w.someone(lead)))
	}
	d.line("Attendees: %s", strings.Join(att, ", "))
	d.blank()
	d.line("- Goal: get %s off the legacy hosts and onto the new deploy pipeline by end of quarter.", d.svc(s))
	d.line("- %s drives it; weekly check-ins on Tuesdays.", d.first(lead))
	d.line("- Risks: %s", d.pick("the schema change", "nobody has touched the batch jobs in years", "holiday freeze"))
	d.line("- Next: draft the rollout plan, book a dry run.")
	return d
}

func (w *world) designReview(tk *ticketer, s int) *draft {
	sv := w.services[s]
	d := w.newDraft("")
	d.state(relServiceStore, sv.id)
	if w.r.IntN(2) == 0 {
		d.typ = "meeting-notes"
		day := 10 + w.r.IntN(300)
		d.title = "Design review: " + sv.formal + " write path"
		d.line("Design review — %s", date(day))
		d.line("Present: %s, %s", d.full(w.someone()), d.full(w.someone()))
		d.blank()
		d.line("- %s persists every write in %s; reads go through a local cache.", d.svc(s), d.svc(sv.datastore))
		d.line("- Question on retention, parked.")
		d.line("- %s", d.pick("Approved with comments.", "Needs a second pass.", "LGTM from the reviewers."))
	} else {
		d.typ = "ticket"
		key := tk.next("DB")
		d.title = key + ": connection limits"
		d.ticketFields(key, "Bug", d.pick("Open", "In progress"), w.someone(), w.someone(), 10+w.r.IntN(300))
		d.line("%s exhausts its pool against %s during the nightly batch. Raising the limit is a band-aid; the batch should page through.", d.svc(s), d.svc(sv.datastore))
	}
	return d
}
