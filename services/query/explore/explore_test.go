package explore

import (
	"context"
	"errors"
	"testing"

	"github.com/graphrag/graphrag/pkg/curation"
	"github.com/graphrag/graphrag/services/query/engine"
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

// demoAliases are the aliases of a log over the demo graph as the grapher leaves it:
// the names the log folds away are not in it.
func demoAliases() Aliases {
	log := []curation.Entry{
		{ID: "1", Op: curation.Op{Action: curation.Merge, Entities: []string{"Lady Lovelace"}, Into: "Ada Lovelace"}},
		{ID: "2", Op: curation.Op{Action: curation.Rename, Entity: "Babbage", Name: "Charles Babbage"}},
		{ID: "3", Op: curation.Op{Action: curation.Merge, Entities: []string{"Babbage's Engine"}, Into: "Difference Engine"}},
		{ID: "4", Op: curation.Op{Action: curation.Rename, Entity: "Difference Engine", Name: "Analytical Engine"}},
		{ID: "5", Op: curation.Op{Action: curation.Merge, Entities: []string{"Menabrea"}, Into: "Luigi Menabrea"}}, // not in the graph
	}
	aliases := curation.Fold(log, nil).Aliases()
	return func(context.Context, string) (map[string]string, error) { return aliases, nil }
}

// TestEntityReadsResolveCuratedNames: a name a curation merged or renamed away answers
// with the entity it is now, and says so; the entity's own name does not.
func TestEntityReadsResolveCuratedNames(t *testing.T) {
	st := querytest.Demo(t)
	r := New(st.Graph, st.Vectors, WithAliases(demoAliases()))
	for _, tc := range []struct {
		name, wantKey, wantFrom string
	}{
		{"Ada Lovelace", "ada lovelace", ""},
		{"Lady Lovelace", "ada lovelace", "Lady Lovelace"},                      // merged
		{"BABBAGE", "charles babbage", "BABBAGE"},                               // renamed
		{"Babbage's Engine", "analytical engine", "Babbage's Engine"},           // merged, then renamed
		{"the Difference Engine", "analytical engine", "the Difference Engine"}, // renamed after a merge into it
	} {
		t.Run(tc.name, func(t *testing.T) {
			nb, err := r.Neighborhood(t.Context(), "demo", tc.name, 1, 0)
			if err != nil {
				t.Fatalf("Neighborhood: %v", err)
			}
			if nb.Entity.Key != tc.wantKey || nb.ResolvedFrom != tc.wantFrom || len(nb.Neighbors) == 0 {
				t.Errorf("Neighborhood: entity %q, resolved from %q, %d neighbours; want %q from %q with its neighbours",
					nb.Entity.Key, nb.ResolvedFrom, len(nb.Neighbors), tc.wantKey, tc.wantFrom)
			}
			ps, err := r.Passages(t.Context(), "demo", tc.name, 10)
			if err != nil {
				t.Fatalf("Passages: %v", err)
			}
			if ps.Entity.Key != tc.wantKey || ps.ResolvedFrom != tc.wantFrom || len(ps.Passages) == 0 {
				t.Errorf("Passages: entity %q, resolved from %q, %d passages; want %q from %q with its passages",
					ps.Entity.Key, ps.ResolvedFrom, len(ps.Passages), tc.wantKey, tc.wantFrom)
			}
		})
	}
}

func TestEntityReadsNotFound(t *testing.T) {
	st := querytest.Demo(t)
	unavailable := errors.New("state bucket unavailable")
	for _, tc := range []struct {
		name, entity string
		opts         []Option
		want         error
	}{
		{"neither an entity nor an alias", "Nobody", []Option{WithAliases(demoAliases())}, engine.ErrNotFound},
		{"an alias of an entity the graph lacks", "Menabrea", []Option{WithAliases(demoAliases())}, engine.ErrNotFound},
		{"no aliases", "Lady Lovelace", nil, engine.ErrNotFound},
		{"the aliases fail", "Lady Lovelace", []Option{WithAliases(func(context.Context, string) (map[string]string, error) {
			return nil, unavailable
		})}, unavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New(st.Graph, st.Vectors, tc.opts...)
			if _, err := r.Neighborhood(t.Context(), "demo", tc.entity, 1, 0); !errors.Is(err, tc.want) {
				t.Errorf("Neighborhood(%q) = %v, want %v", tc.entity, err, tc.want)
			}
			if _, err := r.Passages(t.Context(), "demo", tc.entity, 10); !errors.Is(err, tc.want) {
				t.Errorf("Passages(%q) = %v, want %v", tc.entity, err, tc.want)
			}
		})
	}
	// An entity of the graph is read without the aliases.
	r := New(st.Graph, st.Vectors, WithAliases(func(context.Context, string) (map[string]string, error) { return nil, unavailable }))
	if _, err := r.Neighborhood(t.Context(), "demo", "Ada Lovelace", 1, 0); err != nil {
		t.Errorf("an entity of the graph while the aliases fail: %v", err)
	}
}
