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
