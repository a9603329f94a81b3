package engine

import (
	"strings"
	"testing"

	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// New fills the zero fields from DefaultConfig and refuses an invalid value, naming its
// flag, where it once replaced the value with the default without a word.
func TestNewRejectsInvalidConfig(t *testing.T) {
	st := querytest.Demo(t)
	deps := Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, Logger: querytest.Logger()}
	e, err := New(Config{}, deps)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e.Config().TopK, DefaultConfig().TopK; got != want {
		t.Errorf("zero TopK became %d, want the default %d", got, want)
	}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Pool: -5}, "-pool: must be at least 1, got -5"},
		{Config{Damping: 1.5}, "-ppr-damping: must be in (0, 1), got 1.5"},
		{Config{MapTopK: -1}, "-map-top-k"},
		{Config{PassageSeeds: -2}, "-passage-seeds"},
		{Config{EntityMinSim: 2}, "-entity-min-similarity"},
		{Config{GraphRanking: "bfs"}, `-graph-ranking: must be ppr or path, got "bfs"`},
	} {
		if _, err := New(tc.cfg, deps); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v): %v, want an error containing %q", tc.cfg, err, tc.want)
		}
	}
}
