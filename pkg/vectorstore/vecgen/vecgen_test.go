package vecgen

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// shapeStats measures what Default was calibrated on: the mean cosine of
// random pairs and of the 10th and 50th nearest neighbours.
func shapeStats(vs [][]float32) (pair, nn10, nn50 float64) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		pair += dot(vs[r.IntN(len(vs))], vs[r.IntN(len(vs))]) / 2000
	}
	const probes = 100
	for p := range probes {
		q := vs[p*len(vs)/probes]
		sims := make([]float64, 0, len(vs))
		for _, v := range vs {
			sims = append(sims, dot(q, v))
		}
		slices.Sort(sims)
		slices.Reverse(sims) // sims[0] is q itself
		nn10 += sims[10] / probes
		nn50 += sims[50] / probes
	}
	return pair, nn10, nn50
}

// TestDefaultShape: Default keeps the shape of real E5 embeddings (package
// doc), so that recall measured on it means something.
func TestDefaultShape(t *testing.T) {
	c := New(Default(384), 7000)
	if len(c.Vectors) != 7000 {
		t.Fatalf("%d vectors", len(c.Vectors))
	}
	for _, v := range c.Vectors[:10] {
		if n := dot(v, v); math.Abs(n-1) > 1e-4 {
			t.Fatalf("norm² %f", n)
		}
	}
	pair, nn10, nn50 := shapeStats(c.Vectors)
	t.Logf("random pair %.3f, 10th neighbour %.3f, 50th %.3f (real E5: 0.744, 0.843, 0.813)", pair, nn10, nn50)
	for _, x := range []struct {
		name      string
		got, want float64
	}{{"random pair", pair, 0.744}, {"10th neighbour", nn10, 0.843}, {"50th neighbour", nn50, 0.813}} {
		if math.Abs(x.got-x.want) > 0.02 {
			t.Errorf("%s cosine %.3f, want %.3f ± 0.02", x.name, x.got, x.want)
		}
	}
	var q1, q10 float64
	qs := c.Queries(60)
	for _, q := range qs {
		sims := make([]float64, 0, len(c.Vectors))
		for _, v := range c.Vectors {
			sims = append(sims, dot(q, v))
		}
		slices.Sort(sims)
		slices.Reverse(sims)
		q1 += sims[0] / float64(len(qs))
		q10 += sims[9] / float64(len(qs))
	}
	t.Logf("question → nearest chunk %.3f, 10th %.3f (real E5: 0.900, 0.842)", q1, q10)
	if math.Abs(q1-0.900) > 0.02 || math.Abs(q10-0.842) > 0.02 {
		t.Errorf("questions: nearest chunk %.3f, 10th %.3f; want 0.900, 0.842 ± 0.02", q1, q10)
	}
}

// TestLoadF32 reads real embeddings from GRAPHRAG_BENCH_VECTORS when set
// (scripts/bench/embed_hotpotqa.py writes them) and compares their shape, or
// else round-trips a small file.
func TestLoadF32(t *testing.T) {
	path := os.Getenv("GRAPHRAG_BENCH_VECTORS")
	if path == "" {
		path = filepath.Join(t.TempDir(), "v.f32")
		var b []byte
		for _, x := range []float32{3, 4, 0, 0, 1, 0} {
			bits := math.Float32bits(x)
			b = append(b, byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24))
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		vs, err := LoadF32(path, 3)
		if err != nil || len(vs) != 2 || vs[0][0] != 0.6 || vs[0][1] != 0.8 {
			t.Fatalf("LoadF32 = %v, %v", vs, err)
		}
		if _, err := LoadF32(path, 4); err == nil {
			t.Fatal("a file of 6 floats read as 4-d vectors")
		}
		return
	}
	vs, err := LoadF32(path, 384)
	if err != nil {
		t.Fatal(err)
	}
	pair, nn10, nn50 := shapeStats(vs)
	t.Logf("%s: %d vectors; random pair %.3f, 10th neighbour %.3f, 50th %.3f", path, len(vs), pair, nn10, nn50)
}
