package leiden

import (
	"math"
	"testing"
)

func TestExp(t *testing.T) {
	tests := []struct {
		name string
		x    float64
		want float64
	}{
		{"zero", 0, 1},
		{"one", 1, math.E},
		{"minus one", -1, 1 / math.E},
		{"tiny", 1e-300, 1},
		{"underflow", -800, 0},
		{"overflow", 800, math.Inf(1)},
		{"minus infinity", math.Inf(-1), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := exp(tt.x); got != tt.want && math.Abs(got-tt.want) > 1e-15*tt.want {
				t.Errorf("exp(%v) = %v, want %v", tt.x, got, tt.want)
			}
		})
	}
	t.Run("NaN", func(t *testing.T) {
		if !math.IsNaN(exp(math.NaN())) {
			t.Error("exp(NaN) is not NaN")
		}
	})
	t.Run("matches math.Exp", func(t *testing.T) {
		for x := -740.0; x < 0; x += 0.37 {
			want := math.Exp(x)
			if got := exp(x); math.Abs(got-want) > 4.5e-16*want { // within 2 ulp
				t.Fatalf("exp(%v) = %v, math.Exp %v", x, got, want)
			}
		}
	})
}
