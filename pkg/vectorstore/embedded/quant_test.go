package embedded

import (
	"math/rand/v2"
	"testing"

	"github.com/viterin/vek/vek32"
)

// TestDotInt8 checks the integer dot product (AVX2 on amd64) against the
// portable loop on every length up to 100 and at the extremes.
func TestDotInt8(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 100; n++ {
		a, b := make([]int8, n), make([]int8, n+3)
		for i := range a {
			a[i] = int8(r.IntN(255) - 127)
		}
		for i := range b {
			b[i] = int8(r.IntN(255) - 127)
		}
		if got, want := dotInt8(a, b), dotInt8Go(a, b); got != want {
			t.Fatalf("n=%d: dotInt8 = %d, want %d", n, got, want)
		}
		var want int32
		for i := range a {
			want += int32(a[i]) * int32(b[i])
		}
		if got := dotInt8Go(a, b); got != want {
			t.Fatalf("n=%d: dotInt8Go = %d, want %d", n, got, want)
		}
	}
	ext := make([]int8, 4096)
	for i := range ext {
		ext[i] = -127
	}
	if got := dotInt8(ext, ext); got != 4096*127*127 {
		t.Fatalf("extremes: %d, want %d", got, 4096*127*127)
	}
}

// TestQuantizeBound: the approximate cosine of quantized vectors is within
// the stated bound of the exact one.
func TestQuantizeBound(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 2000 {
		dim := 1 + r.IntN(400)
		a, b := normalize(randVec(r, dim)), normalize(randVec(r, dim))
		if i%3 == 0 { // nearly parallel, as neighbours are
			for j := range b {
				b[j] = a[j] + 0.05*b[j]
			}
			b = normalize(b)
		}
		qa, qb := quantizeUnit(a), quantizeUnit(b)
		exact := vek32.Dot(a, b)
		if d := qa.dot(qb) - exact; d > qa.bound(qb) || -d > qa.bound(qb) {
			t.Fatalf("dim %d: approx %v exact %v, off by more than %v", dim, qa.dot(qb), exact, qa.bound(qb))
		}
		if qa.err > 0.02 && dim > 50 {
			t.Fatalf("dim %d: rounding error %v is implausibly large", dim, qa.err)
		}
	}
	if z := quantizeUnit(make([]float32, 8)); z.scale != 0 || z.dot(z) != 0 {
		t.Fatalf("zero vector quantized to %+v", z)
	}
}

func randVec(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func BenchmarkDot384(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	x, y := normalize(randVec(r, 384)), normalize(randVec(r, 384))
	qx, qy := quantizeUnit(x), quantizeUnit(y)
	var sink float32
	b.Run("float32", func(b *testing.B) {
		for b.Loop() {
			sink += vek32.Dot(x, y)
		}
	})
	b.Run("int8", func(b *testing.B) {
		for b.Loop() {
			sink += qx.dot(qy)
		}
	})
	b.Run("int8-go", func(b *testing.B) {
		for b.Loop() {
			sink += float32(dotInt8Go(qx.codes, qy.codes))
		}
	})
	_ = sink
}
