package errkind_test

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/graphrag/graphrag/pkg/errkind"
)

// errMissing is a sentinel as a store declares one.
var errMissing = errkind.New(errkind.NotFound, "store: not found")

// errCursor is one written for the client of a request.
var errCursor = errkind.Public(errkind.Invalid, "invalid argument")

func TestKindOf(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want errkind.Kind
	}{
		{"nil", nil, errkind.Unknown},
		{"plain", io.EOF, errkind.Unknown},
		{"sentinel", errMissing, errkind.NotFound},
		{"wrapped sentinel", fmt.Errorf("reading entity: %w", errMissing), errkind.NotFound},
		{"public sentinel", fmt.Errorf("%w: cursor %q", errCursor, "x"), errkind.Invalid},
		{"Wrap", errkind.Wrap(errkind.Permanent, io.EOF), errkind.Permanent},
		{"Errorf", errkind.Errorf(errkind.Conflict, "writing %s: %w", "k", io.EOF), errkind.Conflict},
		{"outermost wins", errkind.Wrap(errkind.Unavailable, fmt.Errorf("x: %w", errMissing)), errkind.Unavailable},
		{"joined", errors.Join(io.EOF, errMissing), errkind.NotFound},
		{"kind of its own", ownKind{}, errkind.Conflict},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := errkind.KindOf(tc.err); got != tc.want {
				t.Errorf("KindOf(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// ownKind is an error type of another package that has a kind.
type ownKind struct{}

func (ownKind) Error() string           { return "own" }
func (ownKind) ErrorKind() errkind.Kind { return errkind.Conflict }

func TestIsSearchesTheWholeChain(t *testing.T) {
	err := errkind.Wrap(errkind.Unavailable, fmt.Errorf("x: %w", errkind.Wrap(errkind.Permanent, io.EOF)))
	for _, k := range []errkind.Kind{errkind.Unavailable, errkind.Permanent} {
		if !errkind.Is(err, k) {
			t.Errorf("Is(%v, %v) = false", err, k)
		}
	}
	if errkind.Is(err, errkind.NotFound) || errkind.Is(nil, errkind.Unknown) {
		t.Error("Is reports a kind the chain does not have")
	}
	joined := fmt.Errorf("a: %w, b: %w", io.EOF, fmt.Errorf("c: %w", errMissing))
	if !errkind.Is(joined, errkind.NotFound) {
		t.Errorf("Is(%v, NotFound) = false: the second of two wrapped errors is not searched", joined)
	}
}

func TestPublic(t *testing.T) {
	if !errkind.IsPublic(fmt.Errorf("page: %w", errCursor), errkind.Invalid) {
		t.Error("a Public sentinel is not public")
	}
	for _, err := range []error{errMissing, errkind.Wrap(errkind.NotFound, io.EOF), errkind.Wrap(errkind.Invalid, errMissing)} {
		if errkind.IsPublic(err, errkind.NotFound) || errkind.IsPublic(err, errkind.Invalid) {
			t.Errorf("IsPublic(%v) = true for an error that is not Public", err)
		}
	}
	// A public error anywhere in the chain counts, under other kinds too.
	if !errkind.IsPublic(errkind.Wrap(errkind.Permanent, fmt.Errorf("%w: %w", errCursor, errMissing)), errkind.Invalid) {
		t.Error("IsPublic misses a public error under a wrapper")
	}
}

func TestWrapKeepsMessageAndCause(t *testing.T) {
	cause := &ownErr{"disk full"}
	err := errkind.Wrap(errkind.Unavailable, fmt.Errorf("writing: %w", cause))
	if err.Error() != "writing: disk full" {
		t.Errorf("message %q", err.Error())
	}
	var oe *ownErr
	if !errors.As(err, &oe) || oe != cause || !errors.Is(err, cause) {
		t.Error("the cause is not reachable through Wrap")
	}
	if errkind.Wrap(errkind.Invalid, nil) != nil {
		t.Error("Wrap(k, nil) is not nil")
	}
	// Sentinels stay distinct: two of one kind do not match each other.
	other := errkind.New(errkind.NotFound, "store: not found")
	if errors.Is(errMissing, other) || errors.Is(fmt.Errorf("%w", other), errMissing) {
		t.Error("two sentinels with one kind and message match each other")
	}
}

type ownErr struct{ s string }

func (e *ownErr) Error() string { return e.s }

func TestKindString(t *testing.T) {
	for k, want := range map[errkind.Kind]string{errkind.NotFound: "not found", errkind.Permanent: "permanent", 9: "kind(9)"} {
		if k.String() != want {
			t.Errorf("%d.String() = %q, want %q", k, k.String(), want)
		}
	}
}
