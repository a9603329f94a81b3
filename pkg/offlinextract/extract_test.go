package offlinextract

import (
	"bufio"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/normalize"
)

type passage struct {
	ID, Title, Text string
}

// passages reads testdata/hotpotqa.jsonl: the first 60 passages of the
// HotpotQA sample in /work/shared/datasets (CC BY-SA), copied as test data.
func passages(tb testing.TB) []passage {
	tb.Helper()
	f, err := os.Open("testdata/hotpotqa.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []passage
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var p passage
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			tb.Fatal(err)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

func passageByID(tb testing.TB, id string) passage {
	for _, p := range passages(tb) {
		if p.ID == id {
			return p
		}
	}
	tb.Fatalf("no passage %s", id)
	return passage{}
}

func byKey(es []Entity) map[string]Entity {
	m := map[string]Entity{}
	for _, e := range es {
		m[normalize.Name(e.Name)] = e
	}
	return m
}

func hasRel(rs []Relationship, a, b, typ string) bool {
	for _, r := range rs {
		s, t := normalize.Name(r.Source), normalize.Name(r.Target)
		if (s == a && t == b || typ == "" && s == b && t == a) && (typ == "" || r.Type == typ) {
			return true
		}
	}
	return false
}

// checkWellFormed verifies what every result must satisfy.
func checkWellFormed(t *testing.T, es []Entity, rs []Relationship, maxE, maxR int) {
	t.Helper()
	if len(es) > maxE || len(rs) > maxR {
		t.Errorf("%d entities, %d relationships: caps %d/%d", len(es), len(rs), maxE, maxR)
	}
	names := map[string]bool{}
	for _, e := range es {
		k := normalize.Name(e.Name)
		if k == "" || names[k] {
			t.Errorf("entity %q: empty or duplicate key %q", e.Name, k)
		}
		names[k] = true
		if e.Type == "" || len(e.Description) > MaxDescription+len("…") {
			t.Errorf("entity %+v: no type or description too long", e)
		}
	}
	for _, r := range rs {
		if !names[normalize.Name(r.Source)] || !names[normalize.Name(r.Target)] || r.Source == r.Target {
			t.Errorf("relationship %+v: endpoint not an entity, or a loop", r)
		}
		if !(r.Strength > 0 && r.Strength <= 1) || r.Type == "" {
			t.Errorf("relationship %+v: strength out of (0,1] or no type", r)
		}
	}
}

func TestExtractPassages(t *testing.T) {
	tests := []struct {
		id     string
		want   map[string]string // key → type ("" for any type)
		absent []string
		rels   [][3]string // source key, target key, type ("" for any, either direction)
	}{
		{
			id: "p0000", // Demon Dice
			want: map[string]string{"demon dice": TypeWork, "chaos progenitus": "", "lester smith": "",
				"tim brown": "", "dragon dice": "", "fast forward games": ""},
			// "a collectible dice game" is said once: a description of Demon Dice, no entity.
			absent: []string{"in", "it", "neither", "the", "original chaos progenitus", "demon made", "collectible dice game"},
			rels:   [][3]string{{"demon dice", "lester smith", ""}, {"demon dice", "chaos progenitus", "PUBLISHED_AS"}, {"lester smith", "tim brown", ""}},
		},
		{
			id:     "p0010", // Christopher Nolan
			want:   map[string]string{"christopher nolan": TypePerson},
			absent: []string{"christopher edward nolan", "english american", "he", "english"},
		},
		{
			id: "p0011", // The Prestige (film)
			want: map[string]string{"prestige": TypeWork, "christopher nolan": TypePerson, "christian bale": TypePerson,
				"hugh jackman": TypePerson, "michael caine": TypePerson, "london": "", "batman begins": TypeWork,
				"robert angier": "", "nikola tesla": ""},
			absent: []string{"nolan", "bale", "its story", "obsessed", "british american", "prestige film"},
			rels:   [][3]string{{"prestige", "christopher nolan", ""}, {"robert angier", "alfred borden", ""}},
		},
		{
			id: "p0025", // David Smith (director)
			want: map[string]string{"david smith": TypePerson, "faversham": TypePlace, "santa barbara": TypePlace,
				"california": TypePlace, "vitagraph studios": TypeOrganization, "albert e smith": ""},
			absent: []string{"he", "english", "david smith director"},
			rels:   [][3]string{{"david smith", "faversham", ""}, {"albert e smith", "vitagraph studios", ""}},
		},
		{
			id: "p0035", // Leland, North Carolina
			want: map[string]string{"leland north carolina": TypePlace, "brunswick county": TypePlace,
				"maximum overdrive": TypeWork, "were the millers": TypeWork, "united states": ""},
			absent: []string{"leland", "it", "a number"},
			rels:   [][3]string{{"leland north carolina", "maximum overdrive", ""}, {"brunswick county", "north carolina", ""}},
		},
	}
	for _, tt := range tests {
		p := passageByID(t, tt.id)
		t.Run(p.Title, func(t *testing.T) {
			es, rs := Extract(p.Title, p.Text)
			checkWellFormed(t, es, rs, DefaultMaxEntities, DefaultMaxRelationships)
			got := byKey(es)
			for k, typ := range tt.want {
				e, ok := got[k]
				switch {
				case !ok:
					t.Errorf("entity %q missing", k)
				case typ != "" && e.Type != typ:
					t.Errorf("entity %q: type %s, want %s", k, e.Type, typ)
				case e.Description == "":
					t.Errorf("entity %q has no description", k)
				}
			}
			for _, k := range tt.absent {
				if _, ok := got[k]; ok {
					t.Errorf("junk entity %q extracted", k)
				}
			}
			for _, r := range tt.rels {
				if !hasRel(rs, r[0], r[1], r[2]) {
					t.Errorf("relationship %v missing", r)
				}
			}
			// The title is the first entity and linked to every other one.
			title := normalize.Subject(p.Title) // the key the query service follows to this document
			if normalize.Name(es[0].Name) != title {
				t.Errorf("first entity %q, want the title %q", es[0].Name, title)
			}
			for _, e := range es[1:] {
				if !hasRel(rs, title, normalize.Name(e.Name), "") && !hasRel(rs, normalize.Name(e.Name), title, "") {
					t.Errorf("title not linked to %q", e.Name)
				}
			}
		})
	}
}

func TestExtractRules(t *testing.T) {
	tests := []struct {
		name   string
		title  string
		text   string
		want   map[string]string
		absent []string
		rels   [][3]string
	}{
		{
			name:   "sentence-initial single word needs evidence",
			text:   "Kolno is a village in Poland. However, it is small.",
			want:   map[string]string{"poland": ""},
			absent: []string{"kolno", "however", "it"},
		},
		{
			name:   "a whole quoted span mid-sentence is a title; quoted speech is not",
			text:   `She was cast in the soap opera "Neighbours", filmed in Melbourne. He told her: "Wait" and left. "Yes" was all he said.`,
			want:   map[string]string{"neighbours": "", "melbourne": ""},
			absent: []string{"wait", "yes"},
		},
		{
			name:  "title makes a sentence-initial word a name",
			title: "Kolno",
			text:  "Kolno is a village in Poland.",
			want:  map[string]string{"kolno": TypePlace, "poland": ""},
			rels:  [][3]string{{"kolno", "poland", ""}},
		},
		{
			name:   "capitalized elsewhere makes it a name",
			text:   "Kolno is a village. The river near Kolno floods.",
			want:   map[string]string{"kolno": ""},
			absent: []string{"the", "the river"},
		},
		{
			name:   "common first word dropped",
			text:   "In Poland, the winters are cold. The Beatles played there.",
			want:   map[string]string{"poland": "", "beatles": ""},
			absent: []string{"in poland", "in", "the"},
		},
		{
			name:   "connectors between capitals only",
			text:   "She studied at the University of Oxford and admired Leonardo da Vinci of Florence.",
			want:   map[string]string{"university of oxford": TypeOrganization, "leonardo da vinci": "", "florence": ""},
			absent: []string{"oxford", "university of oxford and admired", "she"},
		},
		{
			name:   "and does not fuse people",
			text:   "The album was produced by Tim Armstrong of Rancid and Brett Gurewitz of Bad Religion.",
			want:   map[string]string{"tim armstrong": "", "rancid": "", "brett gurewitz": "", "bad religion": ""},
			absent: []string{"tim armstrong of rancid and brett gurewitz of bad religion", "tim armstrong of rancid", "brett gurewitz of bad religion"},
		},
		{
			name: "and inside an organization",
			text: "He led the Department of Health and Human Services for years.",
			want: map[string]string{"department of health and human services": TypeOrganization},
		},
		{
			name:   "initials and possessives",
			text:   "The books of J. K. Rowling sold well. We saw Nolan's film.",
			want:   map[string]string{"j k rowling": "", "nolan": ""},
			absent: []string{"nolans", "nolan s"},
		},
		{
			name:   "acronyms",
			text:   "The probe was built by NASA and shown on the BBC.",
			want:   map[string]string{"nasa": TypeOrganization, "bbc": TypeOrganization},
			absent: []string{"the"},
		},
		{
			name:   "shouting is not names",
			text:   "THE END IS NEAR AND SO ARE WE.",
			absent: []string{"end", "near", "the end is near and so are we"},
		},
		{
			name: "verb between mentions",
			text: "Steve Jobs founded Apple in a garage. The film Inception was directed by Christopher Nolan. Marie Curie was born in Warsaw.",
			want: map[string]string{"steve jobs": "", "apple": "", "inception": TypeWork, "christopher nolan": TypePerson, "marie curie": TypePerson, "warsaw": TypePlace},
			rels: [][3]string{{"steve jobs", "apple", "FOUNDED"}, {"christopher nolan", "inception", "DIRECTED"}, {"marie curie", "warsaw", "BORN_IN"}},
		},
		{
			name:   "no verb through a noun",
			text:   "Arthur is a British comedy film directed by Samuel Gallu.",
			absent: []string{"british"},
		},
		{
			name:   "honorific dropped before a full name",
			text:   "The city was led by Mayor George Moscone and King George had no say.",
			want:   map[string]string{"george moscone": TypePerson, "king george": TypePerson},
			absent: []string{"mayor george moscone"},
		},
		{
			name:   "noun phrase ends before a verb",
			text:   "In the end the band consists of four players, and the song went gold.",
			absent: []string{"band consists", "song went"},
		},
		{
			name:   "hyphenated adjective",
			text:   "They formed a Los Angeles-based band with Billy Idol.",
			want:   map[string]string{"billy idol": ""},
			absent: []string{"los", "los angeles based", "angeles based"},
		},
		{
			name:   "weekdays and months are not names by default",
			text:   "On Monday, 4 March 1990, Mary Smith met John Brown in Paris.",
			want:   map[string]string{"mary smith": "", "john brown": "", "paris": ""},
			absent: []string{"monday", "march", "1990"},
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
			for _, k := range tt.absent {
				if _, ok := got[k]; ok {
					t.Errorf("junk entity %q extracted", k)
				}
			}
			for _, r := range tt.rels {
				if !hasRel(rs, r[0], r[1], r[2]) {
					t.Errorf("relationship %v missing (got %+v)", r, rs)
				}
			}
		})
	}
}

func TestExtractOptions(t *testing.T) {
	p := passageByID(t, "p0011")
	tests := []struct {
		name       string
		opts       []Option
		maxE, maxR int
		check      func(t *testing.T, es []Entity, rs []Relationship)
	}{
		{"caps", []Option{WithMaxEntities(3), WithMaxRelationships(2)}, 3, 2, func(t *testing.T, es []Entity, rs []Relationship) {
			if len(es) != 3 || len(rs) != 2 {
				t.Errorf("got %d entities, %d relationships; want 3 and 2", len(es), len(rs))
			}
			if normalize.Name(es[0].Name) != "prestige" {
				t.Errorf("the title was not kept first: %v", es)
			}
		}},
		{"non-positive caps mean defaults", []Option{WithMaxEntities(0), WithMaxRelationships(-1)}, DefaultMaxEntities, DefaultMaxRelationships, func(t *testing.T, es []Entity, rs []Relationship) {
			if len(es) < 10 {
				t.Errorf("only %d entities", len(es))
			}
		}},
		{"no noun phrases", []Option{WithNounPhrases(false)}, DefaultMaxEntities, DefaultMaxRelationships, func(t *testing.T, es []Entity, rs []Relationship) {
			for _, e := range es {
				if e.Type == TypeConcept {
					t.Errorf("concept %q with noun phrases off", e.Name)
				}
			}
		}},
		{"dates", []Option{WithDates(true)}, DefaultMaxEntities, DefaultMaxRelationships, func(t *testing.T, es []Entity, rs []Relationship) {
			if e, ok := byKey(es)["2006"]; !ok || e.Type != TypeDate {
				t.Errorf("year 2006 not a DATE entity: %v", es)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es, rs := Extract(p.Title, p.Text, tt.opts...)
			checkWellFormed(t, es, rs, tt.maxE, tt.maxR)
			tt.check(t, es, rs)
		})
	}
}

func TestExtractEdgeCases(t *testing.T) {
	tests := []struct {
		name, title, text string
		wantEntities      int
	}{
		{"nothing", "", "", 0},
		{"title only", "Demon Dice", "", 1},
		{"no names", "", "it was quiet and nothing happened at all.", 0},
		{"invalid utf-8", "", "Paris \xff is in France.", -1},
		{"long sentence description", "", "Paris " + strings.Repeat("is very large and ", 40) + "lies in France.", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es, rs := Extract(tt.title, tt.text)
			checkWellFormed(t, es, rs, DefaultMaxEntities, DefaultMaxRelationships)
			if tt.wantEntities >= 0 && len(es) != tt.wantEntities {
				t.Errorf("%d entities, want %d: %v", len(es), tt.wantEntities, es)
			}
		})
	}
}

func TestExtractDeterministic(t *testing.T) {
	for _, p := range passages(t)[:20] {
		t.Run(p.Title, func(t *testing.T) {
			es, rs := Extract(p.Title, p.Text)
			checkWellFormed(t, es, rs, DefaultMaxEntities, DefaultMaxRelationships)
			for i := range 5 {
				es2, rs2 := Extract(p.Title, p.Text)
				if !reflect.DeepEqual(es, es2) || !reflect.DeepEqual(rs, rs2) {
					t.Fatalf("run %d differs", i)
				}
			}
		})
	}
}

func FuzzExtract(f *testing.F) {
	// Short seeds: the fuzz engine mutates long ones very slowly.
	for _, p := range passages(f)[:8] {
		f.Add(p.Title, p.Text[:min(len(p.Text), 240)])
	}
	f.Add("", "A. B. C.")
	f.Add("X (y)", "\xff Dr. J. of the And & Co's")
	f.Add("马罗湾", "# 马罗湾\n\n艾达·奎兰在马罗湾研究所。《报告》ドナルド・キーンは東京大学")
	f.Add("doc-1", "INC-1\nType: Bug   Status: Open\nFrom: A B <a@b.c>\n- [ ] C D: fix cache-worker, ledger_svc\n\tMon, 3 Jun 2024 10:08 UTC")
	f.Fuzz(func(t *testing.T, title, text string) {
		es, rs := Extract(title, text)
		checkWellFormed(t, es, rs, DefaultMaxEntities, DefaultMaxRelationships)
		es2, rs2 := Extract(title, text)
		if !reflect.DeepEqual(es, es2) || !reflect.DeepEqual(rs, rs2) {
			t.Fatal("not deterministic")
		}
	})
}

func BenchmarkExtract(b *testing.B) {
	ps := passages(b)
	var bytes int64
	for _, p := range ps {
		bytes += int64(len(p.Text))
	}
	b.SetBytes(bytes / int64(len(ps)))
	n := 0
	for b.Loop() {
		p := ps[n%len(ps)]
		Extract(p.Title, p.Text)
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "chunks/s")
}
