package clienterror_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/catalog"
	"github.com/graphrag/graphrag/pkg/errkind"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/services/query/access"
	"github.com/graphrag/graphrag/services/query/clienterror"
	"github.com/graphrag/graphrag/services/query/engine"
)

func TestOf(t *testing.T) {
	const secret = "dial tcp 10.0.0.7:19530"
	backend := errors.New(secret)
	traceID := trace.TraceID{1, 2, 3}
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: trace.SpanID{1}}))
	tests := []struct {
		name  string
		err   error
		class clienterror.Class
		code  string
	}{
		{"public invalid", fmt.Errorf("%w: cursor", catalog.ErrInvalid), clienterror.Invalid, ""},
		{"engine invalid", engine.BadRequestf("top_k: too large"), clienterror.Invalid, ""},
		{"invalid beats not found", fmt.Errorf("%w: %w", catalog.ErrNotFound, catalog.ErrInvalid), clienterror.Invalid, ""},
		{"forbidden", fmt.Errorf("refused: %w", access.ErrForbidden), clienterror.Forbidden, ""},
		{"unknown corpus", fmt.Errorf("%w: demo", engine.ErrUnknownCorpus), clienterror.NotFound, clienterror.CorpusNotFound},
		{"unknown entity", fmt.Errorf("%w: x", engine.ErrNotFound), clienterror.NotFound, ""},
		{"public conflict", errkind.Public(errkind.Conflict, "changed"), clienterror.Conflict, ""},
		{"public unavailable", errkind.Public(errkind.Unavailable, "no export here"), clienterror.Unavailable, ""},
		{"store down", errkind.Down(vectorstore.Dependency, backend), clienterror.Unavailable, ""},
		{"model rate limited", fmt.Errorf("%s: %w", secret, llm.ErrRateLimited), clienterror.Unavailable, ""},
		{"model bad response", fmt.Errorf("%s: %w", secret, llm.ErrBadResponse), clienterror.Upstream, ""},
		{"deadline", fmt.Errorf("%s: %w", secret, context.DeadlineExceeded), clienterror.Timeout, ""},
		{"cancelled", fmt.Errorf("%s: %w", secret, context.Canceled), clienterror.Canceled, ""},
		{"store's not found", fmt.Errorf("%s: %w", secret, graphstore.ErrNotFound), clienterror.Internal, ""},
		{"permanent", &bus.PermanentError{Err: backend}, clienterror.Internal, ""},
		{"no kind", backend, clienterror.Internal, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			told := clienterror.Of(ctx, tc.err)
			if told.Class != tc.class || told.Code != tc.code {
				t.Fatalf("Of(%v) = %v %q, want %v %q", tc.err, told.Class, told.Code, tc.class, tc.code)
			}
			switch told.Class {
			case clienterror.Invalid, clienterror.Forbidden, clienterror.NotFound, clienterror.Conflict:
				if told.Message != tc.err.Error() {
					t.Errorf("message %q, want the error's own %q", told.Message, tc.err.Error())
				}
				return
			}
			if strings.Contains(told.Message, secret) {
				t.Errorf("message %q tells the backend's text", told.Message)
			}
			// The service's failures name the trace of the logged details (a Public
			// Unavailable is the client's to read as it is; a timeout has no details).
			if told.Class.ServiceFailure() && told.Class != clienterror.Timeout && told.Message != tc.err.Error() &&
				!strings.HasSuffix(told.Message, "(trace "+traceID.String()+")") {
				t.Errorf("message %q does not name the trace", told.Message)
			}
		})
	}
}
