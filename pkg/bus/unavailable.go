package bus

import (
	"github.com/graphrag/graphrag/pkg/errkind"
)

// ErrUnavailable marks a handler error caused by a dependency that is down (a model
// endpoint in an outage), not by the message: the message is naked with the backoff and
// never dead-lettered for it, whatever its delivery count, so that an outage of any
// length loses nothing. Any error of the kind errkind.Unavailable is treated so. A later failure of another kind is counted as usual (deliveries
// include those that met the outage).
var ErrUnavailable = errkind.New(errkind.Unavailable, "dependency unavailable")

type unavailableError struct{ err error }

func (e *unavailableError) Error() string        { return e.err.Error() }
func (e *unavailableError) Unwrap() error        { return e.err }
func (e *unavailableError) Is(target error) bool { return target == ErrUnavailable }

func (e *unavailableError) ErrorKind() errkind.Kind { return errkind.Unavailable }

// Unavailable marks err as caused by a dependency that is down; Unavailable(nil) is nil.
func Unavailable(err error) error {
	if err == nil {
		return nil
	}
	return &unavailableError{err: err}
}
