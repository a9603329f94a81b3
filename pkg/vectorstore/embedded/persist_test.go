package embedded

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// denseOf returns a collection's dense index once its background snapshot,
// if any, is on disk.
func denseOf(t *testing.T, s *Store, coll string) *denseIndex {
	t.Helper()
	c, err := s.s.coll(coll)
	if err != nil {
		t.Fatal(err)
	}
	c.snapWG.Wait()
	return c.dense
}

// upsertBatches writes n records of dimension 8 in batches.
func upsertBatches(t *testing.T, s *Store, r *rand.Rand, n, batch int) {
	t.Helper()
	for i := 0; i < n; i += batch {
		rs := make([]vectorstore.Record, 0, batch)
		for j := i; j < min(i+batch, n); j++ {
			rs = append(rs, vectorstore.Record{ID: fmt.Sprintf("p%06d", j), Vector: unitVec(r, 8)})
		}
		if err := s.Upsert(context.Background(), "c", rs); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReopenLoadsGraph: a clean restart loads the graph as it was (same
// nodes, entry point and neighbour lists) instead of building one.
func TestReopenLoadsGraph(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := mustOpen(t, dir, WithExactThreshold(0))
	if err := s.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: "c", Dim: 8}); err != nil {
		t.Fatal(err)
	}
	upsertBatches(t, s, rand.New(rand.NewPCG(7, 7)), 600, 100)
	before := denseOf(t, s, "c").graph
	q := unitVec(rand.New(rand.NewPCG(8, 8)), 8)
	want, err := s.Search(ctx, "c", q, 5, vectorstore.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = mustOpen(t, dir, WithExactThreshold(0))
	x := denseOf(t, s, "c")
	if x.builds != 0 || x.replayed != 0 {
		t.Fatalf("reopen built the graph %d times and replayed %d records, want 0 and 0", x.builds, x.replayed)
	}
	g := x.graph
	if g.entry != before.entry || g.top != before.top || !slices.Equal(g.keys, before.keys) {
		t.Fatalf("graph header or keys differ after reopen")
	}
	for i := range int32(g.len()) {
		if got, want := g.lists(i), before.lists(i); !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("node %d: neighbour lists %v after reopen, %v before", i, got, want)
		}
	}
	got, err := s.Search(ctx, "c", q, 5, vectorstore.Filter{})
	if err != nil || !slices.Equal(recIDs(hitRecords(got)), recIDs(hitRecords(want))) {
		t.Fatalf("Search after reopen = %v, %v; want %v", got, err, want)
	}
}

func hitRecords(hits []vectorstore.Hit) []vectorstore.Record {
	out := make([]vectorstore.Record, len(hits))
	for i, h := range hits {
		out[i] = h.Record
	}
	return out
}

// TestCrashAfterBuildLoadsGraph: without Close (the state a kill -9 leaves)
// the next open loads the snapshot written after the graph build and the
// automatic ones, and replays at most the insertions since the last.
func TestCrashAfterBuildLoadsGraph(t *testing.T) {
	n := 10_000
	if raceEnabled {
		n = 6_000
	}
	live, crashed := t.TempDir(), t.TempDir()
	opts := []Option{WithExactThreshold(1000), WithHNSW(8, 40, 0)}
	s := mustOpen(t, live, opts...)
	if err := s.EnsureCollection(context.Background(), vectorstore.CollectionSpec{Name: "c", Dim: 8}); err != nil {
		t.Fatal(err)
	}
	const batch = 500
	upsertBatches(t, s, rand.New(rand.NewPCG(9, 9)), n, batch)
	x := denseOf(t, s, "c")
	if x.builds != 1 {
		t.Fatalf("%d graph builds while inserting, want 1", x.builds)
	}
	pending := x.sinceSnap
	copyDir(t, live, crashed) // no Close: no snapshot from it

	s2 := mustOpen(t, crashed, opts...)
	y := denseOf(t, s2, "c")
	if y.builds != 0 {
		t.Fatal("the open after a crash rebuilt the graph instead of loading its snapshot")
	}
	if y.replayed != pending || pending > max(autoSnapshotMin, n/autoSnapshotShare)+batch {
		t.Fatalf("replayed %d records (%d inserted since the last snapshot), want them and at most a quarter", y.replayed, pending)
	}
	checkGraph(t, s2, "c", 0)
}

// TestBadSnapshotRebuilds: a snapshot that is damaged, of another incarnation
// of the collection, or newer than the records is ignored: the graph is
// rebuilt from bbolt, never loaded.
func TestBadSnapshotRebuilds(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, snap, foreign string)
	}{
		{"bit flip", func(t *testing.T, snap, _ string) {
			b, err := os.ReadFile(snap)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/3] ^= 0x01
			if err := os.WriteFile(snap, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"torn", func(t *testing.T, snap, _ string) {
			st, err := os.Stat(snap)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(snap, st.Size()/2); err != nil {
				t.Fatal(err)
			}
		}},
		{"unknown version", func(t *testing.T, snap, _ string) {
			b, err := os.ReadFile(snap)
			if err != nil {
				t.Fatal(err)
			}
			copy(b, "GRVSHNS9") // intact otherwise, checksum included
			binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], crcTable))
			if err := os.WriteFile(snap, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"other incarnation", func(t *testing.T, snap, foreign string) {
			if err := copyFile(foreign, snap); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir, other := t.TempDir(), t.TempDir()
			for _, d := range []string{dir, other} { // same records, two incarnations
				s := mustOpen(t, d, WithExactThreshold(0))
				if err := s.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: "c", Dim: 8}); err != nil {
					t.Fatal(err)
				}
				upsertBatches(t, s, rand.New(rand.NewPCG(10, 10)), 300, 100)
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
			tc.damage(t, filepath.Join(dir, collsDir, "c", snapshotFile), filepath.Join(other, collsDir, "c", snapshotFile))
			s := mustOpen(t, dir, WithExactThreshold(0))
			if x := denseOf(t, s, "c"); x.builds != 1 || x.replayed != 0 {
				t.Fatalf("builds %d, replayed %d; want a rebuild", x.builds, x.replayed)
			}
			checkGraph(t, s, "c", 0)
		})
	}
}

// TestNeighbourListsStayAtCapacity: lists never hold room for more links
// than a node may have (appending to a full list used to double it).
func TestNeighbourListsStayAtCapacity(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	g := newANNGraph(4, 20)
	for i, v := range clustered(r, 2000, 8) {
		g.insert(uint64(i), quantizeUnit(v))
	}
	for i := range int32(g.len()) {
		for l := range int(g.levels[i]) + 1 {
			nb := g.neighbours(i, l)
			maxLinks := g.m
			if l == 0 {
				maxLinks = g.m0
			}
			if len(nb) > maxLinks || cap(nb) > maxLinks {
				t.Fatalf("node %d layer %d: len %d cap %d, max %d", i, l, len(nb), cap(nb), maxLinks)
			}
		}
	}
}

// TestDecodeRecordLean: the open's lean decoding leaves out exactly the
// fields it is told to.
func TestDecodeRecordLean(t *testing.T) {
	in := storedRecord{seq: 42, vector: []float32{1, 2, 3}, text: "some text", textLen: 2, attrs: map[string]string{"k": "v"}}
	b := encodeRecord(in)
	lean, err := decodeRecordLean(b, true, true)
	if err != nil || lean.vector != nil || lean.text != "" || lean.seq != 42 || lean.textLen != 2 || lean.attrs["k"] != "v" {
		t.Fatalf("decodeRecordLean = %+v, %v", lean, err)
	}
	if _, err := decodeRecordLean(b[:len(b)-12], true, true); err == nil {
		t.Fatal("a truncated record decoded without its vector")
	}
}

// TestFutureSnapshotRebuilds: a snapshot covering records bbolt does not
// have (the database restored from an older copy) is not trusted.
func TestFutureSnapshotRebuilds(t *testing.T) {
	dir, saved := t.TempDir(), t.TempDir()
	r := rand.New(rand.NewPCG(12, 12))
	s := mustOpen(t, dir, WithExactThreshold(0))
	if err := s.EnsureCollection(context.Background(), vectorstore.CollectionSpec{Name: "c", Dim: 8}); err != nil {
		t.Fatal(err)
	}
	upsertBatches(t, s, r, 200, 100)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := copyFile(filepath.Join(dir, dbFile), filepath.Join(saved, dbFile)); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, dir, WithExactThreshold(0))
	upsertBatches(t, s, r, 300, 100) // replaces the 200 and adds 100: all newer
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := copyFile(filepath.Join(saved, dbFile), filepath.Join(dir, dbFile)); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, dir, WithExactThreshold(0))
	if x := denseOf(t, s, "c"); x.builds != 1 {
		t.Fatalf("builds %d, replayed %d; want a rebuild", x.builds, x.replayed)
	}
	checkGraph(t, s, "c", 0)
}
