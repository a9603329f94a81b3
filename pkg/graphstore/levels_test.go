package graphstore

import (
	"slices"
	"testing"
)

func TestShownLevels(t *testing.T) {
	for stored, want := range []int{2, 1, 0} {
		if got := ShownLevel(stored, 3); got != want || ShownLevel(got, 3) != stored {
			t.Errorf("ShownLevel(%d, 3) = %d, want %d, and back", stored, got, want)
		}
	}
	for _, tc := range []struct {
		ids    []string
		levels int
		want   []string
	}{
		{[]string{"c0-a", "c1-b", "c2-c"}, 3, []string{"c2-c", "c1-b", "c0-a"}},
		{[]string{"c0-a", ""}, 2, []string{"", "c0-a"}},
		{[]string{"c0-a"}, 2, []string{"", "c0-a"}}, // a level the entity was not placed at
		{nil, 3, nil},
		{[]string{"c0-a"}, 0, nil},
	} {
		if got := ShownCommunities(tc.ids, tc.levels); !slices.Equal(got, tc.want) {
			t.Errorf("ShownCommunities(%q, %d) = %q, want %q", tc.ids, tc.levels, got, tc.want)
		}
	}
}
