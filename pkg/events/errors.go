package events

import (
	"errors"
	"fmt"
)

// ErrInvalid is matched (errors.Is) by every validation failure of this package, so a
// consumer can tell a poison message from a transient failure.
var ErrInvalid = errors.New("invalid event")

// FieldError says which field of an event is wrong and why.
type FieldError struct {
	Field   string
	Problem string
}

func (e *FieldError) Error() string { return fmt.Sprintf("field %s: %s", e.Field, e.Problem) }

// Is makes every FieldError match ErrInvalid.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Problem: fmt.Sprintf(format, args...)}
}
