package taxonomy

import (
	"reflect"
	"testing"
)

func TestSelect(t *testing.T) {
	counts := Counts{
		"neuro": {"NEURAL_SYSTEM": 450, "NEUROTRANSMITTER": 120, "RESEARCHER": 100, "RARE": 1},
		"philo": {"PHILOSOPHER": 38, "CONCEPT": 22, "RESEARCHER": 5},
	}
	for _, tc := range []struct {
		name string
		o    Options
		want []string
	}{
		// Stratified keeps the small corpus's types although the large corpus dominates.
		{"stratified", Options{Strategy: Stratified, PerCorpus: 2, MinPercent: 1}, []string{"NEURAL_SYSTEM", "NEUROTRANSMITTER", "PHILOSOPHER", "CONCEPT"}},
		// Global ranks by total: the small corpus's types fall under the cut.
		{"global", Options{Strategy: Global, PerCorpus: 1, MinPercent: 1}, []string{"NEURAL_SYSTEM", "NEUROTRANSMITTER"}},
		{"min percent drops rare", Options{Strategy: Stratified, PerCorpus: 10, MinPercent: 1}, []string{"NEURAL_SYSTEM", "NEUROTRANSMITTER", "RESEARCHER", "PHILOSOPHER", "CONCEPT"}},
		{"max", Options{Strategy: Stratified, PerCorpus: 10, MinPercent: 0, Max: 2}, []string{"NEURAL_SYSTEM", "NEUROTRANSMITTER"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Select(counts, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Select = %v, want %v", got, tc.want)
			}
		})
	}
	if _, err := Select(counts, Options{Strategy: "bogus"}); err == nil {
		t.Fatal("unknown strategy accepted")
	}
}

func TestCanonical(t *testing.T) {
	tx := Taxonomy{Aliases: map[string]string{"SCIENTIST": "RESEARCHER"}}
	if got := tx.Canonical("scientist"); got != "RESEARCHER" {
		t.Fatalf("Canonical = %q", got)
	}
	if got := tx.Canonical("brain  region"); got != "BRAIN_REGION" {
		t.Fatalf("Canonical = %q", got)
	}
}
