package boltgraph

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
	"go.uber.org/goleak"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/graphstoretest"
)

func TestMain(m *testing.M) {
	if os.Getenv(crashChildEnv) != "" {
		os.Exit(crashChild()) // the child of TestCrashRecovery, killed mid-way
	}
	code := m.Run()
	cleanupBenchGraph()
	cleanupRealGraph()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "graph.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	graphstoretest.Run(t, graphstoretest.Features{
		Persistent: true,
		Reopen: func(t *testing.T, s graphstore.Store) graphstore.Store {
			path := s.(*Store).Path()
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			re, err := Open(path)
			if err != nil {
				t.Fatalf("reopening: %v", err)
			}
			t.Cleanup(func() { _ = re.Close() })
			return re
		},
	}, func(t *testing.T) graphstore.Store { return openTemp(t) })
}

// This store leaves the lists out of a brief read: they are the lookups Brief
// exists to save (each a page read once the file outgrows memory).
func TestBriefReadsSkipLists(t *testing.T) {
	s := openTemp(t)
	batch := []graphstore.ChunkExtraction{{ChunkID: "c1",
		Entities:  []graphstore.EntityMention{{Key: "a", Name: "A", Description: "A leads."}, {Key: "b", Name: "B", Description: "B builds."}},
		Relations: []graphstore.RelationMention{{SourceKey: "a", TargetKey: "b", Description: "A funds B."}}}}
	if err := s.Merge(t.Context(), "k", batch); err != nil {
		t.Fatal(err)
	}
	ents, err := s.Entities(t.Context(), "k", []string{"a", "b"}, graphstore.Brief)
	if err != nil || len(ents) != 2 {
		t.Fatalf("entities %v, %v", ents, err)
	}
	rels, err := s.RelationshipsAmong(t.Context(), "k", []string{"a", "b"}, graphstore.Brief)
	if err != nil || len(rels) != 1 {
		t.Fatalf("relationships %v, %v", rels, err)
	}
	for _, e := range ents {
		if e.Description == "" || e.ChunkIDs != nil || e.Descriptions != nil {
			t.Errorf("brief entity %+v: want a description and no lists", e)
		}
	}
	if r := rels[0]; r.Description == "" || r.ChunkIDs != nil || r.Descriptions != nil {
		t.Errorf("brief relationship %+v: want a description and no lists", r)
	}
}

func TestOpenOptions(t *testing.T) {
	t.Run("file mode", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "mode.db")
		s, err := Open(path, WithFileMode(0o640))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o640 {
			t.Errorf("file mode = %o, want 640", got)
		}
	})
	t.Run("lock held elsewhere", func(t *testing.T) {
		s := openTemp(t)
		// The file lock is per open file, so a second Open conflicts even here.
		s2, err := Open(s.Path(), WithLockTimeout(20*time.Millisecond))
		if err == nil {
			s2.Close()
			t.Fatal("second Open of a locked file succeeded")
		}
		if !errors.Is(err, berrors.ErrTimeout) {
			t.Errorf("second Open error = %v, want a lock timeout", err)
		}
		if err := s.Ping(t.Context()); err != nil {
			t.Errorf("first store after failed second Open: %v", err)
		}
	})
	t.Run("other layout version", func(t *testing.T) {
		s := openTemp(t)
		if err := s.s.db.Update(func(tx *bolt.Tx) error {
			return tx.Bucket(bucketInfo).Put(keyFormat, []byte("99"))
		}); err != nil {
			t.Fatal(err)
		}
		path := s.Path()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s2, err := Open(path)
		if err == nil {
			s2.Close()
		}
		if !errors.Is(err, ErrFormat) {
			t.Fatalf("Open of a version 99 file = %v, want ErrFormat", err)
		}
	})
	t.Run("not a store file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "junk.db")
		if err := os.WriteFile(path, []byte("definitely not a bbolt file, but long enough to be read as one"), 0o600); err != nil {
			t.Fatal(err)
		}
		if s, err := Open(path); err == nil {
			s.Close()
			t.Fatal("Open of a junk file succeeded")
		}
	})
}

// TestCloseWritesFreelist: a cleanly closed file records its freelist, so the next
// Open reads it instead of scanning every page (70 s cold at 100k chunks); a file
// left by a crash has none, and Open rebuilds it by scanning, as before.
func TestCloseWritesFreelist(t *testing.T) {
	s := openTemp(t)
	batch := []graphstore.ChunkExtraction{{ChunkID: "c1",
		Entities: []graphstore.EntityMention{{Key: "a", Name: "A", Description: "A leads."}}}}
	for range 3 { // rewrites free pages
		if err := s.Merge(t.Context(), "k", batch); err != nil {
			t.Fatal(err)
		}
	}
	path := s.Path()
	if got := lastFreelistPage(t, path); got != noFreelist {
		t.Fatalf("open store: meta freelist page %d, want none (NoFreelistSync)", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := lastFreelistPage(t, path); got == noFreelist {
		t.Fatal("closed store: no freelist written, the next Open scans the file")
	}
	s2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if err := s2.Merge(t.Context(), "k", batch); err != nil {
		t.Fatal(err)
	}
	if got := lastFreelistPage(t, path); got != noFreelist {
		t.Errorf("reopened store after a write: meta freelist page %d, want none", got)
	}
}

const noFreelist = ^uint64(0) // bbolt's page id for "freelist not written"

// lastFreelistPage reads the freelist page id from the newer of the file's two meta
// pages (bbolt's layout: a 16-byte page header, then magic, version, page size, flags,
// root bucket (16 bytes), freelist, high water mark, txid).
func lastFreelistPage(t *testing.T, path string) uint64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	le := func(off int) uint64 { return binary.LittleEndian.Uint64(b[off : off+8]) }
	pageSize := int(binary.LittleEndian.Uint32(b[16+8 : 16+12]))
	freelist, txid := le(16+32), le(16+48)
	if f2, tx2 := le(pageSize+16+32), le(pageSize+16+48); tx2 > txid {
		freelist = f2
	}
	return freelist
}
