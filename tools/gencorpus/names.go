package gencorpus

import (
	"math/rand/v2"
	"strings"
)

// namer invents pronounceable words from syllables and never hands out the same word
// twice, so that a first name, a code name and a city can never be confused by a
// retriever or by the self-check's word matching.
type namer struct {
	r    *rand.Rand
	used map[string]bool
}

var (
	onsets = []string{"b", "br", "d", "dr", "f", "g", "gr", "h", "j", "k", "kr", "l", "m", "n", "p", "r", "s", "st", "t", "th", "v", "w", "z", "sh", "c", "tr"}
	vowels = []string{"a", "e", "i", "o", "u", "a", "e", "o", "ai", "ei", "ou", "ia"}
	codas  = []string{"", "", "", "n", "r", "l", "s", "m", "th", "k", "nd", "rt", "x", "v"}
)

func newNamer(r *rand.Rand) *namer {
	n := &namer{r: r, used: map[string]bool{}}
	// Words of the templates and of the fixed lists, so that no invented name is one.
	for _, w := range reservedWords {
		n.used[w] = true
	}
	return n
}

// reserve keeps words (any case) from ever being invented as names.
func (n *namer) reserve(words ...string) {
	for _, w := range words {
		n.used[strings.ToLower(w)] = true
	}
}

func (n *namer) syllable(coda bool) string {
	s := onsets[n.r.IntN(len(onsets))] + vowels[n.r.IntN(len(vowels))]
	if coda {
		s += codas[n.r.IntN(len(codas))]
	}
	return s
}

// word returns an unused capitalized word of syl syllables, 4 to 9 letters long.
func (n *namer) word(syl int) string {
	for {
		var b strings.Builder
		for i := range syl {
			b.WriteString(n.syllable(i == syl-1 || n.r.IntN(3) == 0))
		}
		w := b.String()
		if len(w) < 4 || len(w) > 9 || n.used[w] {
			continue
		}
		n.used[w] = true
		return strings.ToUpper(w[:1]) + w[1:]
	}
}

var (
	softOnsets  = []string{"b", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "y", "c", "sh"}
	softVowels  = []string{"a", "e", "i", "o", "u", "a", "e", "i", "ai", "ia"}
	softCodas   = []string{"", "", "", "n", "r", "l", "s", "m"}
	nameEndings = []string{"", "", "", "", "ley", "sen", "ford", "man", "ard", "ez", "ski", "ton", "ova", "ell", "berg", "wick"}
)

// personWord returns an unused capitalized given name (last false) or family name,
// softer than word's: simple onsets, few final consonants, family names sometimes with
// an ending.
func (n *namer) personWord(last bool) string {
	for {
		var b strings.Builder
		syl := 2
		if last && n.r.IntN(3) == 0 {
			syl = 3
		}
		for i := range syl {
			b.WriteString(softOnsets[n.r.IntN(len(softOnsets))] + softVowels[n.r.IntN(len(softVowels))])
			if i == syl-1 {
				b.WriteString(softCodas[n.r.IntN(len(softCodas))])
			}
		}
		if last {
			b.WriteString(nameEndings[n.r.IntN(len(nameEndings))])
		}
		w := b.String()
		if len(w) < 3 || len(w) > 10 || n.used[w] {
			continue
		}
		n.used[w] = true
		return strings.ToUpper(w[:1]) + w[1:]
	}
}

// reservedWords are never invented names (template and list words a name could collide with).
var reservedWords = []string{
	"data", "team", "site", "city", "hub", "dc", "note", "notes", "made", "more", "some",
	"take", "time", "tomo", "sure", "bore", "dare", "done", "gone", "have", "here", "hope",
	"late", "line", "live", "make", "mine", "move", "none", "page", "rate", "role", "sale",
	"same", "save", "side", "tone", "vote", "wire", "zone", "home", "lead", "tier", "pool",
	"ledger", "relay", "quota", "route", "cache", "index", "token", "media", "geo", "core",
}

var (
	teamNames = []string{
		"Core Platform", "Growth Engineering", "Edge Networking", "Data Foundations",
		"Reliability", "Trust and Safety", "Merchant Experience", "Internal Tools",
		"Mobile Backend", "Integrations", "Infrastructure", "Commerce Backend",
	}
	serviceBases = []string{
		"ledger", "relay", "quota", "ingest", "notify", "render", "sched", "audit", "route",
		"cache", "index", "export", "payout", "invoice", "session", "token", "pricing",
		"catalog", "stock", "checkout", "webhook", "flags", "report", "geo",
	}
	serviceKinds = []string{"svc", "api", "worker", "gateway", "sync"}
	storeKinds   = []string{"db", "store", "queue"}
	components   = []string{
		"HSM appliance", "CDN", "SMS gateway", "object storage", "message broker",
		"TLS certificates", "geo-IP database", "e-mail relay", "fraud scoring feed",
		"tax rate feed", "managed Postgres", "log shipping agent",
	}
	customerSuffix = []string{"Logistics", "Health", "Retail", "Labs", "Group", "Foods", "Energy", "Mobility", "Freight", "Media"}
	vendorSuffix   = []string{"Systems", "Networks", "Cloud", "Data", "Security", "Telecom"}
	symptoms       = []string{
		"p99 latency above four seconds", "a spike of 502 responses", "a queue backlog of two million messages",
		"TLS handshake failures", "a full disk on the primary", "stale cache entries served for an hour",
		"duplicate webhook deliveries", "scheduled jobs that never fired", "repeated OOM kills",
		"an expired certificate", "connection pool exhaustion", "a bad config push",
	}
)
