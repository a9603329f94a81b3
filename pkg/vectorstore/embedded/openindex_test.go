package embedded

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// checkOpenIndex checks a closed store's open index against its records:
// one entry per record, each the entry of the record as it is, and no
// entry without a record.
func checkOpenIndex(dir string) error {
	db, err := bolt.Open(filepath.Join(dir, dbFile), 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		return fmt.Errorf("opening record database: %w", err)
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketCollections).ForEachBucket(func(name []byte) error {
			b := tx.Bucket(bucketCollections).Bucket(name)
			rb, ob := b.Bucket(bucketRecords), b.Bucket(bucketOpenIndex)
			if ob == nil {
				return fmt.Errorf("collection %q has no open index", name)
			}
			if got, want := b.Get(keyOpenIndexSeq), seqKey(b.Sequence()); !bytes.Equal(got, want) {
				return fmt.Errorf("collection %q: open index complete at %x, sequence %x", name, got, want)
			}
			if rn, on := rb.Stats().KeyN, ob.Stats().KeyN; rn != on {
				return fmt.Errorf("collection %q: %d records, %d open index entries", name, rn, on)
			}
			return rb.ForEach(func(k, v []byte) error {
				want, err := recordEntry(v)
				if err != nil {
					return fmt.Errorf("collection %q record %q: %w", name, k, err)
				}
				if got := ob.Get(k); !bytes.Equal(got, want) {
					return fmt.Errorf("collection %q record %q: open index entry %x, want %x", name, k, got, want)
				}
				return nil
			})
		})
	})
}

func mustCheckOpenIndex(t *testing.T, dir string) {
	t.Helper()
	if err := checkOpenIndex(dir); err != nil {
		t.Fatal(err)
	}
}

// dropOpenIndex removes a closed store's open index, which leaves the file
// as the code before it wrote it.
func dropOpenIndex(t *testing.T, dir string) {
	t.Helper()
	updateClosed(t, dir, "dropping the open index", func(tx *bolt.Tx) error {
		return tx.Bucket(bucketCollections).ForEachBucket(func(name []byte) error {
			return tx.Bucket(bucketCollections).Bucket(name).DeleteBucket(bucketOpenIndex)
		})
	})
}

// updateClosed runs fn in one write transaction on a closed store's file.
func updateClosed(t *testing.T, dir, doing string, fn func(*bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, dbFile), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(fn); err != nil {
		t.Fatalf("%s: %v", doing, err)
	}
}

// openState is a collection's memory state as Open rebuilds it.
type openState struct {
	seq     uint64
	attrs   attrSet
	textLen uint64
	vec     qvec
}

func stateOf(t *testing.T, s *Store, coll string) map[string]openState {
	t.Helper()
	c, err := s.s.coll(coll)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]openState, len(c.dense.docs))
	for id, d := range c.dense.docs {
		out[id] = openState{seq: d.seq, attrs: d.attrs, textLen: c.lstats.lens[id], vec: d.vec}
	}
	return out
}

func equalState(a, b map[string]openState) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d records, want %d", len(a), len(b))
	}
	for id, w := range b {
		g, ok := a[id]
		switch {
		case !ok:
			return fmt.Errorf("record %s missing", id)
		case g.seq != w.seq || g.textLen != w.textLen:
			return fmt.Errorf("record %s: seq %d, text length %d; want %d, %d", id, g.seq, g.textLen, w.seq, w.textLen)
		case !slices.Equal(g.attrs.kv, w.attrs.kv) || g.attrs.long != w.attrs.long:
			return fmt.Errorf("record %s: attributes %+v, want %+v", id, g.attrs, w.attrs)
		case !equalQ(g.vec, w.vec):
			return fmt.Errorf("record %s: vector differs", id)
		}
	}
	return nil
}

// writeOpenIndexCorpus fills collection c (lexical, with attributes some
// longer than memory keeps) with n records, then replaces and deletes some.
func writeOpenIndexCorpus(t *testing.T, s *Store, r *rand.Rand, n int) {
	t.Helper()
	ctx := context.Background()
	if err := s.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: "c", Dim: 8, Lexical: true}); err != nil {
		t.Fatal(err)
	}
	rs := recs(r, "o", n, "opening words")
	for i := range rs {
		rs[i].Attrs = chunkAttrs(i)
	}
	if err := s.Upsert(ctx, "c", rs); err != nil {
		t.Fatal(err)
	}
	if err := s.Upsert(ctx, "c", recs(r, "o", 5, "replaced text")); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "c", []string{"o010", "o011"}); err != nil {
		t.Fatal(err)
	}
}

// TestOpenReadsOnlyMissingRecords: an open reads whole only the records
// whose vector the snapshot lacks; with a snapshot as new as the records,
// none, and the state it rebuilds is the one the writes left.
func TestOpenReadsOnlyMissingRecords(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(21, 21))
	opts := []Option{WithExactThreshold(0)}
	s := mustOpen(t, dir, opts...)
	writeOpenIndexCorpus(t, s, r, 300)
	want := stateOf(t, s, "c")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mustCheckOpenIndex(t, dir)
	snap := filepath.Join(dir, collsDir, "c", snapshotFile)
	old, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}

	s = mustOpen(t, dir, opts...)
	if c, _ := s.s.coll("c"); c.openDecodes != 0 {
		t.Fatalf("open with a current snapshot read %d records whole, want 0", c.openDecodes)
	}
	if err := equalState(stateOf(t, s, "c"), want); err != nil {
		t.Fatalf("after reopen: %v", err)
	}
	// Writes after the snapshot: 20 new records, 3 replaced, 2 deleted.
	if err := s.Upsert(ctx, "c", append(recs(r, "n", 20, "newer words"), recs(r, "o", 3, "again replaced")...)); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "c", []string{"o020", "n000"}); err != nil {
		t.Fatal(err)
	}
	want = stateOf(t, s, "c")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mustCheckOpenIndex(t, dir)
	if err := os.WriteFile(snap, old, 0o600); err != nil { // as if the process had crashed
		t.Fatal(err)
	}

	s = mustOpen(t, dir, opts...)
	c, _ := s.s.coll("c")
	if c.openDecodes != 19+3 {
		t.Fatalf("open with an older snapshot read %d records whole, want the 22 it lacks", c.openDecodes)
	}
	// Dead: the snapshot's 5 replaced and 2 deleted, then o000-o002
	// replaced again and o020 deleted.
	checkGraph(t, s, "c", 7+3+1)
	if err := equalState(stateOf(t, s, "c"), want); err != nil {
		t.Fatalf("after reopen with an older snapshot: %v", err)
	}
}

// TestOpenMigratesFileWithoutOpenIndex: a file written before the open
// index gains one on open, and loads as it would have with it.
func TestOpenMigratesFileWithoutOpenIndex(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	opts := []Option{WithExactThreshold(0)}
	s := mustOpen(t, dir, opts...)
	writeOpenIndexCorpus(t, s, rand.New(rand.NewPCG(22, 22)), 200)
	want := stateOf(t, s, "c")
	q := unitVec(rand.New(rand.NewPCG(23, 23)), 8)
	f := vectorstore.Filter{Attrs: map[string]string{"aliases": chunkAttrs(0)["aliases"]}} // a long value
	wantDense, err := s.Search(ctx, "c", q, 5, f)
	if err != nil || len(wantDense) == 0 {
		t.Fatalf("Search = %v, %v", wantDense, err)
	}
	wantText, err := s.SearchText(ctx, "c", "replaced words", 10, vectorstore.Filter{})
	if err != nil || len(wantText) == 0 {
		t.Fatalf("SearchText = %v, %v", wantText, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	dropOpenIndex(t, dir)
	if err := checkOpenIndex(dir); err == nil {
		t.Fatal("the open index is still there")
	}

	s = mustOpen(t, dir, opts...)
	if err := equalState(stateOf(t, s, "c"), want); err != nil {
		t.Fatalf("after migration: %v", err)
	}
	gotDense, err := s.Search(ctx, "c", q, 5, f)
	if err != nil || !slices.Equal(recIDs(hitRecords(gotDense)), recIDs(hitRecords(wantDense))) {
		t.Fatalf("Search after migration = %v, %v; want %v", gotDense, err, wantDense)
	}
	gotText, err := s.SearchText(ctx, "c", "replaced words", 10, vectorstore.Filter{})
	if err != nil || len(gotText) != len(wantText) {
		t.Fatalf("SearchText after migration = %v, %v; want %v", gotText, err, wantText)
	}
	for i := range gotText {
		if gotText[i].ID != wantText[i].ID || gotText[i].Score != wantText[i].Score {
			t.Fatalf("SearchText hit %d after migration: %s %v, want %s %v", i, gotText[i].ID, gotText[i].Score, wantText[i].ID, wantText[i].Score)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mustCheckOpenIndex(t, dir)
	s = mustOpen(t, dir, opts...)
	if c, _ := s.s.coll("c"); c.openDecodes != 0 {
		t.Fatalf("open after migration read %d records whole, want 0", c.openDecodes)
	}
}

// writeAsOldBinary changes a closed store as a binary without the open
// index would: it upserts one record and deletes another (with its
// deletion marker) in collection c, leaving openindex as it was.
func writeAsOldBinary(t *testing.T, dir string, add vectorstore.Record, del string) {
	t.Helper()
	updateClosed(t, dir, "writing as an older binary", func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCollections).Bucket([]byte("c"))
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		rec := storedRecord{seq: seq, vector: add.Vector, text: add.Text, textLen: 2, attrs: add.Attrs}
		if err := b.Bucket(bucketRecords).Put([]byte(add.ID), encodeRecord(rec)); err != nil {
			return err
		}
		if err := b.Bucket(bucketRecords).Delete([]byte(del)); err != nil {
			return err
		}
		if seq, err = b.NextSequence(); err != nil {
			return err
		}
		return b.Bucket(bucketTombs).Put(seqKey(seq), []byte(del))
	})
}

// TestOpenAfterOlderBinaryWrote: records an older binary wrote or deleted
// after the open index are not lost or resurrected: the index is rebuilt.
func TestOpenAfterOlderBinaryWrote(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	opts := []Option{WithExactThreshold(0)}
	r := rand.New(rand.NewPCG(24, 24))
	s := mustOpen(t, dir, opts...)
	writeOpenIndexCorpus(t, s, r, 100)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	add := vectorstore.Record{ID: "z000", Vector: unitVec(r, 8), Text: "older binary", Attrs: map[string]string{"k": "v"}}
	writeAsOldBinary(t, dir, add, "o050")

	s = mustOpen(t, dir, opts...)
	if n, err := s.Count(ctx, "c"); err != nil || n != 98 {
		t.Fatalf("Count = %d, %v; want 98", n, err)
	}
	hits, err := s.Search(ctx, "c", add.Vector, 1, vectorstore.Filter{Attrs: map[string]string{"k": "v"}})
	if err != nil || len(hits) != 1 || hits[0].ID != add.ID {
		t.Fatalf("Search for the older binary's record = %v, %v", hits, err)
	}
	if got, err := s.Get(ctx, "c", []string{"o050"}); err != nil || len(got) != 0 {
		t.Fatalf("Get of the record the older binary deleted = %v, %v", got, err)
	}
	checkGraph(t, s, "c", 7+1) // writeOpenIndexCorpus's dead nodes and o050
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mustCheckOpenIndex(t, dir)
}
