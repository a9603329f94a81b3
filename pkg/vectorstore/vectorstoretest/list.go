package vectorstoretest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// beyondSearchCap is more records than any driver's search returns at once
// (Milvus caps k, and a query's limit, at 16,384), so that only a working
// List can enumerate the collection.
const beyondSearchCap = 16384 + 616

// listAll pages through the collection limit IDs at a time. It fails the
// test when a cursor does not advance, which would loop forever.
func listAll(t *testing.T, s vectorstore.Store, coll string, limit int) []string {
	t.Helper()
	var all []string
	after := ""
	for {
		page, next, err := s.List(context.Background(), coll, after, limit)
		if err != nil {
			t.Fatalf("List(after %q, limit %d): %v", after, limit, err)
		}
		if len(page) > limit {
			t.Fatalf("List(limit %d) returned %d IDs", limit, len(page))
		}
		all = append(all, page...)
		if next == "" {
			return all
		}
		if next <= after || len(page) == 0 || next != page[len(page)-1] {
			t.Fatalf("List(after %q) = %d IDs, next %q: the cursor must be the last ID returned, past the previous one", after, len(page), next)
		}
		after = next
	}
}

func (h *harness) testList(t *testing.T) {
	ctx := context.Background()
	s, name := h.setup(t, h.f.Lexical)
	seeded(t, s, name, 10, 11)
	// IDs whose byte order differs from other orders: upper before lower
	// case, a shorter prefix first, multi-byte UTF-8 last.
	odd := []string{"Zeta", "r00", "r0000", "éclair", "日本"}
	for i, id := range odd {
		v := make([]float32, dim)
		v[i] = 1
		upsert(t, s, name, vectorstore.Record{ID: id, Vector: v, Text: "odd record"})
	}
	if err := s.Delete(ctx, name, []string{"r003", "r007"}); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	want := []string{"Zeta", "r00", "r000", "r0000", "r001", "r002", "r004", "r005", "r006", "r008", "r009", "éclair", "日本"}
	for _, limit := range []int{1, 3, 13, 100} {
		if got := listAll(t, s, name, limit); !slices.Equal(got, want) {
			t.Fatalf("List in pages of %d = %v, want %v", limit, got, want)
		}
	}
	tests := []struct {
		name, after string
		limit       int
		want        []string
		next        string
	}{
		{"first page", "", 2, []string{"Zeta", "r00"}, "r00"},
		{"after a present ID", "r002", 3, []string{"r004", "r005", "r006"}, "r006"},
		{"after an absent ID", "r003", 2, []string{"r004", "r005"}, "r005"},
		{"after a deleted ID", "r007", 10, []string{"r008", "r009", "éclair", "日本"}, ""},
		{"the last page exactly", "r009", 2, []string{"éclair", "日本"}, ""},
		{"after the last ID", "日本", 5, []string{}, ""},
		{"after every ID", "\U0010FFFF", 5, []string{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, next, err := s.List(ctx, name, tc.after, tc.limit)
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			// A driver may stop a page early, never return more or skip.
			if len(got) > len(tc.want) || !slices.Equal(got, tc.want[:len(got)]) || (len(got) == len(tc.want) && next != tc.next) {
				t.Fatalf("List(after %q, %d) = %q, next %q; want %q, next %q", tc.after, tc.limit, got, next, tc.want, tc.next)
			}
		})
	}
	if _, _, err := s.List(ctx, name, "", 0); !errors.Is(err, vectorstore.ErrInvalidArgument) {
		t.Fatalf("List with limit 0 = %v, want ErrInvalidArgument", err)
	}
}

// testListBeyondSearchCap enumerates a collection larger than any search
// can return, with records deleted and replaced on the way.
func (h *harness) testListBeyondSearchCap(t *testing.T) {
	ctx := context.Background()
	s, name := h.setup(t, false)
	r := rand.New(rand.NewPCG(12, 1))
	want := make([]string, 0, beyondSearchCap)
	const batch = 1000
	for start := 0; start < beyondSearchCap; start += batch {
		recs := make([]vectorstore.Record, 0, batch)
		for i := start; i < min(start+batch, beyondSearchCap); i++ {
			// Written in an order unrelated to the IDs' order.
			id := fmt.Sprintf("e%08x-%05d", r.Uint32(), i)
			recs = append(recs, vectorstore.Record{ID: id, Vector: randVec(r)})
			want = append(want, id)
		}
		upsert(t, s, name, recs...)
	}
	slices.Sort(want)
	stale := []string{want[0], want[4000], want[len(want)-1]}
	if err := s.Delete(ctx, name, stale); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	want = slices.DeleteFunc(want, func(id string) bool { return slices.Contains(stale, id) })
	upsert(t, s, name, vectorstore.Record{ID: want[100], Vector: randVec(r)}) // replaced, listed once
	if n, err := s.Count(ctx, name); err != nil || n != len(want) {
		t.Fatalf("Count = %d, %v; want %d", n, err, len(want))
	}
	for _, limit := range []int{5000, beyondSearchCap + 1} {
		got := listAll(t, s, name, limit)
		if len(got) != len(want) {
			t.Fatalf("List in pages of %d gave %d IDs, want %d", limit, len(got), len(want))
		}
		if !slices.Equal(got, want) {
			i := 0
			for i < len(got) && got[i] == want[i] {
				i++
			}
			t.Fatalf("List in pages of %d differs at %d: %q, want %q", limit, i, got[i], want[i])
		}
	}
}
