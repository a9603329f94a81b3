package clienterror

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/trace"

	"github.com/graphrag/graphrag/pkg/errkind"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/services/query/access"
	"github.com/graphrag/graphrag/services/query/engine"
)

// Class is what a client is told an error is.
type Class uint8

// The classes, from the client's mistakes to the service's failures.
const (
	// Internal: a failure of the service the client is told nothing about but its trace.
	Internal Class = iota
	// Invalid: the request's arguments are wrong.
	Invalid
	// Forbidden: the client's token does not allow the request.
	Forbidden
	// NotFound: what the request names does not exist.
	NotFound
	// Conflict: the state changed under the request.
	Conflict
	// Unavailable: something the service needs is down; the same request may succeed
	// later.
	Unavailable
	// Upstream: the model endpoint answered, but not with an answer.
	Upstream
	// Timeout: the request took longer than its deadline.
	Timeout
	// Canceled: the client went away or cancelled the request.
	Canceled
)

var classNames = [...]string{"internal", "invalid", "forbidden", "not found", "conflict", "unavailable", "upstream", "timeout", "canceled"}

func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", uint8(c))
}

// ServiceFailure reports whether c is a failure of the service, not the client's
// doing: the transport logs the error, whose details the client is not told.
func (c Class) ServiceFailure() bool {
	switch c {
	case Internal, Unavailable, Upstream, Timeout:
		return true
	}
	return false
}

// CorpusNotFound is the Code of a NotFound for a corpus that holds nothing: the client
// may list the corpora or index documents under the name.
const CorpusNotFound = "corpus_not_found"

// Told is what the client is told about an error.
type Told struct {
	Class Class
	// Message is the text the client reads: the error's own for the client's mistakes,
	// a text naming what failed, and the request's trace, for the service's failures.
	Message string
	// Code names a failure a client may act on (CorpusNotFound); "" for the others.
	Code string
}

// engineKinds are the kinds of the engine's sentinels, which carry none.
var engineKinds = map[errkind.Kind][]error{
	errkind.Invalid:  {engine.ErrBadRequest},
	errkind.NotFound: {engine.ErrUnknownCorpus, engine.ErrNotFound},
}

// clientKinds are the kinds of the client's own mistakes after Invalid, in the order
// they are tried, and their classes.
var clientKinds = []struct {
	kind  errkind.Kind
	class Class
}{
	{errkind.NotFound, NotFound},
	{errkind.Conflict, Conflict},
	{errkind.Unavailable, Unavailable},
}

// modelUnavailable are the model endpoint's errors that mean it is down or overloaded.
var modelUnavailable = []error{llm.ErrRateLimited, llm.ErrUnavailable, llm.ErrTimeout}

// modelFailed are the model endpoint's errors that mean it answered wrongly, or was
// asked something it refused: the service's request, not the client's.
var modelFailed = []error{llm.ErrServer, llm.ErrBadResponse, llm.ErrInvalidJSON, llm.ErrBadRequest, llm.ErrUnauthorized, llm.ErrNotFound}

// Of says what the client of the request served under ctx is told about err, which
// must not be nil.
func Of(ctx context.Context, err error) Told {
	switch {
	case clientKind(err, errkind.Invalid):
		// Before the others: a wrong argument is what the client can fix.
		return Told{Class: Invalid, Message: err.Error()}
	case errors.Is(err, access.ErrForbidden):
		return Told{Class: Forbidden, Message: err.Error()}
	}
	for _, ck := range clientKinds {
		if clientKind(err, ck.kind) {
			t := Told{Class: ck.class, Message: err.Error()}
			if errors.Is(err, engine.ErrUnknownCorpus) {
				t.Code = CorpusNotFound
			}
			return t
		}
	}
	switch {
	case errkind.Dependency(err) != "" && errkind.Is(err, errkind.Unavailable):
		// A store driver's outage: its name is the client's word, its cause is not.
		return Told{Class: Unavailable, Message: "the " + errkind.Dependency(err) + " is unavailable; try again later" + traceRef(ctx)}
	case isAny(err, modelUnavailable):
		return Told{Class: Unavailable, Message: "the language model endpoint is unavailable; try again later" + traceRef(ctx)}
	case isAny(err, modelFailed):
		return Told{Class: Upstream, Message: "the language model endpoint failed to answer" + traceRef(ctx)}
	case errors.Is(err, context.DeadlineExceeded):
		return Told{Class: Timeout, Message: "the request took longer than the service's time limit"}
	case errors.Is(err, context.Canceled):
		return Told{Class: Canceled, Message: "the request was cancelled"}
	}
	return Told{Class: Internal, Message: "internal error: the request could not be answered" + traceRef(ctx)}
}

// clientKind reports whether err is the client's mistake of the kind k.
func clientKind(err error, k errkind.Kind) bool {
	return errkind.IsPublic(err, k) || isAny(err, engineKinds[k])
}

func isAny(err error, targets []error) bool {
	for _, e := range targets {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// traceRef names the request's trace, under which the details are logged.
func traceRef(ctx context.Context) string {
	if sc := trace.SpanContextFromContext(ctx); sc.HasTraceID() {
		return " (trace " + sc.TraceID().String() + ")"
	}
	return ""
}
