package answer

import (
	"strings"
	"testing"

	"github.com/graphrag/graphrag/services/query/evidence"
)

// An offline global answer is prose that names the reports by their titles, the best
// three with their sentences and the next two by title alone, not a list of the partial
// answers; a title's own ": " does not cut it short.
func TestExtractiveGlobalProse(t *testing.T) {
	reports := []evidence.Community{
		{ID: "c1", Title: "Storm Hester and Kittiwake", Summary: "Storm Hester struck in 1998. The Kittiwake was lost.", Rating: 9},
		{ID: "c2", Title: "Inquiry: the harbour wall", Summary: "The inquiry asked for a higher wall.", Rating: 8},
		{ID: "c3", Title: "Marrow Bay and Sellen Valley", Summary: "Marrow Bay is a town.", Rating: 7},
		{ID: "c4", Title: "Lantern Tide Festival and Maren Fenwick", Summary: "A festival.", Rating: 6},
		{ID: "c5", Title: "Marine Institute and the Cooperative", Summary: "An institute.", Rating: 5},
		{ID: "c6", Title: "Gullhead Lighthouse", Summary: "A lighthouse.", Rating: 4},
	}
	partials, _, err := extractive{}.Map(t.Context(), "What are the main themes?", reports, Style{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := extractive{}.Reduce(t.Context(), "What are the main themes?", partials, Style{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "The most relevant theme is Storm Hester and Kittiwake. Storm Hester struck in 1998. The Kittiwake was lost. [1]\n\n" +
		"Another is Inquiry – the harbour wall. The inquiry asked for a higher wall. [2]\n\n" +
		"A third is Marrow Bay and Sellen Valley. Marrow Bay is a town. [3]\n\n" +
		"The reports also cover Lantern Tide Festival and Maren Fenwick [4] and Marine Institute and the Cooperative [5]."
	if a.Text != want {
		t.Errorf("global answer\n%s\nwant\n%s", a.Text, want)
	}
	if strings.Contains(a.Text, "\n- ") {
		t.Errorf("global answer is a list:\n%s", a.Text)
	}
	if len(a.Cited) != 5 {
		t.Errorf("cited %v, want the five reports", a.Cited)
	}
}
