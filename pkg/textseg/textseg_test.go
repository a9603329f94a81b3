package textseg

import (
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func texts(s string, spans []Span) []string {
	if len(spans) == 0 {
		return nil
	}
	out := make([]string, len(spans))
	for i, sp := range spans {
		out[i] = sp.Text(s)
	}
	return out
}

func TestSentences(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"blank", "  \n\t ", nil},
		{"one", "Kolno is a village in Poland.", []string{"Kolno is a village in Poland."}},
		{"two", "It rained. We stayed in!", []string{"It rained.", "We stayed in!"}},
		{"question and quote", `He asked "why?" Then he left.`, []string{`He asked "why?"`, "Then he left."}},
		{"abbreviation", "Dr. Smith met Mr. Jones. They talked.", []string{"Dr. Smith met Mr. Jones.", "They talked."}},
		{"initials", "J. R. R. Tolkien wrote it. It sold.", []string{"J. R. R. Tolkien wrote it.", "It sold."}},
		{"lowercase continues", "Apples, pears, etc. are fruit.", []string{"Apples, pears, etc. are fruit."}},
		{"e.g.", "Use a tool, e.g. A hammer. Done.", []string{"Use a tool, e.g. A hammer.", "Done."}},
		{"decimal", "Pi is 3.14 roughly. Yes.", []string{"Pi is 3.14 roughly.", "Yes."}},
		{"ellipsis", "Wait... What now?", []string{"Wait...", "What now?"}},
		{"paragraph", "First line\n\nSecond line", []string{"First line", "Second line"}},
		{"soft wrap", "A sentence that\nwraps here.", []string{"A sentence that\nwraps here."}},
		{"list", "Items:\n- one\n- two", []string{"Items:", "- one", "- two"}},
		{"heading", "# Title\nBody text.", []string{"# Title", "Body text."}},
		{"header block", "From: Ada Quillane\nTo: Colin Strand\nSubject: Sea wall\n\nHi Colin", []string{"From: Ada Quillane", "To: Colin Strand", "Subject: Sea wall", "Hi Colin"}},
		{"field after text", "BUG-6365\nReported by: Kahe Cakucelski\nseen since Monday", []string{"BUG-6365", "Reported by: Kahe Cakucelski", "seen since Monday"}},
		{"a time is no label", "Timeline\n05:07 first alert\nthen more", []string{"Timeline\n05:07 first alert\nthen more"}},
		{"cjk", "我爱北京。天安门很大！", []string{"我爱北京。", "天安门很大！"}},
		{"no terminator", "no end here", []string{"no end here"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := texts(tt.in, Sentences(tt.in))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Sentences(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestIsFieldLine(t *testing.T) {
	for line, want := range map[string]bool{
		"Subject: Friday lunch":          true,
		"Reported by: Kahe Cakucelski":   true,
		"Type: Bug   Priority: P2":       true,
		"Status:":                        true,
		"Checked with their developer: ": false, // four words
		"05:07 first alert":              false,
		"see https://example.com":        false,
		"https://example.com":            false,
		"note: lower case":               false,
		"- Ada Quillane: agreed":         false, // a list item
		"Ada Quillane:agreed":            false,
	} {
		if got := IsFieldLine(line); got != want {
			t.Errorf("IsFieldLine(%q) = %v, want %v", line, got, want)
		}
	}
}

func TestWords(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"simple", "Hello, world!", []string{"Hello", "world"}},
		{"possessive", "Nolan's film", []string{"Nolan's", "film"}},
		{"hyphen", "Jean-Paul Sartre", []string{"Jean-Paul", "Sartre"}},
		{"numbers", "3.14 and 1,000 items.", []string{"3.14", "and", "1,000", "items"}},
		{"trailing joiner", "rock- and roll'", []string{"rock", "and", "roll"}},
		{"acronym dots", "U.S. army", []string{"U", "S", "army"}},
		{"accents and marks", "café naïve e\u0301", []string{"café", "naïve", "e\u0301"}},
		{"cyrillic", "Москва — столица", []string{"Москва", "столица"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := texts(tt.in, Words(tt.in))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Words(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestScriptWords(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"spaced scripts as Words", "Jean-Paul Sartre, 3.14 and Москва", []string{"Jean-Paul", "Sartre", "3.14", "and", "Москва"}},
		{"one word per ideograph, digits apart", "成立于1964年。", []string{"成", "立", "于", "1964", "年"}},
		{"a change of script ends a word", "Tokyo東京 GPT模型", []string{"Tokyo", "東", "京", "GPT", "模", "型"}},
		{"katakana runs stay whole, hiragana letters apart", "ドナルド・キーンは東京", []string{"ドナルド", "キーン", "は", "東", "京"}},
		{"prolonged sound mark joins katakana", "コーヒーを", []string{"コーヒー", "を"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := texts(tt.in, ScriptWords(tt.in))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ScriptWords(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzSentences(f *testing.F) {
	for _, s := range []string{"", "A. B.", "Dr. X met Y. Z!\n\n- a\n- b", "。。", "e\u0301. x", "\xff. A"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		prev := 0
		for _, sp := range Sentences(s) {
			if sp.Start < prev || sp.End <= sp.Start || sp.End > len(s) {
				t.Fatalf("bad span %+v after %d in %q", sp, prev, s)
			}
			txt := sp.Text(s)
			r, _ := utf8.DecodeRuneInString(txt)
			l, _ := utf8.DecodeLastRuneInString(txt)
			if unicode.IsSpace(r) || unicode.IsSpace(l) {
				t.Fatalf("untrimmed sentence %q", txt)
			}
			if strings.TrimSpace(s[prev:sp.Start]) != "" {
				t.Fatalf("text lost between sentences: %q", s[prev:sp.Start])
			}
			prev = sp.End
		}
		prev = 0
		for _, sp := range Words(s) {
			if sp.Start < prev || sp.End <= sp.Start || sp.End > len(s) {
				t.Fatalf("bad word span %+v in %q", sp, s)
			}
			prev = sp.End
		}
	})
}

// Clip keeps whole characters: a cut inside a multi-byte character moves before it.
func TestClip(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abc", 2, "ab"},
		{"aé", 2, "a"},
		{"aé", 3, "aé"},
		{"研究所", 4, "研"},
		{"é", 1, ""},
	} {
		if got := Clip(c.s, c.n); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}
