package words

import "testing"

func TestStem(t *testing.T) {
	tests := []struct{ in, want string }{
		{"films", "film"}, {"games", "game"}, {"studies", "studi"}, {"study", "studi"},
		{"directed", "direct"}, {"running", "runn"}, {"class", "class"}, {"classes", "class"},
		{"virus", "virus"}, {"analysis", "analysis"}, {"churches", "church"}, {"red", "red"},
		{"cats", "cats"}, {"quickly", "quick"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := Stem(tt.in); got != tt.want {
				t.Errorf("Stem(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// The three stemmers give different stems, which is why there are three (see doc.go):
// replacing one by another changes the results of the part that uses it.
func TestStemmersDiffer(t *testing.T) {
	for _, tc := range []struct{ in, stem, light, prefix string }{
		{"keeper", "keeper", "keep", "keeper"},
		{"keeps", "keep", "keep", "keeps"},
		{"directed", "direct", "direct", "direct"},
		{"studies", "studi", "studi", "studie"},
		{"running", "runn", "runn", "runnin"},
	} {
		if got := [3]string{Stem(tc.in), LightStem(tc.in), PrefixStem(tc.in)}; got != [3]string{tc.stem, tc.light, tc.prefix} {
			t.Errorf("%q: Stem, LightStem, PrefixStem = %q, want %q", tc.in, got, [3]string{tc.stem, tc.light, tc.prefix})
		}
	}
}
