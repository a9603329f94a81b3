package embedded

import "github.com/viterin/vek"

// useAVX2 is vek's own check (AVX2 and FMA), which it makes for vek32.Dot.
var useAVX2 = vek.Info().Acceleration

// dotInt8AVX2 is Σ a[i]·b[i] over n bytes, n a multiple of 16
// (dot_amd64.s).
//
//go:noescape
func dotInt8AVX2(a, b *int8, n int) int32

// dotInt8 is the integer dot product of a and b[:len(a)]: 16 bytes per
// AVX2 step where available (~10× the portable loop), the rest in Go.
func dotInt8(a, b []int8) int32 {
	b = b[:len(a)]
	n := len(a) &^ 15
	if !useAVX2 || n == 0 {
		return dotInt8Go(a, b)
	}
	return dotInt8AVX2(&a[0], &b[0], n) + dotInt8Go(a[n:], b[n:])
}

// prefetchLines asks the CPU to load the n bytes at p into cache without
// waiting for them (dot_amd64.s).
//
//go:noescape
func prefetchLines(p *int8, n int)

// prefetch starts loading v's codes into cache.
func (v qvec) prefetch() {
	if len(v.codes) > 0 {
		prefetchLines(&v.codes[0], len(v.codes))
	}
}
