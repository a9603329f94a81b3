package leiden

import "math"

// exp is e**x computed with plain float64 operations only, so that the
// refinement's random choices are identical on every platform: math.Exp uses
// assembly on some architectures, which need not round the same way.
//
// It is the algorithm of Go's portable math.exp (from FreeBSD's
// /usr/src/lib/msun/src/e_exp.c, Copyright (C) 2004 by Sun Microsystems, Inc.
// "Permission to use, copy, modify, and distribute this software is freely
// granted, provided that this notice is preserved."), with float64()
// conversions that forbid FMA fusion.
func exp(x float64) float64 {
	const (
		ln2Hi = 6.93147180369123816490e-01
		ln2Lo = 1.90821492927058770002e-10
		log2e = 1.44269504088896338700e+00

		overflow  = 7.09782712893383973096e+02
		underflow = -7.45133219101941108420e+02
		nearZero  = 1.0 / (1 << 28) // 2**-28

		p1 = 1.66666666666666657415e-01
		p2 = -2.77777777770155933842e-03
		p3 = 6.61375632143793436117e-05
		p4 = -1.65339022054652515390e-06
		p5 = 4.13813679705723846039e-08
	)
	switch {
	case math.IsNaN(x):
		return x
	case x > overflow:
		return math.Inf(1)
	case x < underflow:
		return 0
	case -nearZero < x && x < nearZero:
		return 1 + x
	}
	// Reduce x = k·ln2 + r, computed as r = hi − lo for extra precision.
	var k int
	switch {
	case x < 0:
		k = int(float64(log2e*x) - 0.5)
	case x > 0:
		k = int(float64(log2e*x) + 0.5)
	}
	hi := x - float64(float64(k)*ln2Hi)
	lo := float64(k) * ln2Lo

	r := hi - lo
	t := r * r
	poly := p1 + float64(t*(p2+float64(t*(p3+float64(t*(p4+float64(t*p5)))))))
	c := r - float64(t*poly)
	y := 1 - ((lo - float64(r*c)/(2-c)) - hi)
	return math.Ldexp(y, k)
}
