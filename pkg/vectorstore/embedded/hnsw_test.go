package embedded

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/viterin/vek/vek32"
)

// clustered returns n unit vectors around 50 random centres, like embeddings
// of related chunks.
func clustered(r *rand.Rand, n, dim int) [][]float32 {
	centres := make([][]float32, 50)
	for i := range centres {
		centres[i] = normalize(unitVec(r, dim))
	}
	out := make([][]float32, n)
	for i := range out {
		c := centres[r.IntN(len(centres))]
		v := make([]float32, dim)
		for j := range v {
			v[j] = c[j] + float32(r.NormFloat64())*0.15
		}
		out[i] = normalize(v)
	}
	return out
}

func TestANNGraphRecall(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	const n, dim, k = 3000, 32, 10
	vecs := clustered(r, n, dim)
	g := newANNGraph(16, 100)
	for i, v := range vecs {
		g.insert(uint64(i)+1000, quantizeUnit(v))
	}
	if g.len() != n {
		t.Fatalf("len = %d, want %d", g.len(), n)
	}
	tests := []struct {
		ef        int
		minRecall float64
	}{{16, 0.7}, {64, 0.95}, {200, 0.98}}
	queries := clustered(r, 100, dim)
	for _, tc := range tests {
		t.Run(fmt.Sprintf("ef=%d", tc.ef), func(t *testing.T) {
			found := 0
			for _, q := range queries {
				ids := make([]int, n)
				for i := range ids {
					ids[i] = i
				}
				sort.Slice(ids, func(a, b int) bool { return vek32.Dot(q, vecs[ids[a]]) > vek32.Dot(q, vecs[ids[b]]) })
				res := g.search(quantizeUnit(q), k, tc.ef)
				if len(res) < k || !slices.IsSortedFunc(res, func(a, b cand) int { return cmpF(a.d, b.d) }) {
					t.Fatalf("search returned %d results, sorted=%v", len(res), slices.IsSortedFunc(res, func(a, b cand) int { return cmpF(a.d, b.d) }))
				}
				for _, c := range res[:k] {
					if slices.Contains(ids[:k], int(g.keys[c.id]-1000)) {
						found++
					}
				}
			}
			recall := float64(found) / float64(k*len(queries))
			t.Logf("ef=%d recall@10=%.3f", tc.ef, recall)
			if recall < tc.minRecall {
				t.Fatalf("ef=%d: recall@10 = %.3f, want >= %.2f", tc.ef, recall, tc.minRecall)
			}
		})
	}
	// Every stored vector finds itself.
	for i := 0; i < n; i += 97 {
		if res := g.search(quantizeUnit(vecs[i]), 1, 32); g.keys[res[0].id] != uint64(i)+1000 {
			t.Fatalf("self search for %d found %d", i, g.keys[res[0].id])
		}
	}
}

// TestInsertBatchLinksGroup: nodes inserted in one batch group find each other.
// Their searches ran against the graph before the group, so a tight cluster
// inserted together is linked within itself only through the group's direct
// comparison; without it, each node would link only to the distant older nodes.
// The batch graph's recall matches one built node by node.
func TestInsertBatchLinksGroup(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	const dim = 32
	base := clustered(r, 500, dim)
	g := newANNGraph(16, 100)
	for i, v := range base {
		g.insert(uint64(i), quantizeUnit(v))
	}
	centre := make([]float32, dim)
	centre[0] = 1 // far from the clustered vectors, which are spread over all axes
	var keys []uint64
	var vecs []qvec
	for i := range insertGroup {
		v := slices.Clone(centre)
		for j := range v {
			v[j] += float32(r.NormFloat64()) * 0.05
		}
		keys, vecs = append(keys, uint64(10_000+i)), append(vecs, quantizeUnit(normalize(v)))
	}
	g.insertBatch(keys, vecs)
	within := 0
	for i := range insertGroup {
		id := g.byKey[uint64(10_000+i)]
		for _, n := range g.neighbours(id, 0) {
			if g.keys[n] >= 10_000 {
				within++
			}
			if n == id {
				t.Fatalf("node %d links to itself", id)
			}
		}
	}
	// Each of the 64 nodes has up to 16 diverse links; nearly all should stay in the cluster.
	if within < insertGroup*4 {
		t.Errorf("links within the cluster: %d, want ≥ %d", within, insertGroup*4)
	}

	// Recall: the same vectors built one by one and in batches.
	vs := clustered(r, 3000, dim)
	queries := clustered(r, 100, dim)
	recall := func(g *annGraph) float64 {
		found := 0
		for _, q := range queries {
			ids := make([]int, len(vs))
			for i := range ids {
				ids[i] = i
			}
			sort.Slice(ids, func(a, b int) bool { return vek32.Dot(q, vs[ids[a]]) > vek32.Dot(q, vs[ids[b]]) })
			for _, c := range g.search(quantizeUnit(q), 10, 64)[:10] {
				if slices.Contains(ids[:10], int(g.keys[c.id])) {
					found++
				}
			}
		}
		return float64(found) / float64(10*len(queries))
	}
	one, batch := newANNGraph(16, 100), newANNGraph(16, 100)
	ks, qs := make([]uint64, len(vs)), make([]qvec, len(vs))
	for i, v := range vs {
		ks[i], qs[i] = uint64(i), quantizeUnit(v)
		one.insert(ks[i], qs[i])
	}
	batch.insertBatch(ks, qs)
	if batch.len() != len(vs) {
		t.Fatalf("batch graph holds %d nodes, want %d", batch.len(), len(vs))
	}
	r1, rb := recall(one), recall(batch)
	t.Logf("recall@10 at ef 64: one by one %.3f, batch %.3f", r1, rb)
	if rb < r1-0.02 || rb < 0.95 {
		t.Errorf("batch recall %.3f, want ≥ %.3f and ≥ 0.95", rb, r1-0.02)
	}
}

func cmpF(a, b float32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestSnapshotValidation: a snapshot with a valid checksum but impossible
// content is rejected, not trusted (and does not panic).
func TestSnapshotValidation(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	g := newANNGraph(4, 20)
	for i, v := range clustered(r, 200, 4) {
		g.insert(uint64(i), quantizeUnit(v))
	}
	dir := t.TempDir()
	path := filepath.Join(dir, snapshotFile)
	h := snapshotHeader{Incarnation: 9, Seq: 200, Dim: 4}
	if err := writeSnapshot(path, h, g.freeze()); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h2, g2, err := readSnapshot(path, defaultConfig())
	if err != nil || h2.Incarnation != 9 || g2.len() != 200 || g2.entry != g.entry || g2.top != g.top {
		t.Fatalf("round trip: %+v, %v", h2, err)
	}
	for i := range g.keys {
		if g2.keys[i] != g.keys[i] || !equalQ(g2.vecs[i], g.vecs[i]) || !slices.EqualFunc(g2.lists(int32(i)), g.lists(int32(i)), slices.Equal) {
			t.Fatalf("node %d differs after round trip", i)
		}
	}
	hdr := len(snapshotMagic) + binary.Size(snapshotHeader{})
	firstLinks := hdr + 8 + 4 + 8 + 4 + 4 // node 0: key, layers, scale and bound, codes, link count
	tests := []struct {
		name   string
		mutate func(b []byte)
	}{
		{"link out of range", func(b []byte) { binary.LittleEndian.PutUint32(b[firstLinks:], 1<<30) }},
		{"huge node count", func(b []byte) { binary.LittleEndian.PutUint64(b[len(snapshotMagic)+24:], 1<<40) }},
		{"zero layers", func(b []byte) { binary.LittleEndian.PutUint32(b[hdr+8:], 0) }},
		{"entry out of range", func(b []byte) { binary.LittleEndian.PutUint64(b[len(snapshotMagic)+32:], 5000) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := slices.Clone(good)
			tc.mutate(b)
			// Re-seal so that only the content checks can catch it.
			binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], crcTable))
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, _, err := readSnapshot(path, defaultConfig()); !errors.Is(err, errBadSnapshot) {
				t.Fatalf("readSnapshot = %v, want errBadSnapshot", err)
			}
		})
	}
}

func equalQ(a, b qvec) bool {
	return a.scale == b.scale && a.err == b.err && slices.Equal(a.codes, b.codes)
}
