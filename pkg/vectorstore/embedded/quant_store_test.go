package embedded

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// TestRefineRescoresBoundedCandidates: a candidate outside the re-ranked
// head whose quantized score plus error bound reaches the k-th exact score
// is re-ranked too (and wins here); one whose bound cannot reach it is not
// read at all.
func TestRefineRescoresBoundedCandidates(t *testing.T) {
	q := query{q: qvec{err: 0}}
	a := &doc{id: "a", vec: qvec{err: 0.001}}
	b := &doc{id: "b", vec: qvec{err: 0.001}}
	c := &doc{id: "c", vec: qvec{err: 0.3}}  // coarse: may be far better than it looks
	d := &doc{id: "d", vec: qvec{err: 0.01}} // cannot reach a's exact 0.6
	cands := []*doc{a, b, c, d}
	approx := []float32{0.9, 0.8, 0.5, 0.4}
	exact := map[*doc]float32{a: 0.6, b: 0.55, c: 0.7, d: 0.99}
	var read []string
	ex := func(ds []*doc) ([]float32, error) {
		out := make([]float32, len(ds))
		for i, x := range ds {
			read = append(read, x.id)
			out[i] = exact[x]
		}
		return out, nil
	}
	top := []scored{{a, 0.9}, {b, 0.8}} // rerankDepth(1)
	got, err := refine(q, 1, cands, approx, top, ex)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].d != c || got[0].score != 0.7 {
		t.Fatalf("refine = %+v, want c with its exact score 0.7", got)
	}
	if slices.Contains(read, "d") {
		t.Fatalf("read %v: d's bound cannot reach the k-th score, it must not be read", read)
	}
}

// nearTies returns n unit vectors of dim whose cosines to q differ by less
// than the quantization error, so that ranking by quantized vectors alone
// gets their order and scores wrong.
func nearTies(r *rand.Rand, n, dim int) (q []float32, vecs [][]float32) {
	q = normalize(randVec(r, dim))
	for range n {
		v := make([]float32, dim)
		noise := randVec(r, dim)
		for j := range v {
			v[j] = q[j] + 0.02*noise[j]
		}
		vecs = append(vecs, normalize(v))
	}
	return q, vecs
}

// TestSearchReturnsExactTopK: whether the store scans or walks its graph,
// the hits are the exact top k by the stored float32 vectors, in order,
// with their exact cosines, although memory holds only quantized vectors
// and the candidates are closer together than their quantization error.
func TestSearchReturnsExactTopK(t *testing.T) {
	const n, dim, k = 600, 64, 20
	r := rand.New(rand.NewPCG(21, 22))
	q, vecs := nearTies(r, n, dim)
	recs := make([]vectorstore.Record, n)
	for i, v := range vecs {
		scaled := slices.Clone(v) // stored unnormalized: the exact score must normalize
		for j := range scaled {
			scaled[j] *= float32(1 + i%7)
		}
		recs[i] = vectorstore.Record{ID: fmt.Sprintf("t%04d", i), Vector: scaled}
	}
	type truth struct {
		id    string
		score float64
	}
	want := make([]truth, n)
	for i, v := range vecs {
		var dot float64
		for j := range v {
			dot += float64(q[j]) * float64(v[j])
		}
		want[i] = truth{recs[i].ID, dot}
	}
	sort.Slice(want, func(a, b int) bool { return want[a].score > want[b].score })
	if want[k-1].score-want[k].score > 1e-3 {
		t.Fatalf("the set has no near ties at rank %d: %v", k, want[k-1].score-want[k].score)
	}
	for _, mode := range []struct {
		name string
		opt  Option
	}{{"scan", WithExactThreshold(10 * n)}, {"graph", WithExactThreshold(0)}} {
		t.Run(mode.name, func(t *testing.T) {
			ctx := context.Background()
			s := mustOpen(t, t.TempDir(), mode.opt)
			if err := s.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: "c", Dim: dim}); err != nil {
				t.Fatal(err)
			}
			if err := s.Upsert(ctx, "c", recs); err != nil {
				t.Fatal(err)
			}
			hits, err := s.Search(ctx, "c", q, k, vectorstore.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != k {
				t.Fatalf("%d hits, want %d", len(hits), k)
			}
			for i, h := range hits {
				if h.ID != want[i].id || math.Abs(h.Score-want[i].score) > 1e-5 {
					t.Fatalf("hit %d = %s %.7f, want %s %.7f", i, h.ID, h.Score, want[i].id, want[i].score)
				}
			}
		})
	}
}

// writeSnapshotV2 writes g in the version 2 layout (float32 vectors, taken
// from vecs by key), as stores before quantization did.
func writeSnapshotV2(t *testing.T, path string, h snapshotHeader, g *frozenGraph, vecs map[uint64][]float32) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	crc := crc32.New(crcTable)
	bw := bufio.NewWriter(f)
	w := io.MultiWriter(bw, crc)
	h.Nodes, h.Entry, h.Top = uint64(len(g.keys)), int64(g.entry), uint64(g.top)
	var buf []byte
	buf = append(buf, snapshotMagicV2...)
	buf, _ = binary.Append(buf, binary.LittleEndian, h)
	list, at := 0, 0
	for i, key := range g.keys {
		buf = binary.LittleEndian.AppendUint64(buf, key)
		buf = binary.LittleEndian.AppendUint32(buf, uint32(g.layers[i]))
		for _, x := range vecs[key] {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
		}
		for range g.layers[i] {
			cnt := int(g.counts[list])
			list++
			buf = binary.LittleEndian.AppendUint32(buf, uint32(cnt))
			for _, x := range g.links[at : at+cnt] {
				buf = binary.LittleEndian.AppendUint32(buf, uint32(x))
			}
			at += cnt
		}
	}
	if _, err := w.Write(buf); err != nil {
		t.Fatal(err)
	}
	if err := binary.Write(bw, binary.LittleEndian, crc.Sum32()); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotV2Migrates: a snapshot written before quantization (float32
// vectors) is loaded, not rebuilt: its vectors are quantized as new ones
// are, the graph keeps its links, and searches return what they did.
func TestSnapshotV2Migrates(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := mustOpen(t, dir, WithExactThreshold(0))
	if err := s.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: "c", Dim: 8}); err != nil {
		t.Fatal(err)
	}
	upsertBatches(t, s, rand.New(rand.NewPCG(7, 7)), 600, 100)
	all, err := s.Get(ctx, "c", func() []string {
		var ids []string
		for i := range 600 {
			ids = append(ids, fmt.Sprintf("p%06d", i))
		}
		return ids
	}())
	if err != nil {
		t.Fatal(err)
	}
	c, _ := s.s.coll("c")
	x := denseOf(t, s, "c")
	floats := make(map[uint64][]float32, len(all))
	for _, rec := range all {
		floats[x.docs[rec.ID].seq] = normalize(rec.Vector)
	}
	h, frozen := c.freezeSnapshot()
	q := unitVec(rand.New(rand.NewPCG(8, 8)), 8)
	want, err := s.Search(ctx, "c", q, 5, vectorstore.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	writeSnapshotV2(t, filepath.Join(dir, collsDir, "c", snapshotFile), h, frozen, floats)

	s = mustOpen(t, dir, WithExactThreshold(0))
	y := denseOf(t, s, "c")
	if y.builds != 0 || y.replayed != 0 {
		t.Fatalf("the v2 snapshot was not loaded: builds %d, replayed %d", y.builds, y.replayed)
	}
	checkGraph(t, s, "c", 0)
	for key, f := range floats {
		if got, _ := y.graph.lookup(key); !equalQ(got, quantizeUnit(f)) {
			t.Fatalf("node %d: migrated vector %+v differs from quantizing its floats", key, got)
		}
	}
	got, err := s.Search(ctx, "c", q, 5, vectorstore.Filter{})
	if err != nil || !slices.Equal(recIDs(hitRecords(got)), recIDs(hitRecords(want))) {
		t.Fatalf("Search after migration = %v, %v; want %v", got, err, want)
	}
}

// TestSnapshotOneDimension: a snapshot of 1-d vectors (shorter than a
// vector's scale and bound) round-trips, in version 3 and from version 2.
func TestSnapshotOneDimension(t *testing.T) {
	g := newANNGraph(4, 20)
	floats := make(map[uint64][]float32)
	for i := range 50 {
		floats[uint64(i)] = []float32{float32(i%2*2 - 1)}
		g.insert(uint64(i), quantizeUnit(floats[uint64(i)]))
	}
	path := filepath.Join(t.TempDir(), snapshotFile)
	if err := writeSnapshot(path, snapshotHeader{Incarnation: 1, Seq: 50, Dim: 1}, g.freeze()); err != nil {
		t.Fatal(err)
	}
	_, g2, err := readSnapshot(path, defaultConfig())
	if err != nil || g2.len() != 50 || !equalQ(g2.vecs[7], g.vecs[7]) {
		t.Fatalf("round trip of a 1-d graph: %v", err)
	}
	writeSnapshotV2(t, path, snapshotHeader{Incarnation: 1, Seq: 50, Dim: 1}, g.freeze(), floats)
	if _, g2, err = readSnapshot(path, defaultConfig()); err != nil || g2.len() != 50 || !equalQ(g2.vecs[7], g.vecs[7]) {
		t.Fatalf("migration of a 1-d v2 graph: %v", err)
	}
}
