package llm

import (
	"errors"
	"fmt"

	"github.com/graphrag/graphrag/pkg/errkind"
)

// Sentinel errors. A failed call returns a *CallError that matches exactly one
// of the class sentinels below with errors.Is, and still unwraps to the
// underlying go-openai or transport error for errors.As.
var (
	// ErrRateLimited: the endpoint answered 429 on every attempt. It is of the kind
	// errkind.Unavailable: a rate limit passes, so a pipeline stage keeps the message
	// for a later delivery and never dead-letters it for that.
	ErrRateLimited = errkind.New(errkind.Unavailable, "llm: rate limited")
	// ErrServer: the endpoint answered 5xx on every attempt.
	ErrServer = errors.New("llm: server error")
	// ErrTimeout: the per-call timeout expired (or the transport timed out).
	ErrTimeout = errors.New("llm: timeout")
	// ErrUnavailable: the endpoint could not be reached (refused, reset, EOF).
	ErrUnavailable = errors.New("llm: endpoint unavailable")
	// ErrBadRequest: 400, 422 or another 4xx the caller must fix; never retried.
	ErrBadRequest = errkind.New(errkind.Invalid, "llm: bad request")
	// ErrUnauthorized: 401 or 403; never retried.
	ErrUnauthorized = errors.New("llm: unauthorized")
	// ErrNotFound: 404, usually an unknown model; never retried.
	ErrNotFound = errkind.New(errkind.NotFound, "llm: not found")
	// ErrBadResponse: a 2xx answer that could not be used (garbage body, no
	// choices, wrong number of embeddings).
	ErrBadResponse = errors.New("llm: malformed response")
	// ErrInvalidJSON: ChatJSON got no output that parses into the target type.
	ErrInvalidJSON = errors.New("llm: invalid JSON output")
	// ErrInvalidConfig: New was given an unusable Config.
	ErrInvalidConfig = errkind.New(errkind.Invalid, "llm: invalid config")
	// ErrOutage: the call failed because its endpoint is down (it failed with a class
	// an outage causes and the endpoint did not answer a probe either); it matches its
	// class sentinel too. Callers under WaitOutOutages see it only when their waiting
	// was ended (context, stop, Close).
	ErrOutage = errors.New("llm: endpoint down")
)

// CallError describes a call that failed after all attempts.
type CallError struct {
	Kind       string // chat | embed
	Stage      string
	Attempts   int   // requests sent, including the first
	StatusCode int   // last HTTP status, 0 if none was received
	Class      error // one of the sentinels above
	Err        error // last underlying error
	// Outage is set when the endpoint was found down (errors.Is(err, ErrOutage)).
	Outage bool
}

func (e *CallError) Error() string {
	s := fmt.Sprintf("llm %s", e.Kind)
	if e.Stage != "" {
		s += " (" + e.Stage + ")"
	}
	s += fmt.Sprintf(" failed after %d attempt(s)", e.Attempts)
	if e.Outage {
		s += " (endpoint down)"
	}
	if e.StatusCode != 0 {
		s += fmt.Sprintf(", status %d", e.StatusCode)
	}
	return s + ": " + e.Class.Error() + ": " + e.Err.Error()
}

// Unwrap exposes both the class sentinel and the underlying error, so that
// errors.Is(err, ErrRateLimited) and errors.As(err, &*openai.APIError) both work.
func (e *CallError) Unwrap() []error { return []error{e.Class, e.Err} }

// Is matches ErrOutage when the endpoint was found down.
func (e *CallError) Is(target error) bool { return target == ErrOutage && e.Outage }

// InvalidJSONError is returned by ChatJSON when no attempt produced output that
// parses into the target type. It matches ErrInvalidJSON and unwraps to the
// last parse or validation error.
type InvalidJSONError struct {
	Attempts int
	Content  string // the last content received
	Err      error
}

func (e *InvalidJSONError) Error() string {
	return fmt.Sprintf("llm: invalid JSON output after %d attempt(s): %v", e.Attempts, e.Err)
}

func (e *InvalidJSONError) Is(target error) bool { return target == ErrInvalidJSON }

func (e *InvalidJSONError) Unwrap() error { return e.Err }
