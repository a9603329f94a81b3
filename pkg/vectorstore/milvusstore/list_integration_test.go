//go:build integration

package milvusstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// TestListAcrossSegments checks what List relies on (see List): a query with
// a limit returns the smallest matching primary keys in ascending byte order,
// also when the records lie in several flushed segments and a growing one,
// some were replaced (a delete and an insert inside Milvus) and some deleted,
// and IDs are written in an order unrelated to theirs.
func TestListAcrossSegments(t *testing.T) {
	addr := os.Getenv("GRAPHRAG_TEST_MILVUS_ADDR")
	if addr == "" {
		t.Skip("GRAPHRAG_TEST_MILVUS_ADDR is not set: start a server with scripts/integration/milvus/start.sh (make test-integration does)")
	}
	ctx := context.Background()
	s, err := Open(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	name := fmt.Sprintf("list_%d", time.Now().UnixNano()%1_000_000)
	if err := s.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: name, Dim: 4}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.DropCollection(context.Background(), name) })
	r := rand.New(rand.NewPCG(3, 3))
	var all []string
	for batch := range 6 {
		recs := make([]vectorstore.Record, 0, 1500)
		for i := range 1500 {
			id := fmt.Sprintf("%08x", r.Uint32())
			switch {
			case i%7 == 0:
				id = "é" + id
			case i%11 == 0:
				id = "Z" + id
			}
			recs = append(recs, vectorstore.Record{ID: id, Vector: []float32{1, float32(i), 2, 3}})
			all = append(all, id)
		}
		if err := s.Upsert(ctx, name, recs); err != nil {
			t.Fatal(err)
		}
		if batch == 3 { // replace records of flushed segments
			if err := s.Upsert(ctx, name, []vectorstore.Record{{ID: all[5], Vector: []float32{1, 1, 1, 1}}, {ID: all[1600], Vector: []float32{1, 1, 1, 1}}}); err != nil {
				t.Fatal(err)
			}
		}
		if batch < 5 && batch%2 == 0 { // the last batches stay in a growing segment
			if err := s.s.flush(ctx, name); err != nil {
				t.Fatal(err)
			}
		}
	}
	slices.Sort(all)
	all = slices.Compact(all)
	deleted := []string{all[3], all[100], all[2000], all[len(all)-1]}
	if err := s.Delete(ctx, name, deleted); err != nil {
		t.Fatal(err)
	}
	want := slices.DeleteFunc(slices.Clone(all), func(id string) bool { return slices.Contains(deleted, id) })
	for _, limit := range []int{7, 1000, 4096} {
		var got []string
		after := ""
		for pages := 0; ; pages++ {
			if pages > len(want)+1 {
				t.Fatalf("pages of %d: the cursor does not advance (after %q)", limit, after)
			}
			ids, next, err := s.List(ctx, name, after, limit)
			if err != nil {
				t.Fatalf("List(after %q, %d): %v", after, limit, err)
			}
			got = append(got, ids...)
			if next == "" {
				break
			}
			after = next
		}
		if !slices.Equal(got, want) {
			t.Fatalf("pages of %d: %d IDs listed, want %d (sorted: %v)", limit, len(got), len(want), slices.IsSorted(got))
		}
	}
}
