package embedded

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/vectorstore"
)

func TestRecordCodecRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		r    storedRecord
	}{
		{"minimal", storedRecord{seq: 1, vector: []float32{1}}},
		{"full", storedRecord{seq: 1 << 40, vector: []float32{0.5, -2, 3e-8}, text: "héllo wörld", textLen: 2,
			attrs: map[string]string{"b": "2", "a": "", "": "empty key"}}},
		{"long text", storedRecord{seq: 7, vector: make([]float32, 384), text: string(make([]byte, 70000))}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := encodeRecord(tc.r)
			got, err := decodeRecord(b, false)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !equalStored(got, tc.r) {
				t.Fatalf("round trip = %+v, want %+v", got, tc.r)
			}
			lean, err := decodeRecord(b, true)
			if err != nil || lean.text != "" || lean.seq != tc.r.seq || lean.textLen != tc.r.textLen {
				t.Fatalf("decode without text = %+v, %v", lean, err)
			}
			// Every truncation is an error, never a panic or a silent success.
			for i := range b {
				if _, err := decodeRecord(b[:i], false); !errors.Is(err, errCorrupt) {
					t.Fatalf("decode of %d/%d bytes = %v, want errCorrupt", i, len(b), err)
				}
			}
		})
	}
}

func equalStored(a, b storedRecord) bool {
	// Bitwise: a stored NaN must come back as the same NaN.
	sameBits := func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) }
	if a.seq != b.seq || a.text != b.text || a.textLen != b.textLen || !slices.EqualFunc(a.vector, b.vector, sameBits) || len(a.attrs) != len(b.attrs) {
		return false
	}
	for k, v := range a.attrs {
		if b.attrs[k] != v {
			return false
		}
	}
	return true
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add(encodeRecord(storedRecord{seq: 3, vector: []float32{1, 2}, text: "x", attrs: map[string]string{"k": "v"}}))
	f.Add([]byte{recordVersion, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte{})
	f.Add(encodeRecord(storedRecord{seq: 4, vector: []float32{1}, attrs: map[string]string{
		"b": strings.Repeat("long", 20), "a": "", "c": "short"}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = decodeEntry(b, make(attrInterner)) // no panic on any bytes
		r, err := decodeRecord(b, false)
		var e openEntry
		entry, serr := recordEntry(b)
		if serr == nil {
			e, serr = decodeEntry(entry, make(attrInterner))
		}
		if (err == nil) != (serr == nil) {
			t.Fatalf("decodeRecord: %v, recordEntry and decodeEntry: %v", err, serr)
		}
		if err != nil {
			return
		}
		if want := compactAttrs(r.attrs, make(attrInterner)); !slices.Equal(e.attrs.kv, want.kv) || e.attrs.long != want.long {
			t.Fatalf("entry attributes = %+v, want %+v", e.attrs, want)
		}
		if e.seq != r.seq || e.textLen != r.textLen {
			t.Fatalf("entry seq %d, text length %d; record %d, %d", e.seq, e.textLen, r.seq, r.textLen)
		}
		again, err := decodeRecord(encodeRecord(r), false)
		if err != nil || !equalStored(again, r) {
			t.Fatalf("re-encoding a decoded record: %+v, %v", again, err)
		}
	})
}

// unitVec returns a reproducible random vector.
func unitVec(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func recs(r *rand.Rand, prefix string, n int, text string) []vectorstore.Record {
	out := make([]vectorstore.Record, n)
	for i := range out {
		out[i] = vectorstore.Record{ID: fmt.Sprintf("%s%03d", prefix, i), Vector: unitVec(r, 8), Text: fmt.Sprintf("%s %s%d", text, prefix, i)}
	}
	return out
}

func mustOpen(t *testing.T, dir string, opts ...Option) *Store {
	t.Helper()
	s, err := Open(dir, opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// checkGraph asserts that the graph holds every live record, under its
// current sequence, and that the dead count is what the snapshot implies.
func checkGraph(t *testing.T, s *Store, coll string, wantDead int) {
	t.Helper()
	c, err := s.s.coll(coll)
	if err != nil {
		t.Fatal(err)
	}
	x := c.dense
	if x.graph == nil {
		t.Fatal("no HNSW graph")
	}
	if len(x.nodes) != len(x.docs) || len(x.all) != len(x.docs) {
		t.Fatalf("nodes=%d all=%d docs=%d, want equal", len(x.nodes), len(x.all), len(x.docs))
	}
	for id, d := range x.docs {
		if v, ok := x.graph.lookup(d.seq); !ok || !equalQ(v, d.vec) || x.nodes[d.seq] != d {
			t.Fatalf("live record %s (seq %d) missing from the graph", id, d.seq)
		}
	}
	if x.dead != wantDead || x.graph.len() != len(x.docs)+x.dead {
		t.Fatalf("dead=%d graph=%d live=%d, want dead %d", x.dead, x.graph.len(), len(x.docs), wantDead)
	}
}

// copyDir copies a closed store's directory (a stand-in for the state a
// crash leaves on disk).
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		return copyFile(p, target)
	})
	if err != nil {
		t.Fatalf("copying %s: %v", src, err)
	}
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// TestRecoveryFromStaleDerivedState builds the disk state of a crash: the
// HNSW snapshot and the text index from before the last writes, bbolt from
// after them. Opening must reconcile both with bbolt.
func TestRecoveryFromStaleDerivedState(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 1))
	live, old := t.TempDir(), t.TempDir()
	opts := []Option{WithExactThreshold(0)}

	s := mustOpen(t, live, opts...)
	if err := s.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: "c", Dim: 8, Lexical: true}); err != nil {
		t.Fatal(err)
	}
	first := recs(r, "a", 40, "alpha")
	if err := s.Upsert(ctx, "c", first); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	copyDir(t, live, old) // snapshot and text index as of the first batch

	s = mustOpen(t, live, opts...)
	second := recs(r, "b", 10, "beta")
	replaced := vectorstore.Record{ID: "a001", Vector: unitVec(r, 8), Text: "gamma replaced"}
	if err := s.Upsert(ctx, "c", append(second, replaced)); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "c", []string{"a002", "a003"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := copyFile(filepath.Join(live, dbFile), filepath.Join(old, dbFile)); err != nil {
		t.Fatal(err)
	}

	s = mustOpen(t, old, opts...)
	// 40 snapshot nodes: a001's old version and a002, a003 are dead.
	checkGraph(t, s, "c", 3)
	if n, _ := s.Count(ctx, "c"); n != 48 {
		t.Fatalf("Count = %d, want 48", n)
	}
	tests := []struct {
		query string
		want  int
	}{{"alpha", 37}, {"beta", 10}, {"gamma", 1}, {"a002", 0}, {"a001", 0}}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			hits, err := s.SearchText(ctx, "c", tc.query, 100, vectorstore.Filter{})
			if err != nil || len(hits) != tc.want {
				t.Fatalf("SearchText(%s) = %d hits, %v; want %d", tc.query, len(hits), err, tc.want)
			}
		})
	}
	// BM25 statistics came back too: the replayed index scores like a fresh one.
	fresh := mustOpen(t, t.TempDir())
	if err := fresh.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: "c", Dim: 8, Lexical: true}); err != nil {
		t.Fatal(err)
	}
	all, err := s.Get(ctx, "c", append(recIDs(first), append(recIDs(second), "a001")...))
	if err != nil {
		t.Fatal(err)
	}
	if err := fresh.Upsert(ctx, "c", all); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"alpha a7", "beta", "gamma replaced"} {
		got, _ := s.SearchText(ctx, "c", q, 5, vectorstore.Filter{})
		want, _ := fresh.SearchText(ctx, "c", q, 5, vectorstore.Filter{})
		if len(got) != len(want) {
			t.Fatalf("SearchText(%q): %d hits after replay, %d in a fresh index", q, len(got), len(want))
		}
		for i := range got {
			if got[i].ID != want[i].ID || got[i].Score-want[i].Score > 1e-9 || want[i].Score-got[i].Score > 1e-9 {
				t.Fatalf("SearchText(%q) hit %d: %s %.6f after replay, %s %.6f fresh", q, i, got[i].ID, got[i].Score, want[i].ID, want[i].Score)
			}
		}
	}
}

func recIDs(rs []vectorstore.Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// TestDamagedDerivedFiles: a corrupt snapshot or text index is rebuilt from
// bbolt, never trusted.
func TestDamagedDerivedFiles(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, collDir string)
	}{
		{"snapshot bit flip", func(t *testing.T, d string) {
			p := filepath.Join(d, snapshotFile)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/2] ^= 0x40
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"snapshot truncated", func(t *testing.T, d string) {
			if err := os.Truncate(filepath.Join(d, snapshotFile), 20); err != nil {
				t.Fatal(err)
			}
		}},
		{"text index removed", func(t *testing.T, d string) {
			if err := os.RemoveAll(filepath.Join(d, lexicalDir)); err != nil {
				t.Fatal(err)
			}
		}},
		{"text index garbage", func(t *testing.T, d string) {
			if err := os.RemoveAll(filepath.Join(d, lexicalDir)); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(d, lexicalDir), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, lexicalDir, "index_meta.json"), []byte("{not json"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			r := rand.New(rand.NewPCG(2, 2))
			s := mustOpen(t, dir, WithExactThreshold(0))
			if err := s.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: "c", Dim: 8, Lexical: true}); err != nil {
				t.Fatal(err)
			}
			rs := recs(r, "d", 30, "delta")
			if err := s.Upsert(ctx, "c", rs); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			tc.damage(t, filepath.Join(dir, collsDir, "c"))
			s = mustOpen(t, dir, WithExactThreshold(0))
			checkGraph(t, s, "c", 0)
			hits, err := s.SearchText(ctx, "c", "delta", 100, vectorstore.Filter{})
			if err != nil || len(hits) != 30 {
				t.Fatalf("SearchText after damage = %d hits, %v; want 30", len(hits), err)
			}
			got, err := s.Search(ctx, "c", rs[7].Vector, 1, vectorstore.Filter{IDs: []string{rs[7].ID, rs[8].ID}})
			if err != nil || len(got) != 1 || got[0].ID != rs[7].ID {
				t.Fatalf("Search after damage = %+v, %v", got, err)
			}
		})
	}
}

// TestGraphCompaction: once dead nodes outnumber live ones the graph is
// rebuilt from the live records.
func TestGraphCompaction(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 3))
	s := mustOpen(t, t.TempDir(), WithExactThreshold(0))
	if err := s.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: "c", Dim: 8}); err != nil {
		t.Fatal(err)
	}
	var last []vectorstore.Record
	for range 12 { // 12 versions of 100 records: 1100 dead nodes before compaction
		last = recs(r, "e", 100, "")
		if err := s.Upsert(ctx, "c", last); err != nil {
			t.Fatal(err)
		}
	}
	checkGraph(t, s, "c", 0)
	hits, err := s.Search(ctx, "c", last[5].Vector, 1, vectorstore.Filter{IDs: []string{last[5].ID}})
	if err != nil || len(hits) != 1 || hits[0].ID != last[5].ID {
		t.Fatalf("Search after compaction = %+v, %v", hits, err)
	}
}

// TestLazyGraph: below the threshold no graph is kept; crossing it builds one.
func TestLazyGraph(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(4, 4))
	dir := t.TempDir()
	s := mustOpen(t, dir, WithExactThreshold(50))
	if err := s.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: "c", Dim: 8}); err != nil {
		t.Fatal(err)
	}
	if err := s.Upsert(ctx, "c", recs(r, "f", 50, "")); err != nil {
		t.Fatal(err)
	}
	c, _ := s.s.coll("c")
	if c.dense.graph != nil {
		t.Fatal("graph built at the threshold")
	}
	if err := s.Upsert(ctx, "c", recs(r, "g", 1, "")); err != nil {
		t.Fatal(err)
	}
	checkGraph(t, s, "c", 0)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, collsDir, "c", snapshotFile)); err != nil {
		t.Fatalf("no snapshot after Close: %v", err)
	}
	s = mustOpen(t, dir, WithExactThreshold(50))
	checkGraph(t, s, "c", 0)
}

// TestANNSearchPath drives denseIndex.search through the graph (not the
// exact fallbacks): dead nodes are skipped, attribute filters over-fetch, and
// k results come back when enough records match.
func TestANNSearchPath(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 7))
	s := mustOpen(t, t.TempDir(), WithExactThreshold(0), WithHNSW(16, 100, 16))
	if err := s.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: "c", Dim: 16}); err != nil {
		t.Fatal(err)
	}
	vecs := clustered(r, 2000, 16)
	all := make([]vectorstore.Record, len(vecs))
	for i, v := range vecs {
		all[i] = vectorstore.Record{ID: fmt.Sprintf("n%04d", i), Vector: v, Attrs: map[string]string{"half": fmt.Sprint(i % 2)}}
	}
	if err := s.Upsert(ctx, "c", all); err != nil {
		t.Fatal(err)
	}
	var deleted []string
	for i := 0; i < len(all); i += 4 {
		deleted = append(deleted, all[i].ID)
	}
	if err := s.Delete(ctx, "c", deleted); err != nil {
		t.Fatal(err)
	}
	checkGraph(t, s, "c", len(deleted))
	tests := []struct {
		name  string
		f     vectorstore.Filter
		allow func(i int) bool
	}{
		{"unfiltered", vectorstore.Filter{}, func(i int) bool { return i%4 != 0 }},
		{"half", vectorstore.Filter{Attrs: map[string]string{"half": "0"}}, func(i int) bool { return i%2 == 0 && i%4 != 0 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			self, live := 0, 0
			for q := 0; q < len(all); q += 37 {
				hits, err := s.Search(ctx, "c", vecs[q], 10, tc.f)
				if err != nil {
					t.Fatal(err)
				}
				if len(hits) != 10 {
					t.Fatalf("query %d: %d hits, want 10", q, len(hits))
				}
				for j, h := range hits {
					var i int
					if _, err := fmt.Sscanf(h.ID, "n%d", &i); err != nil {
						t.Fatalf("hit id %q: %v", h.ID, err)
					}
					if !tc.allow(i) {
						t.Fatalf("query %d: hit %s is deleted or filtered out", q, h.ID)
					}
					if j > 0 && vectorstore.CompareHits(hits[j-1], h) > 0 {
						t.Fatalf("query %d: hits out of order", q)
					}
				}
				if tc.allow(q) {
					live++
					if hits[0].ID == all[q].ID {
						self++
					}
				}
			}
			if float64(self) < 0.9*float64(live) {
				t.Fatalf("only %d of %d live query vectors found themselves first", self, live)
			}
		})
	}
}
