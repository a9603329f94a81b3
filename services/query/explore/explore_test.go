package explore

import (
	"testing"

	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// Regression for defect 3 of seeds/002: the console's reads normalize a name with THE
// normalization the grapher writes with, so "The Analytical Engine," finds
// "analytical engine".
func TestNeighborhoodNormalizesAsTheWriteSide(t *testing.T) {
	st := querytest.Demo(t)
	r := New(st.Graph, st.Vectors)
	for _, name := range []string{"The Analytical Engine", "the analytical engine,", "ANALYTICAL  ENGINE", "Ｔｈｅ Analytical Engine"} {
		nb, err := r.Neighborhood(t.Context(), "demo", name, 1, 0)
		if err != nil {
			t.Fatalf("Neighborhood(%q): %v", name, err)
		}
		if nb.Entity.Key != "analytical engine" {
			t.Fatalf("Neighborhood(%q) found %q", name, nb.Entity.Key)
		}
	}
}
