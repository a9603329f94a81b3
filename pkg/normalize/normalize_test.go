package normalize

import (
	"testing"
	"unicode/utf8"
)

func TestName(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"seed example", "The Dopamine System", "dopamine system"},
		{"empty", "", ""},
		{"only spaces", "  \t\n ", ""},
		{"only punctuation", "?!…", ""},
		{"accent kept (NFKC does not strip accents)", "Café", "café"},
		{"decomposed accent composes", "Cafe\u0301", "café"},
		{"full-width folds", "ＴＯＫＹＯ Ｔｏｗｅｒ", "tokyo tower"},
		{"ligature folds", "ﬁnal ﬂight", "final flight"},
		{"circled digit folds", "Route ①", "route 1"},
		{"apostrophe vanishes", "O'Brien", "obrien"},
		{"curly apostrophe vanishes", "Nolan’s", "nolans"},
		{"hyphen becomes space", "Jean-Paul Sartre", "jean paul sartre"},
		{"en dash becomes space", "1914–1918", "1914 1918"},
		{"leading edge stopwords", "The University of Oxford", "university of oxford"},
		{"inner stopwords kept", "Bank of the West", "bank of the west"},
		{"trailing stopwords", "Leonardo da Vinci and", "leonardo da vinci"},
		{"several edge stopwords", "of the a Beatles in", "beatles"},
		{"only stopwords keeps last", "The The", "the"},
		{"single stopword", "The", "the"},
		{"punctuation around", "  «Hello,   World!»  ", "hello world"},
		{"unicode upper", "ÀÉÎÕÜ", "àéîõü"},
		{"greek", "ΑΘΗΝΑ", "αθηνα"},
		{"cyrillic", "Москва", "москва"},
		{"cjk unchanged", "東京タワー", "東京タワー"},
		{"devanagari marks kept", "हिन्दी", "हिन्दी"},
		{"orphan mark dropped", "-\u0301x", "x"},
		{"digits kept", "Apollo 11", "apollo 11"},
		{"ampersand vanishes", "AT&T", "att"},
		{"symbols removed", "C++ / Go #1", "c go 1"},
		{"underscore removed", "snake_case", "snake case"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Name(tt.in); got != tt.want {
				t.Errorf("Name(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestNameMeets(t *testing.T) {
	// Spellings that must normalize to the same key, since the grapher merges
	// entities by it.
	groups := [][]string{
		{"The Dopamine System", "dopamine system", "Dopamine-System", "DOPAMINE SYSTEM."},
		{"Café", "CAFÉ", "Cafe\u0301", "ｃａｆé"},
		{"O'Neil", "ONeil", "O’Neil"},
	}
	for _, g := range groups {
		t.Run(g[0], func(t *testing.T) {
			want := Name(g[0])
			for _, s := range g[1:] {
				if got := Name(s); got != want {
					t.Errorf("Name(%q) = %q, want %q like Name(%q)", s, got, want, g[0])
				}
			}
		})
	}
}

func FuzzName(f *testing.F) {
	for _, s := range []string{"The Dopamine System", "Café", "e'\u0301", "ＡＢＣ", "the of", "ǅemal", "ß", "İstanbul", "\xff\xfe", "ﬃ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		once := Name(s)
		if twice := Name(once); twice != once {
			t.Fatalf("not idempotent: Name(%q) = %q, Name(that) = %q", s, once, twice)
		}
		if !utf8.ValidString(once) {
			t.Fatalf("Name(%q) = %q is not valid UTF-8", s, once)
		}
	})
}

func TestSubject(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"Mark King (musician)", "mark king"},
		{"Scott Howell (political consultant)", "scott howell"},
		{"Leland, North Carolina", "leland north carolina"},
		{"Toad Hall (ANU)", "toad hall"},
		{"(What's the Story) Morning Glory?", "whats the story morning glory"}, // not a trailing qualifier
		{"Maximum Overdrive", "maximum overdrive"},
		{"(Untitled)", "untitled"}, // a title that is only a parenthetical stays
		{"", ""},
	} {
		if got := Subject(tt.in); got != tt.want {
			t.Errorf("Subject(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
