package chunking

import (
	"strings"
	"testing"
)

func TestInformation(t *testing.T) {
	wiki := readWiki(t)
	tests := []struct {
		name       string
		text       string
		low        bool
		wantReason string // checked when low
	}{
		{"short real sentence", "Kolno is a village in Poland.", false, ""},
		{"sentence with numbers", "In 1995, 23 of the 40 delegates voted for the 2.5% tax on 12 March.", false, ""},
		{"title only", "Dopamine", false, ""},
		{"non-english prose", "Москва — столица России и крупнейший город страны.", false, ""},
		{"cjk prose", "東京は日本の首都であり、世界最大級の都市である。", false, ""},
		{"wiki document", wiki, false, ""},
		{"markdown list", "Ingredients:\n- two eggs\n- one cup of flour\n- a pinch of salt", false, ""},
		{"nav bar", "Home | About | Contact | Login", true, ReasonNavigation},
		{"breadcrumb", "Home » Products » Shoes » Running", true, ReasonNavigation},
		{"number table", "| 2019 | 2020 | 2021 |\n|---|---|---|\n| 1.2 | 3.4 | 5.6 |\n| 7.8 | 9.0 | 1.1 |", true, ReasonFewLetters},
		{"row of dashes", "--------------------------------", true, ReasonNoWords},
		{"separator row with stars", "* * * * * * * *", true, ReasonNoWords},
		{"repeated boilerplate lines", strings.Repeat("Subscribe to our newsletter today\n", 6), true, ReasonRepeated},
		{"repeated words", strings.Repeat("click here ", 20), true, ReasonRepetitive},
		{"empty", "", true, ReasonNoWords},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := Information(tt.text)
			if sc.Value < 0 || sc.Value > 1 {
				t.Fatalf("score %v out of [0,1]", sc.Value)
			}
			if got := LowInformation(sc, DefaultLowInformationThreshold); got != tt.low {
				t.Fatalf("LowInformation = %v, want %v (score %+v)", got, tt.low, sc)
			}
			if tt.low && sc.Reason != tt.wantReason {
				t.Errorf("reason = %q, want %q (score %+v)", sc.Reason, tt.wantReason, sc)
			}
			if !tt.low && sc.Value < 0.9 {
				t.Errorf("real text scored only %.2f (%+v)", sc.Value, sc)
			}
		})
	}
}

// TestInformationCorpusChunks: no chunk of real prose is judged low information.
func TestInformationCorpusChunks(t *testing.T) {
	cs, err := Split("wiki", readWiki(t), WithSize(120), WithOverlap(20))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if sc := Information(c.Text); LowInformation(sc, DefaultLowInformationThreshold) {
			t.Errorf("chunk %d judged low information (%+v): %q", c.Position, sc, c.Text)
		}
	}
}

func FuzzInformation(f *testing.F) {
	for _, s := range []string{"", "a | b", "Kolno is a village.", "1 2 3\n1 2 3\n1 2 3", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sc := Information(s)
		if !(sc.Value >= 0 && sc.Value <= 1) || sc.Reason == "" {
			t.Fatalf("Information(%q) = %+v", s, sc)
		}
	})
}
