package service

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// ConfigError is one invalid configuration value, named by the flag that sets it
// ("-entity-min-similarity: must be -1 (automatic) or in (0, 1], got 1.5"), or by its
// Go field name when no flag does. It matches ErrInvalidFlags.
type ConfigError struct {
	Name    string // "-top-k", or "MapMaxTokens"
	Problem string
}

func (e *ConfigError) Error() string { return e.Name + ": " + e.Problem }

// Is makes errors.Is(err, ErrInvalidFlags) true.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidFlags }

// Problems collects what is wrong with a configuration, so that Validate reports every
// invalid value at once. The zero value is ready to use.
type Problems struct{ errs []error }

// Add records that the value named name (a flag with its dash, or a field) is wrong
// and why.
func (p *Problems) Add(name, format string, args ...any) {
	p.errs = append(p.errs, &ConfigError{Name: name, Problem: fmt.Sprintf(format, args...)})
}

// Join records the problems of a nested configuration (nil adds nothing).
func (p *Problems) Join(err error) {
	if err != nil {
		p.errs = append(p.errs, err)
	}
}

// Err is every recorded problem joined, or nil.
func (p *Problems) Err() error { return errors.Join(p.errs...) }

// AtLeast records a problem when got < low.
func AtLeast[T cmp.Ordered](p *Problems, name string, got, low T) {
	if got < low {
		p.Add(name, "must be at least %v, got %v", low, got)
	}
}

// Positive records a problem when got is not above zero.
func Positive[T cmp.Ordered](p *Problems, name string, got T) {
	var zero T
	if got <= zero {
		p.Add(name, "must be positive, got %v", got)
	}
}

// Within records a problem when got is outside [low, high].
func Within[T cmp.Ordered](p *Problems, name string, got, low, high T) {
	if got < low || got > high {
		p.Add(name, "must be in [%v, %v], got %v", low, high, got)
	}
}

// WithinOpen records a problem when got is outside (low, high).
func WithinOpen[T cmp.Ordered](p *Problems, name string, got, low, high T) {
	if got <= low || got >= high {
		p.Add(name, "must be in (%v, %v), got %v", low, high, got)
	}
}

// OneOf records a problem when got is none of want.
func OneOf(p *Problems, name, got string, want ...string) {
	if slices.Contains(want, got) {
		return
	}
	p.Add(name, "must be %s, got %q", strings.Join(want, " or "), got)
}

// FillZeros sets each field of *cfg named in fields that holds its zero value to its
// value in def: for the fields whose zero stands for their default, as a library
// caller's Config literal leaves them. A name that is not a field of T panics.
func FillZeros[T any](cfg *T, def T, fields ...string) {
	v, d := reflect.ValueOf(cfg).Elem(), reflect.ValueOf(def)
	for _, name := range fields {
		f := v.FieldByName(name)
		if !f.IsValid() {
			panic(fmt.Sprintf("service.FillZeros: %s has no field %s", v.Type(), name))
		}
		if f.IsZero() {
			f.Set(d.FieldByName(name))
		}
	}
}
