package chunking

import (
	"strings"
	"testing"
	"time"
)

// linearInputs are 2 MB texts: prose (the Markdown fixtures repeated) and
// single lines without white space, whose pieces must be cut inside words.
func linearInputs(tb testing.TB, n int) []goldenCase {
	prose := readWiki(tb) + "\n\n" + readTestdata(tb, "operations.md") + "\n\n"
	prose = strings.Repeat(prose, n/len(prose)+1)[:n]
	return []goldenCase{
		{"prose", prose, nil},
		{"letters", pseudoRandom(n, "abcdefghijklmnopqrstuvwxyz"), nil},
		{"base64", pseudoRandom(n, base64Chars), nil},
		{"one-letter", strings.Repeat("x", n), nil},
		{"words-no-punct", strings.Repeat("lorem ipsum dolor sit amet consectetur adipiscing ", n/50+1)[:n], nil},
	}
}

// BenchmarkSplitLinear splits 2 MB of prose and 2 MB lines of other shapes in
// every iteration, and reports each input's time per op and its ratio to the
// prose time of the same run (the target is a ratio ≤ 2: chunking time linear
// in the text size whatever its shape).
func BenchmarkSplitLinear(b *testing.B) {
	in := linearInputs(b, 2<<20)
	spent := make([]time.Duration, len(in))
	for b.Loop() {
		for i, c := range in {
			t0 := time.Now()
			if _, err := Split("doc", c.text, c.opts...); err != nil {
				b.Fatal(err)
			}
			spent[i] += time.Since(t0)
		}
	}
	for i, c := range in {
		b.ReportMetric(spent[i].Seconds()/float64(b.N), c.name+"-s/op")
		if i > 0 {
			b.ReportMetric(float64(spent[i])/float64(spent[0]), c.name+"/prose")
		}
	}
}
