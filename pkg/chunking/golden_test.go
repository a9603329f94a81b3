package chunking

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenCase is a text and options whose chunk boundaries are pinned: chunk
// ids feed content-derived ids downstream, so a change of boundaries must be
// deliberate.
type goldenCase struct {
	name string
	text string
	opts []Option
}

func readTestdata(tb testing.TB, name string) string {
	tb.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// normalCases are texts as documents have them: prose, Markdown with tables,
// lists and code, CJK, and long runs of words without sentence punctuation.
func normalCases(tb testing.TB) []goldenCase {
	wiki := readWiki(tb)
	ops := readTestdata(tb, "operations.md")
	conf := readTestdata(tb, "configuration.md")
	var list strings.Builder
	for i := range 400 {
		fmt.Fprintf(&list, "- item %d of the inventory list with a part number P-%04d and no full stop\n", i, i*37%10000)
	}
	return []goldenCase{
		{"wiki defaults", wiki, nil},
		{"wiki 80/30", wiki, []Option{WithSize(80), WithOverlap(30)}},
		{"wiki 20/0 no merge", wiki, []Option{WithSize(20), WithOverlap(0), WithMinTokens(0)}},
		{"operations defaults", ops, nil},
		{"operations 100/20", ops, []Option{WithSize(100), WithOverlap(20)}},
		{"configuration defaults", conf, nil},
		{"configuration 50/10", conf, []Option{WithSize(50), WithOverlap(10)}},
		{"unpunctuated words 50/10", strings.Repeat("word ", 3000) + "end.", []Option{WithSize(50), WithOverlap(10)}},
		{"unpunctuated mixed defaults", strings.Repeat("the quick brown fox 42 jumps over the lazy dog, again and again ", 400), nil},
		{"list without full stops", list.String(), []Option{WithSize(120), WithOverlap(20)}},
		{"cjk 30/5", strings.Repeat("東京は日本の首都です。", 40), []Option{WithSize(30), WithOverlap(5)}},
		{"cjk unpunctuated 40/5", strings.Repeat("東京は日本の首都です", 200), []Option{WithSize(40), WithOverlap(5)}},
	}
}

// giantWordCases cut inside words longer than the chunk size.
func giantWordCases(tb testing.TB) []goldenCase {
	return []goldenCase{
		{"giant word 50/10", "Start. " + strings.Repeat("x", 2000) + " tail.", []Option{WithSize(50), WithOverlap(10)}},
		{"letters defaults", pseudoRandom(30000, "abcdefghijklmnopqrstuvwxyz"), nil},
		{"base64 defaults", "data:image/png;base64," + pseudoRandom(30000, base64Chars) + " after the image.", nil},
		{"url in prose 40/5", "See " + "https://example.com/" + pseudoRandom(3000, "abcdefghij/-_0123456789") + " for details. Then more text follows here.", []Option{WithSize(40), WithOverlap(5)}},
	}
}

const base64Chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// pseudoRandom returns n bytes drawn from chars by a fixed linear
// congruential generator, identical on every platform and Go version.
func pseudoRandom(n int, chars string) string {
	b := make([]byte, n)
	x := uint64(88172645463325252)
	for i := range b {
		x = x*6364136223846793005 + 1442695040888963407
		b[i] = chars[(x>>33)%uint64(len(chars))]
	}
	return string(b)
}

func renderGolden(tb testing.TB, cases []goldenCase) string {
	tb.Helper()
	var sb strings.Builder
	for _, c := range cases {
		cs, err := Split("doc", c.text, c.opts...)
		if err != nil {
			tb.Fatalf("%s: %v", c.name, err)
		}
		fmt.Fprintf(&sb, "== %s (%d chunks)\n", c.name, len(cs))
		for _, ch := range cs {
			fmt.Fprintf(&sb, "%d-%d %d %q %s\n", ch.Start, ch.End, ch.Tokens, ch.Section, ch.ID)
		}
	}
	return sb.String()
}

func checkGolden(t *testing.T, file string, cases []goldenCase) {
	got := renderGolden(t, cases)
	path := "testdata/" + file
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := readTestdata(t, file)
	if got == want {
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(gl), len(wl)) {
		if gl[i] != wl[i] {
			t.Fatalf("%s differs at line %d:\n got %s\nwant %s", path, i+1, gl[i], wl[i])
		}
	}
	t.Fatalf("%s: got %d lines, want %d", path, len(gl), len(wl))
}

// TestGoldenBoundaries pins the chunks of ordinary text.
func TestGoldenBoundaries(t *testing.T) { checkGolden(t, "golden.txt", normalCases(t)) }

// TestGoldenGiantWords pins the cuts inside words longer than a chunk.
func TestGoldenGiantWords(t *testing.T) { checkGolden(t, "golden-giant.txt", giantWordCases(t)) }
