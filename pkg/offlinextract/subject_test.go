package offlinextract

import (
	"slices"
	"testing"

	"github.com/graphrag/graphrag/pkg/normalize"
)

func TestSubject(t *testing.T) {
	for _, tc := range []struct {
		name, title, text, want string
	}{
		{"a title the text names", "Maximum Overdrive (film)", "Maximum Overdrive is a 1986 horror film.", "Maximum Overdrive (film)"},
		{"a name-like title the text does not name", "Influence of Stanley Kubrick", "Stanley Kubrick is regarded as one of the most influential directors.", "Influence of Stanley Kubrick"},
		{"an opaque title: the defining sentence", "note-00042", "Maximum Overdrive is a 1986 American horror film written and directed by Stephen King.", "Maximum Overdrive"},
		{"a file name", "report-q3.pdf", "Leland is a town in Brunswick County, North Carolina.", "Leland"},
		{"no title", "", "Demon Dice, originally published as Chaos Progenitus, is a collectible dice game.", "Demon Dice"},
		{"parenthetical and article", "doc-1", "The Hukilau Song (1948) is a song written by Jack Owens.", "Hukilau Song"},
		{"quoted title", "doc-1", `"The Hukilau Song" is a song written by Jack Owens in 1948.`, "Hukilau Song"},
		{"lower-case concept", "doc-1", "The demon algorithm is a Monte Carlo method for sampling.", "demon algorithm"},
		{"second name with or", "doc-1", "A lilu or lilû is a masculine Akkadian word for a spirit.", "lilu"},
		{"opening adverbial phrase", "doc-1", "In Akkadian and Sumerian mythology, Alû is a vengeful spirit.", "Alû"},
		{"honorific", "doc-1", "General Moses Ali (born 5 April 1939) is a Ugandan politician.", "Moses Ali"},
		{"a given name that is also a title", "doc-1", "King Wallis Vidor (February 8, 1894 – November 1, 1982) was an American film director.", "King Wallis Vidor"},
		{"a name and a verb", "doc-1", "Lester Smith designed the game in 1996 with Tim Brown.", "Lester Smith"},
		{"no defining sentence: no subject, however often a name recurs", "ticket 4821", "In 2003 she moved to Marrow Bay. Ada Quillane joined the institute. Later Ada Quillane chaired the inquiry.", ""},
		{"nothing to go by", "note-7", "it was raining. we stayed in.", ""},
		{"a clause is no subject", "note-7", "In 1990 the company that was founded was sold.", ""},
		{"a participle clause is no subject", "note-7", "A film shot in North Carolina in 1986 was directed by a local crew.", ""},
		{"a ticket opens with its key", "doc-00001", "BUG-6365\nType: Bug   Priority: P2\nReporter: Kahe Cakucelski\nAssignee: Feta Ceverell\n\nSeeing memory creep.", "BUG-6365"},
		{"a key after a label", "doc-00002", "Incident: INC-2589\nDate: 2024-06-08\nSeverity: SEV1\n\nnotify-sync was degraded after SEV1 paging.", "INC-2589"},
		{"an e-mail subject line is no name", "Friday lunch", "From: Fihon Shebejo <f@x.example>\nDate: Fri, 9 Aug 2024 11:21\nSubject: Friday lunch\n\nLunch is at the noodle place.", ""},
		{"a title-case subject line is", "Project Leijith", "From: Fihon Shebejo <f@x.example>\nSubject: Project Leijith\n\nDry run found two blockers.", "Project Leijith"},
		{"a lone field line is text", "doc-3", "Turkey: Istanbul is the largest city of the country. Uyghurs living in Turkey protested.", "Turkey"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Subject(tc.title, tc.text).Name; got != tc.want {
				t.Errorf("Subject(%q, %q) = %q, want %q", tc.title, tc.text, got, tc.want)
			}
		})
	}
}

func TestSubjectAliases(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"nickname", `Nicholas Lofton "Nick" Hexum (born April 12, 1970) is an American singer.`, []string{"Nick Hexum", "Nicholas Hexum", "Lofton Hexum"}},
		{"stage name", "Hartwig Schierbaum (born 26 May 1954), better known by his stage name Marian Gold, is a German singer.", []string{"Marian Gold"}},
		{"also called", "Kunia Camp (also called Kunia) is an unincorporated community.", []string{"Kunia"}},
		{"second name", "El Nouzha Airport or Alexandria International Airport is a closed airport in Egypt.", []string{"Alexandria International Airport"}},
		{"middle names of a person", "Helen Elizabeth Hunt (born June 15, 1963) is an American actress.", []string{"Helen Hunt", "Elizabeth Hunt"}},
		{"no life dates, no given-name aliases", "Honolulu Rail Transit Project is a rail line under construction.", nil},
		{"after the copula it names something else", `"All Mixed Up" is a song by 311 from their album "311" (also known as "The Blue Album").`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := Subject("doc-1", tc.text)
			if !slices.Equal(ds.Aliases, tc.want) {
				t.Errorf("aliases of %q = %q, want %q", ds.Name, ds.Aliases, tc.want)
			}
		})
	}
}

// A title that qualifies the subject ("Young, New South Wales") gives the text's shorter
// name for it as an alias: other documents say "born in Young".
func TestSubjectShortNameOfQualifiedTitle(t *testing.T) {
	for _, tc := range []struct {
		title, text string
		want        []string
	}{
		{"Young, New South Wales", "Young is a town in the South West Slopes region of New South Wales, Australia.", []string{"Young"}},
		{"Laie, Hawaii", "Laie is a census-designated place located in the Koolauloa District on the island of Oahu.", []string{"Laie"}},
		// The text names the whole title: nothing shorter to add.
		{"Heinkel HD 23", "The Heinkel HD 23 was a carrier-borne fighter biplane designed in Germany.", nil},
		// The text opens with another name, not a part of the title's: not an alias.
		{"Young, New South Wales", "Boorowa is a town near the South West Slopes.", nil},
	} {
		ds := Subject(tc.title, tc.text)
		if ds.Name != tc.title || !slices.Equal(ds.Aliases, tc.want) {
			t.Errorf("Subject(%q) = %q %q, want %q %q", tc.title, ds.Name, ds.Aliases, tc.title, tc.want)
		}
	}
}

// An alias becomes an entity of the chunk, joined to the subject by ALIAS_OF, so that a
// passage naming "Helen Hunt" reaches the one about "Helen Elizabeth Hunt".
func TestExtractWithAliases(t *testing.T) {
	text := "Helen Elizabeth Hunt (born June 15, 1963) is an American actress. She starred in Mad About You."
	ds := Subject("doc-1", text)
	ents, rels := Extract(ds.Name, text, WithAliases(ds.Aliases...), WithMaxEntities(3))
	keys := map[string]string{}
	for _, e := range ents {
		keys[normalize.Name(e.Name)] = e.Type
	}
	if len(ents) > 3 {
		t.Errorf("%d entities, want at most the cap 3", len(ents))
	}
	if keys["helen hunt"] != TypePerson || keys["helen elizabeth hunt"] != TypePerson {
		t.Fatalf("entities %v, want the subject and its alias, both PERSON", keys)
	}
	if !slices.ContainsFunc(rels, func(r Relationship) bool {
		return r.Type == AliasOf && r.Source == "Helen Hunt" && r.Target == "Helen Elizabeth Hunt"
	}) {
		t.Errorf("relationships %+v, want Helen Hunt ALIAS_OF Helen Elizabeth Hunt", rels)
	}
}
