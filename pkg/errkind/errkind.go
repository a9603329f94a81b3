package errkind

import (
	"errors"
	"fmt"
)

// Kind is what kind of failure an error is.
type Kind uint8

// The kinds. Unknown is the kind of an error that has none.
const (
	Unknown Kind = iota
	// NotFound: what was asked for does not exist.
	NotFound
	// Invalid: the input breaks the callee's contract.
	Invalid
	// Conflict: the state changed under the caller (a compare-and-set lost).
	Conflict
	// Unavailable: a dependency is down; the same call may succeed later.
	Unavailable
	// Permanent: retrying cannot succeed.
	Permanent
)

var names = [...]string{"unknown", "not found", "invalid", "conflict", "unavailable", "permanent"}

func (k Kind) String() string {
	if int(k) < len(names) {
		return names[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// kinded is an error that has a kind. Any error type may implement it.
type kinded interface {
	error
	ErrorKind() Kind
}

// public is a kinded error whose kind and text are written for whoever sent the
// request being served.
type public interface {
	kinded
	PublicKind() bool
}

// sentinel is an error made by New or Public: errors.Is matches it by identity.
type sentinel struct {
	kind   Kind
	msg    string
	public bool
}

func (e *sentinel) Error() string    { return e.msg }
func (e *sentinel) ErrorKind() Kind  { return e.kind }
func (e *sentinel) PublicKind() bool { return e.public }

// New returns a sentinel error of kind k with the message msg. Its kind speaks to the
// code that calls the package defining it.
func New(k Kind, msg string) error { return &sentinel{kind: k, msg: msg} }

// Public returns a sentinel error of kind k whose kind and message are about the
// request being served (a malformed cursor, a document that does not exist): a
// transport may answer it to its client as it is.
func Public(k Kind, msg string) error { return &sentinel{kind: k, msg: msg, public: true} }

// wrapped gives an error a kind, keeping its message and chain.
type wrapped struct {
	kind Kind
	err  error
}

func (e *wrapped) Error() string   { return e.err.Error() }
func (e *wrapped) Unwrap() error   { return e.err }
func (e *wrapped) ErrorKind() Kind { return e.kind }

// Wrap returns err with the kind k: the same message, and errors.Is and errors.As see
// through it to err. Wrap(k, nil) is nil.
func Wrap(k Kind, err error) error {
	if err == nil {
		return nil
	}
	return &wrapped{kind: k, err: err}
}

// Errorf is fmt.Errorf followed by Wrap.
func Errorf(k Kind, format string, args ...any) error {
	return Wrap(k, fmt.Errorf(format, args...))
}

// KindOf returns the kind of the first error in err's chain that has one, in the order
// errors.Is walks it (so the outermost), or Unknown.
func KindOf(err error) Kind {
	if k, ok := errors.AsType[kinded](err); ok {
		return k.ErrorKind()
	}
	return Unknown
}

// Is reports whether any error in err's chain has the kind k.
func Is(err error, k Kind) bool {
	return find(err, func(e kinded) bool { return e.ErrorKind() == k })
}

// IsPublic reports whether any error in err's chain is a Public error of the kind k.
func IsPublic(err error, k Kind) bool {
	return find(err, func(e kinded) bool {
		p, ok := e.(public)
		return ok && p.PublicKind() && e.ErrorKind() == k
	})
}

// find walks err's chain as errors.Is does and reports whether a kinded error in it
// satisfies match. errors.As stops at the first kinded error; find looks at each link
// itself, so the type assertions below are on one link, not on a chain.
func find(err error, match func(kinded) bool) bool {
	for err != nil {
		if k, ok := err.(kinded); ok && match(k) { //nolint:errorlint // one link of the chain
			return true
		}
		switch u := err.(type) { //nolint:errorlint // one link of the chain
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if find(e, match) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}
