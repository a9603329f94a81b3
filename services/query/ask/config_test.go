package ask

import (
	"strings"
	"testing"

	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// New fills the zero answering fields from DefaultConfig and refuses an invalid value,
// naming its flag (a field without a flag by its Go name).
func TestNewRejectsInvalidConfig(t *testing.T) {
	st := querytest.Demo(t)
	deps := engine.Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, Logger: querytest.Logger()}
	a, err := New(engine.Config{}, Config{}, deps, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := a.Config(), DefaultConfig(); got != want {
		t.Errorf("a zero Config became %+v, want the defaults %+v", got, want)
	}
	a, err = New(engine.Config{}, Config{GlobalTokenBudget: NoTokenBudget}, deps, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Config().GlobalTokenBudget; got != NoTokenBudget {
		t.Errorf("GlobalTokenBudget NoTokenBudget became %d", got)
	}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{MapConcurrency: -1}, "-map-concurrency: must be at least 1, got -1"},
		{Config{GlobalTokenBudget: -5}, "-global-token-budget: must be positive or -1 (no bound), got -5"},
		{Config{MapMaxTokens: -300}, "MapMaxTokens"},
		{Config{ReduceTokens: -1}, "ReduceTokens"},
		{Config{AnswerTokens: -1}, "AnswerTokens"},
	} {
		if _, err := New(engine.Config{}, tc.cfg, deps, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v): %v, want an error containing %q", tc.cfg, err, tc.want)
		}
	}
	// The engine's own configuration is still checked.
	if _, err := New(engine.Config{Pool: -5}, Config{}, deps, nil); err == nil || !strings.Contains(err.Error(), "-pool") {
		t.Errorf("New with Pool -5: %v, want an error naming -pool", err)
	}
}
