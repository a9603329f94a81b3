package gencorpus

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

type kind int

const (
	kPerson kind = iota
	kTeam
	kService
	kSite
	kCity
	kVendor
	kCustomer
	kIncident
	kProject
)

var kindNames = [...]string{"person", "team", "service", "site", "city", "vendor", "customer", "incident", "project"}

func (k kind) String() string { return kindNames[k] }

// entity is one thing of the hidden world. forms are the surface forms that identify it
// in a text (the full name first); a document that names it uses one of them.
type entity struct {
	kind  kind
	name  string
	forms []string
}

// relation is a functional relation: a source has at most one target.
type relation int

const (
	relIncidentService relation = iota // incident → service that failed
	relIncidentLead                    // incident → person who commanded the response
	relServiceOwner                    // service → team
	relTeamManager                     // team → person
	relPersonTeam                      // person → team (members, not managers)
	relPersonOffice                    // person → office site
	relServiceSite                     // service → data-center site
	relSiteCity                        // site → city
	relServiceVendor                   // service → vendor of a component
	relVendorContact                   // vendor → person (external contact)
	relCustomerAM                      // customer → account manager
	relCustomerService                 // customer → service its integration calls
	relProjectService                  // project → service it migrates
	relProjectLead                     // project → person
	relServiceStore                    // service → datastore service
	numRelations
)

var relationNames = [...]string{
	"incident_service", "incident_lead", "service_owner", "team_manager", "person_team",
	"person_office", "service_site", "site_city", "service_vendor", "vendor_contact",
	"customer_am", "customer_service", "project_service", "project_lead", "service_store",
}

func (r relation) String() string { return relationNames[r] }

type fact struct {
	rel      relation
	src, dst int // entity ids
	doc      int // index of the one document stating it; -1 until rendered
}

type person struct {
	id         int
	first      string
	last       string
	team       int // team index
	office     int // site index
	manager    bool
	handle     string
	external   bool // a vendor's contact
	vendorSlug string
}

type service struct {
	id           int
	code, formal string
	store        bool
	team         int // owning team index (final)
	oldTeam      int // former owner, -1 when never moved
	site         int
	vendor       int // -1 when none
	component    string
	datastore    int // service index of its datastore, -1 for none
}

type incident struct {
	id        int
	key       string
	service   int
	lead      int // person index
	reporter  int // person index
	customer  int // customer index
	day       int
	severity  int
	symptom   string
	minute    int
	followups []int // person indexes
}

type world struct {
	r        *rand.Rand
	company  string
	domain   string
	entities []entity
	facts    []fact
	byKey    map[[2]int]int // (relation, src) → fact index
	related  map[[2]int]bool

	people    []person
	teams     []int // entity ids
	managers  []int // person index per team
	services  []service
	offices   []int // site indexes
	dcs       []int
	sites     []int // entity ids
	siteCity  []int // entity id of the city per site
	vendors   []int // entity ids
	contacts  []int // person index per vendor
	customers []int // entity ids
	custAM    []int // person index
	custOldAM []int // person index or -1
	custSvc   []int // service index
	custPlan  []string
	incidents []incident
	projects  []int // entity ids
	projSvc   []int
	projLead  []int
}

// sizes of the world; the corpus has about 450 documents with these.
const (
	nTeams      = 12
	nEmployees  = 96
	nServices   = 26
	nStores     = 8
	nOffices    = 5
	nDCs        = 5
	nVendors    = 9
	nCustomers  = 24
	nIncidents  = 48
	nProjects   = 9
	nMovedOwner = 7
)

func (w *world) add(k kind, name string, forms ...string) int {
	w.entities = append(w.entities, entity{kind: k, name: name, forms: append([]string{name}, forms...)})
	return len(w.entities) - 1
}

func (w *world) addFact(rel relation, src, dst int) {
	w.byKey[[2]int{int(rel), src}] = len(w.facts)
	w.facts = append(w.facts, fact{rel: rel, src: src, dst: dst, doc: -1})
	w.related[[2]int{src, dst}] = true
	w.related[[2]int{dst, src}] = true
}

// factOf returns the fact of relation rel from src, or -1.
func (w *world) factOf(rel relation, src int) int {
	if i, ok := w.byKey[[2]int{int(rel), src}]; ok {
		return i
	}
	return -1
}

func (w *world) pname(p int) string  { return w.people[p].first + " " + w.people[p].last }
func (w *world) pfirst(p int) string { return w.people[p].first }
func (w *world) pent(p int) int      { return w.people[p].id }
func (w *world) tname(t int) string  { return w.entities[w.teams[t]].name }
func (w *world) sname(s int) string  { return w.entities[w.sites[s]].name }
func (w *world) cname(c int) string  { return w.entities[w.customers[c]].name }
func (w *world) vname(v int) string  { return w.entities[w.vendors[v]].name }

func newWorld(seed uint64) *world {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	w := &world{r: r, byKey: map[[2]int]int{}, related: map[[2]int]bool{}}
	nm := newNamer(r)
	w.company = nm.word(2)
	w.domain = strings.ToLower(w.company) + ".example"

	// Sites and cities.
	for i := range nOffices + nDCs {
		city := w.add(kCity, nm.word(2+r.IntN(2)))
		var name string
		if i < nOffices {
			name = nm.word(2) + " " + pick(r, "House", "Yard", "Works", "Campus")
			w.offices = append(w.offices, i)
		} else {
			name = nm.word(2) + " " + pick(r, "DC", "DC", "Datacenter")
			w.dcs = append(w.dcs, i)
		}
		s := w.add(kSite, name, strings.Fields(name)[0])
		w.sites = append(w.sites, s)
		w.siteCity = append(w.siteCity, city)
		w.addFact(relSiteCity, s, city)
	}

	// Teams, people, managers.
	for _, t := range r.Perm(len(teamNames))[:nTeams] {
		w.teams = append(w.teams, w.add(kTeam, teamNames[t]))
	}
	lastNames := make([]string, 0, nEmployees)
	for i := range nEmployees + nVendors {
		first := nm.personWord(false)
		var last string
		// About one person in six shares a last name with someone else: near misses.
		if i > 0 && r.IntN(6) == 0 {
			last = lastNames[r.IntN(len(lastNames))]
		} else {
			last = nm.personWord(true)
		}
		lastNames = append(lastNames, last)
		p := person{first: first, last: last, handle: strings.ToLower(first[:1] + last)}
		p.id = w.add(kPerson, first+" "+last, first)
		if i >= nEmployees {
			p.external = true
			p.team, p.office = -1, -1
		} else {
			p.team = i % nTeams
			p.office = w.offices[r.IntN(len(w.offices))]
			p.manager = i < nTeams
		}
		w.people = append(w.people, p)
	}
	for t := range nTeams {
		w.managers = append(w.managers, t)
		w.addFact(relTeamManager, w.teams[t], w.pent(t))
	}
	for p := range nEmployees {
		pp := w.people[p]
		if !pp.manager {
			w.addFact(relPersonTeam, pp.id, w.teams[pp.team])
		}
		w.addFact(relPersonOffice, pp.id, w.sites[pp.office])
	}

	// Vendors and their contacts.
	for v := range nVendors {
		word := nm.word(2)
		w.vendors = append(w.vendors, w.add(kVendor, word+" "+pick(r, vendorSuffix...), word))
		c := nEmployees + v
		w.people[c].vendorSlug = strings.ToLower(word)
		w.contacts = append(w.contacts, c)
		w.addFact(relVendorContact, w.vendors[v], w.pent(c))
	}

	// Services: some bases twice ("ledger-api" and "ledger-sync") as near misses.
	bases := r.Perm(len(serviceBases))
	used := map[string]bool{}
	for i := range nServices + nStores {
		base := serviceBases[bases[i%len(bases)]]
		if i >= len(bases) || r.IntN(5) == 0 {
			base = serviceBases[bases[r.IntN(8)]]
		}
		s := service{store: i >= nServices, oldTeam: -1, vendor: -1, datastore: -1}
		for {
			k := pick(r, serviceKinds...)
			if s.store {
				k = pick(r, storeKinds...)
			}
			s.formal = base + "-" + k
			if !used[s.formal] {
				break
			}
			base = serviceBases[bases[r.IntN(len(bases))]]
		}
		used[s.formal] = true
		s.code = nm.word(2)
		s.id = w.add(kService, s.code, s.formal)
		s.team = r.IntN(nTeams)
		s.site = w.dcs[r.IntN(len(w.dcs))]
		w.services = append(w.services, s)
	}
	for _, i := range r.Perm(nServices + nStores)[:nMovedOwner] {
		s := &w.services[i]
		s.oldTeam = (s.team + 1 + r.IntN(nTeams-1)) % nTeams
	}
	comps := r.Perm(len(components))
	for n, i := range r.Perm(nServices + nStores)[:2*nVendors] {
		s := &w.services[i]
		s.vendor = n % nVendors
		s.component = components[comps[n%len(comps)]]
	}
	for i := range nServices {
		if r.IntN(3) > 0 {
			w.services[i].datastore = nServices + r.IntN(nStores)
		}
	}
	for i, s := range w.services {
		w.addFact(relServiceOwner, s.id, w.teams[s.team])
		w.addFact(relServiceSite, s.id, w.sites[s.site])
		if s.vendor >= 0 {
			w.addFact(relServiceVendor, s.id, w.vendors[s.vendor])
		}
		if s.datastore >= 0 {
			w.addFact(relServiceStore, s.id, w.services[s.datastore].id)
		}
		_ = i
	}

	// Customers.
	for range nCustomers {
		word := nm.word(2)
		c := w.add(kCustomer, word+" "+pick(r, customerSuffix...), word)
		w.customers = append(w.customers, c)
		am := r.IntN(nEmployees)
		old := -1
		if r.IntN(3) == 0 {
			old = (am + 1 + r.IntN(nEmployees-1)) % nEmployees
		}
		w.custAM = append(w.custAM, am)
		w.custOldAM = append(w.custOldAM, old)
		sv := r.IntN(nServices)
		w.custSvc = append(w.custSvc, sv)
		w.custPlan = append(w.custPlan, pick(r, "Starter", "Growth", "Enterprise"))
		w.addFact(relCustomerAM, c, w.pent(am))
		w.addFact(relCustomerService, c, w.services[sv].id)
	}

	// Incidents: several on the same service are near misses of one another.
	keys := map[int]bool{}
	for i := range nIncidents {
		n := 1000 + r.IntN(9000)
		for keys[n] {
			n = 1000 + r.IntN(9000)
		}
		keys[n] = true
		in := incident{
			key:      fmt.Sprintf("INC-%d", n),
			service:  r.IntN(nServices + nStores),
			lead:     r.IntN(nEmployees),
			reporter: r.IntN(nEmployees),
			customer: r.IntN(nCustomers),
			day:      5 + i*7 + r.IntN(5),
			severity: 1 + r.IntN(3),
			symptom:  pick(r, symptoms...),
			minute:   r.IntN(24 * 60),
		}
		for in.reporter == in.lead {
			in.reporter = r.IntN(nEmployees)
		}
		for range 2 + r.IntN(2) {
			in.followups = append(in.followups, r.IntN(nEmployees))
		}
		in.id = w.add(kIncident, in.key)
		w.incidents = append(w.incidents, in)
		w.addFact(relIncidentService, in.id, w.services[in.service].id)
		w.addFact(relIncidentLead, in.id, w.pent(in.lead))
	}

	// Projects.
	for _, i := range r.Perm(nServices)[:nProjects] {
		word := nm.word(2)
		p := w.add(kProject, "Project "+word, word)
		w.projects = append(w.projects, p)
		w.projSvc = append(w.projSvc, i)
		lead := r.IntN(nEmployees)
		w.projLead = append(w.projLead, lead)
		w.addFact(relProjectService, p, w.services[i].id)
		w.addFact(relProjectLead, p, w.pent(lead))
	}
	return w
}

func pick(r *rand.Rand, xs ...string) string { return xs[r.IntN(len(xs))] }
