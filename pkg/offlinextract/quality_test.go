package offlinextract

import (
	"strings"
	"testing"
)

// TestExtractTypesFromEvidence: a type needs evidence of that type, and the head
// word of a name outweighs what surrounds it.
func TestExtractTypesFromEvidence(t *testing.T) {
	tests := []struct {
		name, title, text string
		want              map[string]string // key → type
		not               map[string]string // key → a type it must not have
	}{
		{
			name: "the head word decides, not a place word before it",
			text: "The largest employer is the Marrow Bay Marine Institute. The town is governed by a nine-member Town Council.",
			want: map[string]string{"marrow bay marine institute": TypeOrganization, "town council": TypeOrganization},
		},
		{
			name: "a predicate belongs to the subject, not to a name in a prepositional phrase",
			text: "Dr Ada Quillane, a scientist at the Marrow Bay Marine Institute, has been a councillor since 2011.",
			want: map[string]string{"ada quillane": TypePerson, "marrow bay marine institute": TypeOrganization},
		},
		{
			name: "a cue word that opens a name heads it",
			text: "Boats stayed in port when Storm Hester struck in 1998.",
			want: map[string]string{"storm hester": TypeEvent},
		},
		{
			name:  "a title that joins names is no person, whatever the pronouns",
			title: "Gullhead Lighthouse and the Fenwick Family",
			text:  "Gullhead Lighthouse was first lit in 1871. His son kept the light. She grew up in the cottage. He died in 2012.",
			not:   map[string]string{"gullhead lighthouse and the fenwick family": TypePerson},
		},
		{
			name: "an honorific before a name that joins others is no evidence",
			text: "The guide covers Mayor Helena Dunmore and the Town Council in detail.",
			not:  map[string]string{"mayor helena dunmore and the town council": TypePerson},
		},
		{
			name: "a family name makes people of the names that end with it",
			text: "The Fenwick family kept the light for three generations. The museum was opened by Brisa Fenwick in 2003.",
			want: map[string]string{"brisa fenwick": TypePerson},
		},
		{
			name: "he or she in the next sentence",
			text: "Tavin Orrel teaches at the school on the hill. He has lived in the town since 1990.",
			want: map[string]string{"tavin orrel": TypePerson},
		},
		{
			name: "an occupation before the name",
			text: "The inquiry heard harbourmaster Dace Strand and deckhand Pell Marr.",
			want: map[string]string{"dace strand": TypePerson, "pell marr": TypePerson},
		},
		{
			name: "became and a role",
			text: "After the war Corvin Fenwick became keeper of the light.",
			want: map[string]string{"corvin fenwick": TypePerson},
		},
		{
			name: "a given name opens a person's name",
			text: "The committee met on Saturday. Among the guests were Maren Fenwick and the crew.",
			want: map[string]string{"maren fenwick": TypePerson},
		},
		{
			name: "a possessive inside an organization's name",
			text: "The Marrow Bay Fishers' Cooperative was founded in 1974. Later the Women's Institute rented its hall, next to Nolan's garage.",
			want: map[string]string{"marrow bay fishers cooperative": TypeOrganization, "womens institute": TypeOrganization, "nolan": ""},
		},
		{
			name: "a family name shared with a person of the chunk",
			text: "Odo Calloway planted the first vines in 1902. His daughter Ysolde Calloway runs the estate today.",
			want: map[string]string{"ysolde calloway": TypePerson, "odo calloway": TypePerson},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es, rs := Extract(tt.title, tt.text)
			checkWellFormed(t, es, rs, DefaultMaxEntities, DefaultMaxRelationships)
			got := byKey(es)
			for k, typ := range tt.want {
				if e, ok := got[k]; !ok {
					t.Errorf("entity %q missing (got %v)", k, es)
				} else if typ != "" && e.Type != typ {
					t.Errorf("entity %q: type %s, want %s", k, e.Type, typ)
				}
			}
			for k, typ := range tt.not {
				if e, ok := got[k]; ok && e.Type == typ {
					t.Errorf("entity %q typed %s", k, typ)
				}
			}
		})
	}
}

// TestExtractNounPhrasesNeedRecurrence: a generic noun phrase said once is no entity.
func TestExtractNounPhrasesNeedRecurrence(t *testing.T) {
	es, _ := Extract("", "Harbour Street runs along the quay, and the old customs house at its eastern end now serves as the Town Hall. "+
		"The oyster beds were first planted in 1988. A storm damaged the oyster beds in 1998, and a large share of the catch was lost.")
	got := byKey(es)
	for _, k := range []string{"eastern end", "old customs house", "customs house", "large share"} {
		if _, ok := got[k]; ok {
			t.Errorf("generic noun phrase %q is an entity", k)
		}
	}
	if e, ok := got["oyster beds"]; !ok || e.Type != TypeConcept {
		t.Errorf("recurring noun phrase %q: got %+v, want a CONCEPT", "oyster beds", e)
	}
	if _, ok := got["harbour street"]; !ok {
		t.Errorf("name %q missing", "harbour street")
	}
}

// TestExtractHeadings: a heading labels the text; it yields no entities and is never
// a description.
func TestExtractHeadings(t *testing.T) {
	text := "# Two Scientists, One Estuary\n\nDr Ada Quillane and Dr Tomas Reyburn have worked together since 2004.\n\n" +
		"## Runoff and the estuary\n\nTheir first project, the Estuary Nutrient Survey, ran from 2006 to 2008."
	for _, title := range []string{"", "Two Scientists, One Estuary", "Estuary Nutrient Survey"} {
		es, rs := Extract(title, text)
		got := byKey(es)
		for _, k := range []string{"one estuary", "scientists", "runoff"} {
			if _, ok := got[k]; ok {
				t.Errorf("title %q: heading word %q is an entity", title, k)
			}
		}
		for _, k := range []string{"ada quillane", "tomas reyburn", "estuary nutrient survey"} {
			if _, ok := got[k]; !ok {
				t.Errorf("title %q: entity %q missing", title, k)
			}
		}
		for _, e := range es {
			if strings.Contains(e.Description, "#") {
				t.Errorf("title %q: description of %q is a heading: %q", title, e.Name, e.Description)
			}
		}
		for _, r := range rs {
			if strings.Contains(r.Description, "#") {
				t.Errorf("title %q: description of %s–%s is a heading: %q", title, r.Source, r.Target, r.Description)
			}
		}
	}
	// A chunk of nothing but a heading has no description to give.
	es, _ := Extract("Storm Hester", "# Storm Hester")
	for _, e := range es {
		if e.Description != "" {
			t.Errorf("heading-only chunk: description of %q is %q", e.Name, e.Description)
		}
	}
}

// TestSubjectOfChineseTitle: a title in a script without spaces or capitals is named
// by the text that contains it, and reads like a name.
func TestSubjectOfChineseTitle(t *testing.T) {
	for _, tc := range []struct {
		name, title, text, want string
	}{
		{"the prose repeats it", "马罗湾海洋研究所", "# 马罗湾海洋研究所\n\n马罗湾海洋研究所成立于1964年。", "马罗湾海洋研究所"},
		{"the text does not name it", "马罗湾海洋研究所", "研究所成立于1964年。", "马罗湾海洋研究所"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Subject(tc.title, tc.text).Name; got != tc.want {
				t.Errorf("Subject(%q, …) = %q, want %q", tc.title, got, tc.want)
			}
		})
	}
}

// TestExtractChineseAndJapanese: names in scripts without capitals or spaces.
func TestExtractChineseAndJapanese(t *testing.T) {
	tests := []struct {
		name, text string
		want       map[string]string // key → type
		absent     []string
	}{
		{
			name: "Chinese",
			text: "马罗湾海洋研究所成立于1964年，位于马罗湾港口东侧的旧鱼市大楼。研究所的首任所长是艾达·奎兰，她主持了调查委员会。" +
				"2019年夏天，布拉克沃特藻华事件发生后，研究所与渔民合作社一起监测海水温度。托马斯·雷伯恩的报告《马罗湾海水的变化》被市议会采纳。",
			want: map[string]string{"马罗湾海洋研究所": TypeOrganization, "马罗湾": TypePlace, "艾达 奎兰": TypePerson,
				"托马斯 雷伯恩": TypePerson, "渔民合作社": TypeOrganization, "布拉克沃特藻华事件": TypeEvent, "马罗湾海水的变化": TypeWork},
			// A type word alone is the common noun; a one-character place word needs the
			// name to recur ("旧鱼市" once).
			absent: []string{"研究所", "旧鱼市", "马罗湾港", "市议会"},
		},
		{
			name:   "Japanese",
			text:   "ドナルド・キーンは東京大学で日本文学を教えた。",
			want:   map[string]string{"ドナルド キーン": TypePerson, "東京大学": TypeOrganization},
			absent: []string{"大学"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es, rs := Extract("", tt.text)
			checkWellFormed(t, es, rs, DefaultMaxEntities, DefaultMaxRelationships)
			got := byKey(es)
			for k, typ := range tt.want {
				if e, ok := got[k]; !ok {
					t.Errorf("entity %q missing (got %v)", k, es)
				} else if e.Type != typ {
					t.Errorf("entity %q: type %s, want %s", k, e.Type, typ)
				}
			}
			for _, k := range tt.absent {
				if _, ok := got[k]; ok {
					t.Errorf("junk entity %q extracted", k)
				}
			}
			if len(rs) == 0 {
				t.Error("no relationships")
			}
		})
	}
}
