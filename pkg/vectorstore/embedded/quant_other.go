//go:build !amd64

package embedded

// dotInt8 is the integer dot product of a and b[:len(a)].
func dotInt8(a, b []int8) int32 { return dotInt8Go(a, b) }

// prefetch is a no-op where there is no prefetch instruction wired up.
func (v qvec) prefetch() {}
