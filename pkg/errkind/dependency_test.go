package errkind_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/graphrag/graphrag/pkg/errkind"
)

func TestDown(t *testing.T) {
	cause := fmt.Errorf("dial tcp 127.0.0.1:7687: %w", io.ErrUnexpectedEOF)
	err := fmt.Errorf("merging: %w", errkind.Down("graph store", cause))
	if got := errkind.KindOf(err); got != errkind.Unavailable {
		t.Errorf("KindOf = %v, want unavailable", got)
	}
	if got := errkind.Dependency(err); got != "graph store" {
		t.Errorf("Dependency = %q, want graph store", got)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Error("the cause is not in the chain")
	}
	if want := "merging: graph store unavailable: dial tcp 127.0.0.1:7687: unexpected EOF"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if errkind.IsPublic(err, errkind.Unavailable) {
		t.Error("a store's outage is Public: its text is the backend's")
	}
	if errkind.Down("graph store", nil) != nil {
		t.Error("Down(nil) is not nil")
	}
}

func TestDependencyOfOtherErrors(t *testing.T) {
	for _, err := range []error{nil, io.EOF, context.DeadlineExceeded, errkind.Wrap(errkind.Unavailable, io.EOF)} {
		if got := errkind.Dependency(err); got != "" {
			t.Errorf("Dependency(%v) = %q, want none", err, got)
		}
	}
	// The outermost DependencyError names the dependency.
	err := errkind.Down("vector store", errkind.Down("graph store", io.EOF))
	if got := errkind.Dependency(err); got != "vector store" {
		t.Errorf("Dependency = %q, want the outermost", got)
	}
}
