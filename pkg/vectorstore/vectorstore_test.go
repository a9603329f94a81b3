package vectorstore_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/vectorstore"
)

func TestValidateCollectionName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"a", true}, {"_x9", true}, {"Abc_123", true},
		{"", false}, {"9abc", false}, {"a-b", false}, {"a b", false}, {"a/b", false}, {"é", false},
		{strings.Repeat("a", vectorstore.MaxNameLen), true}, {strings.Repeat("a", vectorstore.MaxNameLen+1), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := vectorstore.ValidateCollectionName(tc.name)
			if tc.ok != (err == nil) {
				t.Fatalf("ValidateCollectionName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
			}
			if err != nil && !errors.Is(err, vectorstore.ErrInvalidArgument) {
				t.Fatalf("error %v is not ErrInvalidArgument", err)
			}
		})
	}
}

func TestValidateVector(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	tests := []struct {
		name string
		v    []float32
		want error
	}{
		{"ok", []float32{1, 0, 0}, nil},
		{"short", []float32{1, 0}, vectorstore.ErrDimensionMismatch},
		{"long", []float32{1, 0, 0, 0}, vectorstore.ErrDimensionMismatch},
		{"zero", []float32{0, 0, 0}, vectorstore.ErrInvalidArgument},
		{"nan", []float32{1, nan, 0}, vectorstore.ErrInvalidArgument},
		{"inf", []float32{inf, 0, 0}, vectorstore.ErrInvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := vectorstore.ValidateVector(tc.v, 3)
			if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("ValidateVector(%v) = %v, want %v", tc.v, err, tc.want)
			}
		})
	}
}

func TestSortHits(t *testing.T) {
	hit := func(id string, s float64) vectorstore.Hit {
		return vectorstore.Hit{Record: vectorstore.Record{ID: id}, Score: s}
	}
	hits := []vectorstore.Hit{hit("b", 0.5), hit("c", 0.9), hit("a", 0.5), hit("d", -1), hit("a0", 0.9)}
	vectorstore.SortHits(hits)
	var got []string
	for _, h := range hits {
		got = append(got, h.ID)
	}
	if want := []string{"a0", "c", "a", "b", "d"}; !slices.Equal(got, want) {
		t.Fatalf("SortHits = %v, want %v", got, want)
	}
}

func TestFilter(t *testing.T) {
	attrs := map[string]string{"lang": "en", "kind": "chunk"}
	tests := []struct {
		name  string
		f     vectorstore.Filter
		zero  bool
		match bool
	}{
		{"zero", vectorstore.Filter{}, true, true},
		{"ids only", vectorstore.Filter{IDs: []string{"x"}}, false, true},
		{"one attr", vectorstore.Filter{Attrs: map[string]string{"lang": "en"}}, false, true},
		{"two attrs", vectorstore.Filter{Attrs: map[string]string{"lang": "en", "kind": "chunk"}}, false, true},
		{"wrong value", vectorstore.Filter{Attrs: map[string]string{"lang": "de"}}, false, false},
		{"missing key", vectorstore.Filter{Attrs: map[string]string{"topic": ""}}, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.f.IsZero() != tc.zero || tc.f.MatchAttrs(attrs) != tc.match {
				t.Fatalf("IsZero=%v MatchAttrs=%v, want %v %v", tc.f.IsZero(), tc.f.MatchAttrs(attrs), tc.zero, tc.match)
			}
		})
	}
}
