package embedded

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/vectorstore"
)

func TestAttrSetMatch(t *testing.T) {
	long := strings.Repeat("x", attrInlineMax+1)
	in := make(attrInterner)
	s := compactAttrs(map[string]string{"level": "1", "json": long, "title": "", "doc": "d7"}, in)
	tests := []struct {
		key, want string
		got       attrMatch
	}{
		{"level", "1", attrYes},
		{"level", "2", attrNo},
		{"doc", "d7", attrYes},
		{"title", "", attrYes},
		{"missing", "", attrNo},
		{"json", "short", attrNo}, // a long value cannot equal it
		{"json", long, attrCheck},
		{"json", long + "y", attrCheck},
	}
	for _, tc := range tests {
		if got := s.match(tc.key, tc.want); got != tc.got {
			t.Errorf("match(%q, %.10q) = %d, want %d", tc.key, tc.want, got, tc.got)
		}
	}
	for i := 1; i < len(s.kv); i += 2 {
		if len(s.kv[i]) > attrInlineMax {
			t.Fatalf("a long value is kept in memory: %.10q…", s.kv[i])
		}
	}
	many := make(map[string]string)
	for i := range 70 {
		many[fmt.Sprintf("k%02d", i)] = long + fmt.Sprint(i)
	}
	m := compactAttrs(many, in)
	if m.match("k05", long+"5") != attrCheck || m.match("k69", long+"69") != attrYes || m.match("k69", long) != attrNo {
		t.Fatal("pairs past the 64th must be kept and compared in memory")
	}
}

// TestFilterOnLongAttribute: a filter naming a value too long for memory is
// decided from bbolt, for the matching record only; short values are
// decided from memory.
func TestFilterOnLongAttribute(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, t.TempDir())
	if err := s.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: "c", Dim: 4}); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("{\"report\":1}", 20)
	recs := []vectorstore.Record{
		{ID: "a", Vector: []float32{1, 0, 0, 0}, Attrs: map[string]string{"json": long, "level": "0"}},
		{ID: "b", Vector: []float32{0.9, 0.1, 0, 0}, Attrs: map[string]string{"json": long + " ", "level": "1"}},
		{ID: "c", Vector: []float32{0, 1, 0, 0}, Attrs: map[string]string{"level": "1"}},
	}
	if err := s.Upsert(ctx, "c", recs); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		attrs map[string]string
		want  string
	}{
		{map[string]string{"json": long}, "a"},
		{map[string]string{"json": long + " "}, "b"},
		{map[string]string{"json": long, "level": "1"}, ""},
		{map[string]string{"level": "1"}, "b,c"},
		{map[string]string{"json": "short"}, ""},
	} {
		hits, err := s.Search(ctx, "c", []float32{1, 0, 0, 0}, 5, vectorstore.Filter{Attrs: tc.attrs})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range hits {
			ids = append(ids, h.ID)
			if h.Attrs["json"] != recs[map[string]int{"a": 0, "b": 1, "c": 2}[h.ID]].Attrs["json"] {
				t.Fatalf("hit %s came back without its long attribute", h.ID)
			}
		}
		if got := strings.Join(ids, ","); got != tc.want {
			t.Errorf("filter %.30v: hits %q, want %q", tc.attrs, got, tc.want)
		}
	}
}
