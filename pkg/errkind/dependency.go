package errkind

import "errors"

// DependencyError is the failure of a call to a dependency that is down: a store's
// server unreachable, a driver out of retries. Its kind is Unavailable, and it names
// the dependency in the words a client may be told ("graph store", "vector store"),
// apart from its cause, whose text is the backend's and is not.
type DependencyError struct {
	// Dependency names what is down.
	Dependency string
	// Err is the backend's error.
	Err error
}

func (e *DependencyError) Error() string   { return e.Dependency + " unavailable: " + e.Err.Error() }
func (e *DependencyError) Unwrap() error   { return e.Err }
func (e *DependencyError) ErrorKind() Kind { return Unavailable }

// Down returns err as the failure of the dependency named dependency being down: of
// kind Unavailable, and named by Dependency. Down(dependency, nil) is nil.
func Down(dependency string, err error) error {
	if err == nil {
		return nil
	}
	return &DependencyError{Dependency: dependency, Err: err}
}

// Dependency names the dependency that err says is down (the outermost DependencyError
// of its chain), or returns "" when err says none is.
func Dependency(err error) string {
	if d, ok := errors.AsType[*DependencyError](err); ok {
		return d.Dependency
	}
	return ""
}
