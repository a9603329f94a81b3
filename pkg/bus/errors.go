package bus

import (
	"fmt"

	"github.com/graphrag/graphrag/pkg/errkind"
)

var (
	// ErrPermanent marks a handler error that retrying cannot fix (a
	// malformed message, say): the message goes to the dead-letter subject
	// at once.
	ErrPermanent = errkind.New(errkind.Permanent, "permanent failure")

	// ErrNotFound is returned when a stream, consumer, bucket, object or key
	// does not exist.
	ErrNotFound = errkind.New(errkind.NotFound, "not found")

	// ErrInvalidSpec is returned for a StreamSpec, ConsumerSpec, lease or
	// key prefix that cannot work (missing name, no dead-letter subject,
	// ...).
	ErrInvalidSpec = errkind.New(errkind.Invalid, "invalid spec")

	// ErrConflict is returned by a compare-and-set on a key-value bucket
	// (KV.Create, KV.Update, KV.DeleteRevision) when the key is not in the
	// state the caller read: another writer came first. Re-read and retry.
	ErrConflict = errkind.New(errkind.Conflict, "conflict")
)

// PermanentError wraps a handler error that must not be retried.
type PermanentError struct {
	Err error
}

func (e *PermanentError) Error() string {
	if e.Err == nil {
		return ErrPermanent.Error()
	}
	return e.Err.Error()
}

// Unwrap returns the wrapped error.
func (e *PermanentError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrPermanent) true for any *PermanentError.
func (e *PermanentError) Is(target error) bool { return target == ErrPermanent }

// ErrorKind is errkind.Permanent.
func (e *PermanentError) ErrorKind() errkind.Kind { return errkind.Permanent }

// Permanent marks err as permanent; Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &PermanentError{Err: err}
}

// Permanentf is fmt.Errorf followed by Permanent.
func Permanentf(format string, args ...any) error {
	return Permanent(fmt.Errorf(format, args...))
}

// IsPermanent reports whether err (or anything it wraps) is of the kind
// errkind.Permanent: ErrPermanent, a *PermanentError, or any other error of that kind.
func IsPermanent(err error) bool { return errkind.Is(err, errkind.Permanent) }
