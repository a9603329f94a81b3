package embedded

import "math"

// qvec is a unit vector scalar-quantized to one signed byte per dimension
// with one scale: v ≈ scale·codes. It is what the in-memory index keeps of a
// record (a quarter of the float32 vector's bytes); bbolt keeps the exact
// vector, which re-ranks the final candidates (see rerank).
//
// err is the length of the rounding error v − scale·codes. For a unit query
// q, |q·v − q·(scale·codes)| ≤ err (Cauchy–Schwarz), which bounds how far an
// approximate score can be from the exact one.
type qvec struct {
	codes []int8
	scale float32
	err   float32
}

// quantize returns v (normalized first) quantized symmetrically: the largest
// component maps to ±127.
func quantize(v []float32) qvec {
	return quantizeUnit(normalize(v))
}

// quantizeUnit quantizes a vector that is already of unit length.
func quantizeUnit(u []float32) qvec {
	var amax float32
	for _, x := range u {
		amax = max(amax, float32(math.Abs(float64(x))))
	}
	q := qvec{codes: make([]int8, len(u))}
	if amax == 0 {
		return q
	}
	q.scale = amax / 127
	inv := 1 / float64(q.scale)
	var e2 float64
	for i, x := range u {
		c := math.Round(float64(x) * inv)
		c = max(-127, min(127, c))
		q.codes[i] = int8(c)
		d := float64(x) - c*float64(q.scale)
		e2 += d * d
	}
	// Rounded up by a relative 1e-5 so that float32 rounding in the scores
	// never makes the bound too tight.
	q.err = float32(math.Sqrt(e2)*(1+1e-5) + 1e-6)
	return q
}

// dot approximates the cosine of two quantized unit vectors.
func (a qvec) dot(b qvec) float32 {
	return a.scale * b.scale * float32(dotInt8(a.codes, b.codes))
}

// bound is the largest difference between a.dot(b) and the exact cosine of
// the vectors a and b stand for: a·b − â·b̂ = a·(b−b̂) + (a−â)·b̂, with
// |b̂| ≤ 1 + b.err.
func (a qvec) bound(b qvec) float32 {
	return b.err + a.err*(1+b.err)
}

// dotInt8Go is the portable integer dot product; len(b) ≥ len(a).
func dotInt8Go(a, b []int8) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	for len(a) >= 4 && len(b) >= 4 {
		s0 += int32(a[0]) * int32(b[0])
		s1 += int32(a[1]) * int32(b[1])
		s2 += int32(a[2]) * int32(b[2])
		s3 += int32(a[3]) * int32(b[3])
		a, b = a[4:], b[4:]
	}
	for i := range a {
		s0 += int32(a[i]) * int32(b[i])
	}
	return s0 + s1 + s2 + s3
}
