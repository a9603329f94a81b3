package events

import (
	"fmt"

	"github.com/graphrag/graphrag/pkg/errkind"
)

// ErrInvalid is matched (errors.Is) by every validation failure of this package, so a
// consumer can tell a poison message from a transient failure.
var ErrInvalid = errkind.Public(errkind.Invalid, "invalid event")

// FieldError says which field of an event is wrong and why.
type FieldError struct {
	Field   string
	Problem string
}

func (e *FieldError) Error() string { return fmt.Sprintf("field %s: %s", e.Field, e.Problem) }

// Is makes every FieldError match ErrInvalid.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

// ErrorKind is ErrInvalid's kind, errkind.Invalid.
func (e *FieldError) ErrorKind() errkind.Kind { return errkind.Invalid }

// PublicKind is true: a field error describes what a request or message got wrong.
func (e *FieldError) PublicKind() bool { return true }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Problem: fmt.Sprintf(format, args...)}
}
