package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/catalog"
	"github.com/graphrag/graphrag/pkg/errkind"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/services/query/access"
	"github.com/graphrag/graphrag/services/query/ask"
	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/query/explore"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// failingExplorer answers every neighbourhood with err.
type failingExplorer struct{ err error }

func (f failingExplorer) Neighborhood(context.Context, string, string, int, int) (explore.Neighborhood, error) {
	return explore.Neighborhood{}, f.err
}

// The tool error a model reads follows the error's kind, as the HTTP API's status
// does: the caller's mistakes with their text and a hint, the service's failures by
// what failed, without the backend's text, which goes to the log.
func TestToolErrorByKind(t *testing.T) {
	const secret = "10.0.0.7:7687 segment /var/lib/graphrag/demo_chunks"
	backend := errors.New(secret)
	tests := []struct {
		name string
		err  error
		want string // the whole tool error text
		// logged: a failure of the service, whose details (secret) go to the log.
		logged bool
	}{
		{name: "engine invalid", err: engine.BadRequestf("top_k: too large"), want: "invalid arguments: top_k: too large"},
		{name: "public invalid of another package", err: fmt.Errorf("corpus: %w", events.ValidateCorpus("Bad!")),
			want: "invalid arguments: corpus: " + events.ValidateCorpus("Bad!").Error()},
		{name: "catalog invalid", err: fmt.Errorf("%w: cursor %q", catalog.ErrInvalid, "x"), want: `invalid arguments: invalid argument: cursor "x"`},
		{name: "forbidden", err: fmt.Errorf("refused: %w", access.ErrForbidden), want: "refused: forbidden"},
		{name: "unknown corpus", err: fmt.Errorf("%w: demo", engine.ErrUnknownCorpus),
			want: "unknown corpus: demo (nothing is indexed under this name; check the corpus name)"},
		{name: "unknown entity", err: fmt.Errorf("%w: entity %q", engine.ErrNotFound, "x"),
			want: `not found: entity "x"; try the name as written in the documents, or search first`},
		{name: "catalog not found", err: fmt.Errorf("%w: document a.md", catalog.ErrNotFound),
			want: "not found: document a.md; try the name as written in the documents, or search first"},
		{name: "public conflict", err: errkind.Public(errkind.Conflict, "the document changed"),
			want: "the document changed; read it again and retry"},
		{name: "public unavailable", err: errkind.Public(errkind.Unavailable, "export is not available on this query service"),
			want: "explore_entity_graph failed: export is not available on this query service"},
		{name: "store down", err: fmt.Errorf("walking: %w", errkind.Down(graphstore.Dependency, backend)),
			want: "explore_entity_graph failed: the graph store is unavailable; try again later", logged: true},
		{name: "model endpoint down", err: fmt.Errorf("embedding %s: %w", secret, llm.ErrUnavailable),
			want: "explore_entity_graph failed: the language model endpoint is unavailable; try again later", logged: true},
		{name: "model endpoint failed", err: fmt.Errorf("%w: %s", llm.ErrServer, secret),
			want: "explore_entity_graph failed: the language model endpoint failed to answer", logged: true},
		{name: "deadline", err: fmt.Errorf("searching %s: %w", secret, context.DeadlineExceeded),
			want: "explore_entity_graph stopped: the request took longer than the service's time limit", logged: true},
		// Kinds meant for the caller of a store or the bus, and no kind: internal.
		{name: "store not found", err: fmt.Errorf("%s: %w", secret, graphstore.ErrNotFound),
			want: "explore_entity_graph failed: internal error: the request could not be answered", logged: true},
		{name: "bus conflict", err: fmt.Errorf("%s: %w", secret, bus.ErrConflict),
			want: "explore_entity_graph failed: internal error: the request could not be answered", logged: true},
		{name: "permanent", err: &bus.PermanentError{Err: backend},
			want: "explore_entity_graph failed: internal error: the request could not be answered", logged: true},
		{name: "no kind", err: backend,
			want: "explore_entity_graph failed: internal error: the request could not be answered", logged: true},
	}
	st := querytest.Demo(t)
	e, err := ask.New(engine.Config{}, ask.Config{}, engine.Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, Logger: querytest.Logger()}, nil)
	if err != nil {
		t.Fatalf("building engine: %v", err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Written by the tool's handler before its result is sent, read after it arrives.
			var logs bytes.Buffer
			s := New(e, failingExplorer{tc.err}, "test", slog.New(slog.NewTextHandler(&logs, nil)))
			cs := connectMCP(t, s, nil)
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolExplore, Arguments: map[string]any{"corpus": "demo", "entity_name": "x"}})
			if err != nil {
				t.Fatalf("protocol error: %v (tool failures must be tool results)", err)
			}
			if !res.IsError {
				t.Fatalf("IsError false, text %q: want a tool error", toolText(res))
			}
			if got := toolText(res); got != tc.want {
				t.Errorf("tool error %q, want %q", got, tc.want)
			}
			if tc.logged != strings.Contains(logs.String(), secret) {
				t.Errorf("details logged %v, want %v; log: %s", !tc.logged, tc.logged, logs.String())
			}
		})
	}
}
