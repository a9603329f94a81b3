package offlinextract

import (
	"testing"

	"github.com/graphrag/graphrag/pkg/normalize"
)

func TestExtractSemiStructured(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		want   []string
		absent []string
		rels   [][2]string
		norels [][2]string
	}{
		{
			name: "a header block: labels are markup, values are text",
			text: "From: Sishar Yafial <syafial@baidrou.example>\nTo: ops-announce@baidrou.example\n" +
				"Date: Mon, 3 Jun 2024 10:08\nSubject: Friday lunch\n\nHappy to say Wewam Gejoshe joined Internal Tools.",
			want:   []string{"sishar yafial", "wewam gejoshe", "internal tools"},
			absent: []string{"from", "to", "date", "subject", "mon", "jun", "friday lunch", "syafial baidrou example", "ops announce baidrou example"},
		},
		{
			name: "a ticket header with columns and multi-word labels",
			text: "BUG-6365\nType: Bug   Priority: P2   Status: Won't fix\nReporter: Kahe Cakucelski\n" +
				"Assignee: Feta Ceverell\nReported by: Puwun Vumairaski\nCreated: 2024-05-21 14:05\n\nSeeing memory creep since the last release.",
			want:   []string{"bug 6365", "kahe cakucelski", "feta ceverell", "puwun vumairaski"},
			absent: []string{"type", "bug", "bug priority", "priority", "p2 status", "status", "reporter", "assignee", "reported", "created", "kahe cakucelski assignee"},
			norels: [][2]string{{"kahe cakucelski", "feta ceverell"}},
		},
		{
			name:   "a name never continues across a line break or a bullet",
			text:   "Attendees: Ziatem Tajuzolley, Jiapil Davisman\nStatus: closed\n\nSummary\nImpact was low for Stohaiv Health\n- Wiaza Liatil\n- Core Platform owns it",
			want:   []string{"ziatem tajuzolley", "jiapil davisman", "stohaiv health", "wiaza liatil", "core platform"},
			absent: []string{"jiapil davisman status", "summary impact", "stohaiv health wiaza liatil", "wiaza liatil core platform"},
		},
		{
			name:   "a speaker before a colon is a name",
			text:   "Ada Quillane: the wall must be raised.\nColin Strand: agreed, with the harbour board.",
			want:   []string{"ada quillane", "colin strand"},
			absent: []string{"agreed"},
		},
		{
			name:   "calendar words in dates are no names",
			text:   "The window ran from 22:00 to 02:00 UTC on Mon, 3 Jun 2024, after the Q2 review with Ada Quillane. Jan Smith flew on 4 Mar.",
			want:   []string{"ada quillane", "jan smith"},
			absent: []string{"utc", "mon", "jun", "q2", "mar"},
		},
		{
			name: "identifiers: kebab-case, snake_case and codes",
			text: "Seeing memory creep in Treingok (session-db) since the last release.\nnotify-sync was degraded; the pager for " +
				"ledger_svc and k8s-proxy moved. Alerts still hit cache-worker, nothing else. See INC-3757.",
			want: []string{"session db", "notify sync", "ledger svc", "k8s proxy", "cache worker", "inc 3757", "treingok"},
			rels: [][2]string{{"treingok", "session db"}},
		},
		{
			name:   "an identifier is no part of a noun phrase",
			text:   "Move the payout-sync primaries onto the new racks.\npayout-sync serves only from there.",
			want:   []string{"payout sync"},
			absent: []string{"payout sync primaries"},
		},
		{
			name:   "a contraction of I opens no name",
			text:   "I'm Cehel, the contact for Joufa Mobility. You're on the plan; I'll send the review.",
			want:   []string{"cehel", "joufa mobility"},
			absent: []string{"im cehel", "ill"},
		},
		{
			name: "ordinary hyphenated English words are no identifiers",
			text: "She is a well-known singer-songwriter and a co-founder of the band. The follow-up was a long-term, award-winning " +
				"comedy-drama film released in the mid-1990s. It was a band-aid. We did a follow-up. Call the on-call engineer for a sign-off.",
			absent: []string{"well known", "singer songwriter", "co founder", "follow up", "long term", "award winning", "comedy drama",
				"mid 1990s", "band aid", "on call", "sign off"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			es, rs := Extract("", tc.text)
			checkWellFormed(t, es, rs, DefaultMaxEntities, DefaultMaxRelationships)
			got := byKey(es)
			for _, k := range tc.want {
				if _, ok := got[k]; !ok {
					t.Errorf("missing %q in %v", k, names(es))
				}
			}
			for _, k := range tc.absent {
				if _, ok := got[k]; ok {
					t.Errorf("unexpected %q in %v", k, names(es))
				}
			}
			for _, r := range tc.rels {
				if !hasRel(rs, r[0], r[1], "") {
					t.Errorf("no relationship %q–%q in %v", r[0], r[1], rs)
				}
			}
			for _, r := range tc.norels {
				if hasRel(rs, r[0], r[1], "") {
					t.Errorf("unexpected relationship %q–%q", r[0], r[1])
				}
			}
		})
	}
}

func names(es []Entity) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = normalize.Name(e.Name)
	}
	return out
}

func TestClassifyCode(t *testing.T) {
	for text, want := range map[string]codeKind{
		"INC-3757": codeID, "CVE-2021-44228": codeID, "ledger_svc": codeID, "config.yaml": codeID, "k8s-proxy": codeID,
		"cache-worker": codeKebab, "invoice-sync": codeKebab, "ledger-svc": codeKebab,
		"a@b.example": codeAddress,
		"well-known":  codeNone, "follow-ups": codeNone, "long-term": codeNone, "co-founder": codeNone, "mid-1990s": codeNone,
		"award-winning": codeNone, "e-mail": codeNone, "2024-05-21": codeNone, "Jean-Paul": codeNone, "Los Angeles-based": codeNone,
		"SEV1": codeNone, "U.S": codeNone,
	} {
		if got := classifyCode(text); got != want {
			t.Errorf("classifyCode(%q) = %d, want %d", text, got, want)
		}
	}
}
