package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/catalog"
	"github.com/graphrag/graphrag/pkg/errkind"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/services/query/engine"
)

// publicErr is an error type of its own with a Public kind, as a package other than
// errkind may define.
type publicErr struct{ kind errkind.Kind }

func (e publicErr) Error() string           { return "the " + e.kind.String() + " thing" }
func (e publicErr) ErrorKind() errkind.Kind { return e.kind }
func (publicErr) PublicKind() bool          { return true }

// The status is chosen by the kind of a client's mistake, whichever package made the
// error; a store's or the bus's kind stays a failure of the service, without its text.
func TestFailureByKind(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		status int
	}{
		{"public invalid", publicErr{errkind.Invalid}, http.StatusBadRequest},
		{"public not found", fmt.Errorf("reading: %w", publicErr{errkind.NotFound}), http.StatusNotFound},
		{"public conflict", publicErr{errkind.Conflict}, http.StatusConflict},
		{"public unavailable", publicErr{errkind.Unavailable}, http.StatusServiceUnavailable},
		{"catalog invalid", fmt.Errorf("%w: cursor %q", catalog.ErrInvalid, "x"), http.StatusBadRequest},
		{"catalog not found", fmt.Errorf("%w: corpus demo", catalog.ErrNotFound), http.StatusNotFound},
		{"invalid event", fmt.Errorf("%w: corpus", events.ErrInvalid), http.StatusBadRequest},
		{"event field", fmt.Errorf("corpus: %w", events.ValidateCorpus("Bad!")), http.StatusBadRequest},
		{"engine bad request", engine.BadRequestf("top_k: too large"), http.StatusBadRequest},
		{"engine unknown corpus", fmt.Errorf("%w: demo", engine.ErrUnknownCorpus), http.StatusNotFound},
		{"engine not found", fmt.Errorf("%w: entity x", engine.ErrNotFound), http.StatusNotFound},
		{"route unavailable", &unavailable{"export"}, http.StatusServiceUnavailable},
		{"public invalid beats not found", fmt.Errorf("%w: %w", catalog.ErrNotFound, catalog.ErrInvalid), http.StatusBadRequest},
		// A kind that is not Public: the caller of a store or the bus was told, not the client.
		{"graph store not found", fmt.Errorf("entity %q: %w", "x", graphstore.ErrNotFound), http.StatusInternalServerError},
		{"graph store invalid", fmt.Errorf("%w: key too long", graphstore.ErrInvalid), http.StatusInternalServerError},
		{"vector store not found", fmt.Errorf("%w: demo_chunks", vectorstore.ErrNotFound), http.StatusInternalServerError},
		{"vector store invalid", vectorstore.ErrDimensionMismatch, http.StatusInternalServerError},
		{"bus not found", fmt.Errorf("key: %w", bus.ErrNotFound), http.StatusInternalServerError},
		{"bus conflict", bus.ErrConflict, http.StatusInternalServerError},
		{"kind without Public", errkind.Wrap(errkind.NotFound, errors.New("x")), http.StatusInternalServerError},
		{"model endpoint not found", fmt.Errorf("%w: model", llm.ErrNotFound), http.StatusBadGateway},
		{"model endpoint bad request", llm.ErrBadRequest, http.StatusBadGateway},
		{"no kind", errors.New("segment 7 unreadable"), http.StatusInternalServerError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, msg := failure(context.Background(), tc.err)
			if status != tc.status {
				t.Fatalf("failure(%v) = %d %q, want %d", tc.err, status, msg, tc.status)
			}
			if status < 500 && msg != tc.err.Error() {
				t.Errorf("message %q, want the error's own %q", msg, tc.err.Error())
			}
			if status == http.StatusInternalServerError && !strings.HasPrefix(msg, "internal error") {
				t.Errorf("message %q, want an internal error without the backend's text", msg)
			}
		})
	}
}
