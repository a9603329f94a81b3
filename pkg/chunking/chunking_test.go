package chunking

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/graphrag/graphrag/pkg/textseg"
)

func readWiki(tb testing.TB) string {
	tb.Helper()
	b, err := os.ReadFile("testdata/wiki.md")
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

var idPattern = regexp.MustCompile(`^(.+):(\d+):([0-9a-f]{12})$`)

// checkInvariants verifies what every Split result must satisfy.
func checkInvariants(t *testing.T, doc, text string, cs []Chunk, size int) {
	t.Helper()
	if len(cs) == 0 {
		t.Fatal("no chunks for non-empty text")
	}
	covered := make([]bool, len(text))
	for i, c := range cs {
		if c.Position != i {
			t.Errorf("chunk %d has position %d", i, c.Position)
		}
		if c.Start < 0 || c.End > len(text) || c.Start >= c.End || text[c.Start:c.End] != c.Text {
			t.Fatalf("chunk %d: Text is not source[%d:%d]", i, c.Start, c.End)
		}
		m := idPattern.FindStringSubmatch(c.ID)
		if m == nil || m[1] != doc || m[3] != c.ContentHash[:12] {
			t.Errorf("chunk %d: bad id %q (hash %s)", i, c.ID, c.ContentHash)
		}
		n, err := CountTokens(c.Text)
		if err != nil {
			t.Fatal(err)
		}
		if n != c.Tokens {
			t.Errorf("chunk %d: Tokens = %d, counted %d", i, c.Tokens, n)
		}
		if n > size && utf8.RuneCountInString(c.Text) > 1 {
			t.Errorf("chunk %d: %d tokens > size %d", i, n, size)
		}
		if i > 0 && c.Start < cs[i-1].Start {
			t.Errorf("chunk %d starts before chunk %d", i, i-1)
		}
		for k := c.Start; k < c.End; k++ {
			covered[k] = true
		}
	}
	for k, r := range text {
		if !covered[k] && !unicode.IsSpace(r) {
			t.Fatalf("byte %d (%q) is in no chunk", k, r)
		}
	}
}

func TestSplitErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		text string
		opts []Option
		want error
	}{
		{"empty", "d", "", nil, ErrEmpty},
		{"white space", "d", " \n\t\n ", nil, ErrEmpty},
		{"invalid utf-8", "d", "abc \xff def", nil, ErrInvalidUTF8},
		{"no document id", "", "text", nil, ErrNoDocumentID},
		{"zero size", "d", "text", []Option{WithSize(0)}, ErrInvalidOption},
		{"overlap not below size", "d", "text", []Option{WithSize(10), WithOverlap(10)}, ErrInvalidOption},
		{"negative overlap", "d", "text", []Option{WithOverlap(-1)}, ErrInvalidOption},
		{"min above size", "d", "text", []Option{WithSize(10), WithMinTokens(11)}, ErrInvalidOption},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := Split(tt.doc, tt.text, tt.opts...)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if cs != nil {
				t.Errorf("chunks = %v, want none", cs)
			}
		})
	}
}

func TestSplitMinTokens(t *testing.T) {
	body := "# Main\n\n" + strings.Repeat("The committee met again and argued about the budget for the new bridge. ", 5) + "\n\n## Tail\n\nTiny note."
	tests := []struct {
		name         string
		min          int
		wantSections []string
	}{
		{"small tail merges into the previous chunk", 16, []string{"Main"}},
		{"merging off", 0, []string{"Main", "Main > Tail"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := Split("d", body, WithSize(200), WithMinTokens(tt.min))
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, "d", body, cs, 200)
			var got []string
			for _, c := range cs {
				got = append(got, c.Section)
			}
			if strings.Join(got, "|") != strings.Join(tt.wantSections, "|") {
				t.Errorf("sections %q, want %q", got, tt.wantSections)
			}
		})
	}
}

func TestSplitInvalidUTF8Offset(t *testing.T) {
	_, err := Split("d", "héllo \xff world")
	var ue *InvalidUTF8Error
	if !errors.As(err, &ue) || ue.Offset != 7 {
		t.Fatalf("err = %v, want *InvalidUTF8Error at offset 7", err)
	}
}

func TestSplitSections(t *testing.T) {
	text := "# Guide\n\n## Install\n\nRun the installer. It takes a minute to finish on most machines.\n\n" +
		"## Configure\n\nEdit the file config.toml and restart the service afterwards.\n\n" +
		"```sh\n# not a heading\necho hi\n```\n\n" +
		"### Advanced ###\n\nTune the cache size when the working set is larger than memory.\n\n" +
		"# Reference\n\n#hashtag is not a heading, and this sentence is long enough to stand.\n"
	cs, err := Split("doc", text, WithSize(40), WithOverlap(0), WithMinTokens(8))
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, "doc", text, cs, 40)
	var got []string
	for _, c := range cs {
		got = append(got, c.Section)
	}
	want := []string{"Guide > Install", "Guide > Configure", "Guide > Configure > Advanced", "Reference"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("sections = %q, want %q", got, want)
	}
	if !strings.HasPrefix(cs[0].Text, "# Guide") {
		t.Errorf("the heading-only section was not merged into the next chunk: %q", cs[0].Text)
	}
	if !strings.Contains(cs[1].Text, "# not a heading") {
		t.Errorf("fenced code was cut as a heading: %q", cs[1].Text)
	}
}

func TestSplitInvariants(t *testing.T) {
	wiki := readWiki(t)
	long := strings.Repeat("word ", 300) + "end."
	giant := "Start. " + strings.Repeat("x", 2000) + " tail."
	tests := []struct {
		name string
		text string
		size int
		opts []Option
	}{
		{"wiki defaults", wiki, DefaultSize, nil},
		{"wiki small", wiki, 80, []Option{WithSize(80), WithOverlap(30)}},
		{"wiki tiny no overlap", wiki, 20, []Option{WithSize(20), WithOverlap(0), WithMinTokens(0)}},
		{"short sentence", "Kolno is a village in Poland.", DefaultSize, nil},
		{"unpunctuated run", long, 50, []Option{WithSize(50), WithOverlap(10)}},
		{"giant word", giant, 50, []Option{WithSize(50), WithOverlap(10)}},
		{"cjk", strings.Repeat("東京は日本の首都です。", 40), 30, []Option{WithSize(30), WithOverlap(5)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := Split("doc-1", tt.text, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, "doc-1", tt.text, cs, tt.size)
		})
	}
}

func TestSplitNeverMidWord(t *testing.T) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog near the riverbank today. ", 40) +
		strings.Repeat("unpunctuated words keep flowing without any end ", 40)
	cs, err := Split("d", text, WithSize(60), WithOverlap(15))
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, "d", text, cs, 60)
	isWord := func(i int) bool {
		r, _ := utf8.DecodeRuneInString(text[i:])
		return textseg.IsWordRune(r)
	}
	for _, c := range cs {
		if c.Start > 0 && isWord(c.Start) && isWord(c.Start-1) {
			t.Errorf("chunk %d starts mid-word: %q", c.Position, text[c.Start-3:c.Start+3])
		}
		if c.End < len(text) && isWord(c.End) && isWord(c.End-1) {
			t.Errorf("chunk %d ends mid-word: %q", c.Position, text[c.End-3:c.End+3])
		}
	}
}

func TestSplitOverlapIsWholeSentences(t *testing.T) {
	wiki := readWiki(t)
	// One section only, so that every chunk boundary is inside a section.
	body := wiki[strings.Index(wiki, "\n\n")+2:]
	body = strings.ReplaceAll(body, "## ", "")
	cs, err := Split("d", body, WithSize(120), WithOverlap(40))
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, "d", body, cs, 120)
	starts := map[int]bool{}
	for _, sp := range textseg.Sentences(body) {
		starts[sp.Start] = true
	}
	overlapped := 0
	for i := 1; i < len(cs); i++ {
		if !starts[cs[i].Start] {
			t.Errorf("chunk %d does not start at a sentence: %q", i, cs[i].Text[:min(40, len(cs[i].Text))])
		}
		if cs[i].Start < cs[i-1].End {
			overlapped++
			ov, _ := CountTokens(body[cs[i].Start:cs[i-1].End])
			if ov > 40+2 {
				t.Errorf("chunks %d/%d overlap by %d tokens > 40", i-1, i, ov)
			}
		}
	}
	if overlapped < len(cs)/2 {
		t.Errorf("only %d of %d chunk pairs overlap", overlapped, len(cs)-1)
	}
}

func TestSplitStableIDs(t *testing.T) {
	wiki := readWiki(t)
	a, err := Split("doc", wiki, WithSize(100), WithOverlap(20))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Split("doc", wiki, WithSize(100), WithOverlap(20))
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("chunk %d differs between runs", i)
		}
	}
	// Change the last paragraph only: earlier ids stay, the last one changes.
	changed := strings.TrimRight(wiki, "\n") + " An added closing sentence."
	c, err := Split("doc", changed, WithSize(100), WithOverlap(20))
	if err != nil {
		t.Fatal(err)
	}
	if len(c) != len(a) {
		t.Fatalf("got %d chunks, want %d", len(c), len(a))
	}
	for i := 0; i < len(a)-1; i++ {
		if a[i].ID != c[i].ID {
			t.Errorf("chunk %d id changed: %s → %s", i, a[i].ID, c[i].ID)
		}
	}
	if a[len(a)-1].ID == c[len(c)-1].ID {
		t.Error("a changed chunk kept its id")
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{"# A\n\nB c. D e!\n\n## F\n- g\n- h", "x", "```\n# a\n```\nb", strings.Repeat("ab ", 50), "a.b.c. D"} {
		f.Add(s, 12, 4)
	}
	f.Fuzz(func(t *testing.T, text string, size, overlap int) {
		size = 4 + abs(size)%60
		overlap = abs(overlap) % size
		cs, err := Split("f", text, WithSize(size), WithOverlap(overlap), WithMinTokens(min(3, size)))
		if err != nil {
			if errors.Is(err, ErrEmpty) || errors.Is(err, ErrInvalidUTF8) {
				return
			}
			t.Fatal(err)
		}
		checkInvariants(t, "f", text, cs, size)
	})
}

func abs(x int) int {
	if x < 0 {
		if -x < 0 {
			return 0
		}
		return -x
	}
	return x
}

func BenchmarkSplit(b *testing.B) {
	wiki := readWiki(b)
	b.SetBytes(int64(len(wiki)))
	for b.Loop() {
		if _, err := Split("doc", wiki); err != nil {
			b.Fatal(err)
		}
	}
}
