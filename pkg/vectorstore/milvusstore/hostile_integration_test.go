//go:build integration

package milvusstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// hostileStrings are ids and attribute values that would break or change an
// expression if they were not escaped: quotes, backslashes, escape-looking
// text, control characters, Han characters (the server rewrites them to
// \uXXXX internally), injections.
var hostileStrings = []string{
	`plain`,
	`with "double" quotes`,
	`with 'single' quotes`,
	`back\slash`,
	`trailing backslash\`,
	`\\double`,
	`\"escaped quote`,
	`\u0041 looks like an escape`,
	`\n looks like a newline`,
	"real\nnewline\tand tab\r",
	"control \x01\x1f\x7f",
	`漢字 and \u6f22`,
	`emoji 🚀`,
	`"] or id != "`,
	`" or 1 == 1 or id == "`,
	`attrs["k"] == "v"`,
	`%s %d {}`,
}

// hostileID is str as an ID. Single quotes are replaced: Milvus Lite 2.5.1
// fails an Upsert whose primary key contains one ("internal error"; its
// local storage does not escape it); such ids still work in filters, Get
// and Delete, which the str+"'" lookups check. Line breaks are replaced:
// the driver refuses them in IDs (they cannot be written in an expression).
// Attribute values and texts keep everything.
func hostileID(str string) string {
	return strings.NewReplacer("'", "`", "\n", " ", "\r", " ").Replace(str)
}

func recIDs(recs []vectorstore.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

func TestHostileStrings(t *testing.T) {
	ctx := context.Background()
	s := open(t, serverAddr(t))
	coll := fmt.Sprintf("hostile_%d", time.Now().UnixNano()%1_000_000)
	if err := s.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: coll, Dim: 2}); err != nil {
		t.Fatalf("EnsureCollection: %v", err)
	}
	t.Cleanup(func() { _ = s.DropCollection(context.Background(), coll) })
	recs := make([]vectorstore.Record, len(hostileStrings))
	for i, str := range hostileStrings {
		recs[i] = vectorstore.Record{ID: hostileID(str), Vector: []float32{1, float32(i)}, Text: str,
			Attrs: map[string]string{"v": str, str: "key"}}
	}
	if err := s.Upsert(ctx, coll, recs); err != nil {
		t.Fatalf("Upsert: %v", err)
	}
	for i, str := range hostileStrings {
		t.Run(fmt.Sprintf("%d", i), func(t *testing.T) {
			id := hostileID(str)
			got, err := s.Get(ctx, coll, []string{id, str + "'missing"})
			if err != nil || len(got) != 1 || got[0].ID != id || got[0].Text != str || got[0].Attrs["v"] != str {
				t.Fatalf("Get(%q) = %+v, %v", str, got, err)
			}
			filters := map[string]vectorstore.Filter{
				"ids":       {IDs: []string{id, str + "\n"}},
				"attr":      {Attrs: map[string]string{"v": str}},
				"attr key":  {Attrs: map[string]string{str: "key"}},
				"ids+attrs": {IDs: []string{id, "other", str + "'"}, Attrs: map[string]string{"v": str}},
			}
			// A value with a line break, or a key with a control
			// character, cannot be filtered on: an error, not a silent empty
			// result.
			var refused []string
			if strings.ContainsAny(str, "\r\n") {
				refused = append(refused, "attr", "attr key", "ids+attrs")
			} else if strings.ContainsFunc(str, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				refused = append(refused, "attr key")
			}
			for _, name := range refused {
				if _, err := s.Search(ctx, coll, []float32{1, 0}, 3, filters[name]); !errors.Is(err, vectorstore.ErrInvalidArgument) {
					t.Fatalf("Search with %s filter for %q = %v, want ErrInvalidArgument", name, str, err)
				}
				delete(filters, name)
			}
			for name, f := range filters {
				hits, err := s.Search(ctx, coll, []float32{1, 0}, len(hostileStrings), f)
				if err != nil || len(hits) != 1 || hits[0].ID != id {
					ids := make([]string, len(hits))
					for j, h := range hits {
						ids[j] = h.ID
					}
					t.Fatalf("Search with %s filter for %q = %q, %v; want exactly that record", name, str, ids, err)
				}
			}
		})
	}
	// Only the ids that cannot be stored are refused, with the whole batch.
	err := s.Upsert(ctx, coll, []vectorstore.Record{{ID: "fine", Vector: []float32{1, 1}}, {ID: "line\nbreak", Vector: []float32{1, 1}}})
	if !errors.Is(err, vectorstore.ErrInvalidArgument) {
		t.Fatalf("Upsert of an ID with a line break = %v, want ErrInvalidArgument", err)
	}
	if got, err := s.Get(ctx, coll, []string{"fine", "line\nbreak"}); err != nil || len(got) != 0 {
		t.Fatalf("Get after a refused batch = %+v, %v; want nothing", got, err)
	}
	if hits, err := s.Search(ctx, coll, []float32{1, 0}, 3, vectorstore.Filter{IDs: []string{"line\nbreak"}}); err != nil || len(hits) != 0 {
		t.Fatalf("Search restricted to an unstorable ID = %+v, %v; want nothing", hits, err)
	}
	// Deleting each hostile id removes exactly that record.
	for i, str := range hostileStrings {
		if err := s.Delete(ctx, coll, []string{hostileID(str), str + "'"}); err != nil {
			t.Fatalf("Delete(%q): %v", str, err)
		}
		n, err := s.Count(ctx, coll)
		if err != nil || n != len(hostileStrings)-i-1 {
			t.Fatalf("Count after deleting %q = %d, %v; want %d", str, n, err, len(hostileStrings)-i-1)
		}
	}
	if got, err := s.Get(ctx, coll, recIDs(recs)); err != nil || len(got) != 0 {
		t.Fatalf("Get after deleting all = %+v, %v", got, err)
	}
}
