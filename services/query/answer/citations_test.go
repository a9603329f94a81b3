package answer

import (
	"slices"
	"strings"
	"testing"
)

func TestRenumber(t *testing.T) {
	for _, tc := range []struct {
		in, want  string
		sources   int
		wantOrder []int
	}{
		{"A [3]. B [1][3]. C [2].", "A [1]. B [2][1]. C [3].", 3, []int{3, 1, 2}},
		{"gap [2] then [5]", "gap [1] then [2]", 5, []int{2, 5}},
		{"invented [9] and [0] dropped, [1] kept", "invented  and  dropped, [1] kept", 3, []int{1}},
		{"not markers: [a] [] [12x] a[1", "not markers: [a] [] [12x] a[1", 20, nil},
		{"nested [[2]] and [2020]", "nested [[1]] and ", 3, []int{2}},
		{"", "", 3, nil},
	} {
		got, order := renumber(tc.in, tc.sources)
		if got != tc.want || !slices.Equal(order, tc.wantOrder) {
			t.Errorf("renumber(%q) = %q %v, want %q %v", tc.in, got, order, tc.want, tc.wantOrder)
		}
		// Streamed in pieces of any size, the same text comes out.
		for size := 1; size <= 4; size++ {
			r := newRenumberer(tc.sources)
			var b strings.Builder
			for i := 0; i < len(tc.in); i += size {
				b.WriteString(r.write(tc.in[i:min(i+size, len(tc.in))]))
			}
			b.WriteString(r.flush())
			if b.String() != tc.want {
				t.Errorf("renumber(%q) in pieces of %d = %q, want %q", tc.in, size, b.String(), tc.want)
			}
		}
	}
}
