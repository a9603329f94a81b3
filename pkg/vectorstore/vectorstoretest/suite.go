package vectorstoretest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// Features declares what a driver supports.
type Features struct {
	// Persistent: data survives Close and Reopen.
	Persistent bool
	// Lexical: collections with Lexical true support SearchText (BM25).
	Lexical bool
	// SkipLarge skips the cases that write tens of thousands of records
	// (ListBeyondSearchCap). For a second configuration of a driver whose
	// first one runs them: the embedded driver's HNSW run, where building the
	// graph makes them slow and listing takes the same path.
	SkipLarge bool
	// Reopen closes old and opens the same backing storage again. Required
	// when Persistent is true.
	Reopen func(t *testing.T, old vectorstore.Store) vectorstore.Store
}

// dim is small so that the suite is fast; drivers do not special-case it.
const dim = 16

var collSeq atomic.Int64

// runID keeps names unique across runs against a shared server.
var runID = time.Now().UnixNano() % 1_000_000

// collName returns a collection name unique to this test.
func collName(t *testing.T) string {
	t.Helper()
	return fmt.Sprintf("vst_%d_%d", runID, collSeq.Add(1))
}

// Run runs the conformance suite. open must return a new, empty store
// (or one on which the suite's uniquely named collections do not exist) and
// register its Close with t.Cleanup if it wants it closed.
func Run(t *testing.T, f Features, open func(t *testing.T) vectorstore.Store) {
	if f.Persistent && f.Reopen == nil {
		t.Fatal("vectorstoretest: Features.Persistent needs Features.Reopen")
	}
	h := &harness{f: f, open: open}
	tests := []struct {
		name string
		fn   func(t *testing.T)
		skip bool
	}{
		{"EnsureCollection", h.testEnsure, false},
		{"NotFound", h.testNotFound, false},
		{"BadNames", h.testBadNames, false},
		{"UpsertValidation", h.testUpsertValidation, false},
		{"UpsertValid", h.testUpsertValid, false},
		{"UpsertReplaces", h.testUpsertReplaces, false},
		{"GetOrderAndMissing", h.testGet, false},
		{"Attrs", h.testAttrs, false},
		{"Delete", h.testDelete, false},
		{"DropCollection", h.testDrop, false},
		{"DenseRanking", h.testDenseRanking, false},
		{"DenseTies", h.testDenseTies, false},
		{"DenseFilters", h.testDenseFilters, false},
		{"KLargerThanCount", h.testKLarge, false},
		{"List", h.testList, false},
		{"ListBeyondSearchCap", h.testListBeyondSearchCap, f.SkipLarge},
		{"TextUnsupported", h.testTextUnsupported, false},
		{"BM25RareTerm", h.testBM25Rare, !f.Lexical},
		{"BM25Saturation", h.testBM25Saturation, !f.Lexical},
		{"BM25Filters", h.testBM25Filters, !f.Lexical},
		{"BM25DeleteAndReindex", h.testBM25Updates, !f.Lexical},
		{"Persistence", h.testPersistence, !f.Persistent},
		{"Concurrency", h.testConcurrency, false},
		{"ContextCanceled", h.testCanceled, false},
		{"Close", h.testClose, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.skip {
				t.Skip("feature not supported by this driver")
			}
			tc.fn(t)
		})
	}
}

type harness struct {
	f    Features
	open func(t *testing.T) vectorstore.Store
}

// setup opens a store and creates one collection.
func (h *harness) setup(t *testing.T, lexical bool) (vectorstore.Store, string) {
	t.Helper()
	s := h.open(t)
	name := collName(t)
	if err := s.EnsureCollection(context.Background(), vectorstore.CollectionSpec{Name: name, Dim: dim, Lexical: lexical}); err != nil {
		t.Fatalf("EnsureCollection: %v", err)
	}
	t.Cleanup(func() { _ = s.DropCollection(context.Background(), name) })
	return s, name
}

// randVec returns a reproducible random vector (not normalized, so drivers
// must compute cosine, not a raw dot product).
func randVec(r *rand.Rand) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64()) * 3
	}
	return v
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

func upsert(t *testing.T, s vectorstore.Store, coll string, recs ...vectorstore.Record) {
	t.Helper()
	if err := s.Upsert(context.Background(), coll, recs); err != nil {
		t.Fatalf("Upsert: %v", err)
	}
}

func ids(hits []vectorstore.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func recIDs(recs []vectorstore.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

// seeded upserts n records "r000".. with random vectors; attrs: parity and
// a group of 3.
func seeded(t *testing.T, s vectorstore.Store, coll string, n int, seed uint64) map[string][]float32 {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	vecs := make(map[string][]float32, n)
	recs := make([]vectorstore.Record, n)
	for i := range recs {
		id := fmt.Sprintf("r%03d", i)
		v := randVec(r)
		vecs[id] = v
		recs[i] = vectorstore.Record{ID: id, Vector: v, Text: fmt.Sprintf("record number %d", i), Attrs: map[string]string{
			"parity": []string{"even", "odd"}[i%2],
			"group":  fmt.Sprintf("g%d", i%3),
		}}
	}
	upsert(t, s, coll, recs...)
	return vecs
}

func (h *harness) testEnsure(t *testing.T) {
	ctx := context.Background()
	s, name := h.setup(t, false)
	tests := []struct {
		name string
		spec vectorstore.CollectionSpec
		want error
	}{
		{"same spec again", vectorstore.CollectionSpec{Name: name, Dim: dim}, nil},
		{"other dim", vectorstore.CollectionSpec{Name: name, Dim: dim + 1}, vectorstore.ErrDimensionMismatch},
		{"bad name", vectorstore.CollectionSpec{Name: "no-dashes", Dim: dim}, vectorstore.ErrInvalidArgument},
		{"empty name", vectorstore.CollectionSpec{Name: "", Dim: dim}, vectorstore.ErrInvalidArgument},
		{"zero dim", vectorstore.CollectionSpec{Name: name + "_z", Dim: 0}, vectorstore.ErrInvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := s.EnsureCollection(ctx, tc.spec)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("EnsureCollection(%+v) = %v, want %v", tc.spec, err, tc.want)
			}
		})
	}
	names, err := s.Collections(ctx)
	if err != nil {
		t.Fatalf("Collections: %v", err)
	}
	n := 0
	for _, c := range names {
		if c == name {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("Collections() = %v, want %q exactly once", names, name)
	}
}

// collectionCalls calls every collection-taking method on coll, by name.
func collectionCalls(ctx context.Context, s vectorstore.Store, coll string) map[string]func() error {
	v := make([]float32, dim)
	v[0] = 1
	return map[string]func() error{
		"Upsert":     func() error { return s.Upsert(ctx, coll, []vectorstore.Record{{ID: "a", Vector: v}}) },
		"Get":        func() error { _, err := s.Get(ctx, coll, []string{"a"}); return err },
		"Attrs":      func() error { _, err := s.Attrs(ctx, coll, []string{"a"}); return err },
		"Delete":     func() error { return s.Delete(ctx, coll, []string{"a"}) },
		"Search":     func() error { _, err := s.Search(ctx, coll, v, 1, vectorstore.Filter{}); return err },
		"SearchText": func() error { _, err := s.SearchText(ctx, coll, "a", 1, vectorstore.Filter{}); return err },
		"Count":      func() error { _, err := s.Count(ctx, coll); return err },
		"List":       func() error { _, _, err := s.List(ctx, coll, "", 10); return err },
		"Drop":       func() error { return s.DropCollection(ctx, coll) },
	}
}

// testBadNames calls every collection-taking method with names no collection can have:
// each is ErrInvalidArgument, not ErrNotFound, in every driver.
func (h *harness) testBadNames(t *testing.T) {
	s := h.open(t)
	for _, name := range []string{"", "no-dashes", "9lives", strings.Repeat("a", vectorstore.MaxNameLen+1)} {
		for op, fn := range collectionCalls(context.Background(), s, name) {
			if err := fn(); !errors.Is(err, vectorstore.ErrInvalidArgument) {
				t.Errorf("%s(%.12q) = %v, want ErrInvalidArgument", op, name, err)
			}
		}
	}
}

func (h *harness) testNotFound(t *testing.T) {
	s := h.open(t)
	for name, op := range collectionCalls(context.Background(), s, collName(t)) {
		t.Run(name, func(t *testing.T) {
			if err := op(); !errors.Is(err, vectorstore.ErrNotFound) {
				t.Fatalf("%s on a missing collection = %v, want ErrNotFound", name, err)
			}
		})
	}
}

func (h *harness) testUpsertValidation(t *testing.T) {
	ctx := context.Background()
	s, name := h.setup(t, false)
	good := make([]float32, dim)
	good[0] = 1
	tests := []struct {
		name string
		recs []vectorstore.Record
		want error
	}{
		{"short vector", []vectorstore.Record{{ID: "a", Vector: good}, {ID: "b", Vector: good[:dim-1]}}, vectorstore.ErrDimensionMismatch},
		{"long vector", []vectorstore.Record{{ID: "a", Vector: append(slices.Clone(good), 1)}}, vectorstore.ErrDimensionMismatch},
		{"zero vector", []vectorstore.Record{{ID: "a", Vector: make([]float32, dim)}}, vectorstore.ErrInvalidArgument},
		{"empty id", []vectorstore.Record{{ID: "", Vector: good}}, vectorstore.ErrInvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.Upsert(ctx, name, tc.recs); !errors.Is(err, tc.want) {
				t.Fatalf("Upsert = %v, want %v", err, tc.want)
			}
			// All or nothing: the valid record of the batch is not stored.
			if n, err := s.Count(ctx, name); err != nil || n != 0 {
				t.Fatalf("Count after rejected batch = %d, %v; want 0", n, err)
			}
		})
	}
	if _, err := s.Search(ctx, name, good[:3], 1, vectorstore.Filter{}); !errors.Is(err, vectorstore.ErrDimensionMismatch) {
		t.Fatalf("Search with a short vector = %v, want ErrDimensionMismatch", err)
	}
	if _, err := s.Search(ctx, name, good, 0, vectorstore.Filter{}); !errors.Is(err, vectorstore.ErrInvalidArgument) {
		t.Fatalf("Search with k=0 = %v, want ErrInvalidArgument", err)
	}
}

// testUpsertValid: UpsertValid writes every valid record of a batch and returns the
// invalid ones (a zero vector, an empty ID) with the driver's reason.
func (h *harness) testUpsertValid(t *testing.T) {
	ctx := context.Background()
	s, name := h.setup(t, false)
	recs := make([]vectorstore.Record, 37)
	bad := map[int]bool{0: true, 17: true, 36: true}
	for i := range recs {
		v := make([]float32, dim)
		v[i%dim] = 1
		recs[i] = vectorstore.Record{ID: fmt.Sprintf("r%02d", i), Vector: v}
		if bad[i] {
			recs[i].Vector = make([]float32, dim)
		}
	}
	recs = append(recs, vectorstore.Record{ID: "", Vector: recs[1].Vector})
	refused, err := vectorstore.UpsertValid(ctx, s, name, recs)
	if err != nil {
		t.Fatalf("UpsertValid: %v", err)
	}
	var ids []string
	for _, r := range refused {
		if !errors.Is(r.Err, vectorstore.ErrInvalidArgument) {
			t.Errorf("refused %q with %v, want ErrInvalidArgument", r.ID, r.Err)
		}
		ids = append(ids, r.ID)
	}
	if want := []string{"r00", "r17", "r36", ""}; !slices.Equal(ids, want) {
		t.Errorf("refused %q, want %q", ids, want)
	}
	if n, err := s.Count(ctx, name); err != nil || n != len(recs)-4 {
		t.Errorf("Count = %d, %v; want %d", n, err, len(recs)-4)
	}
	// An error that is not a record's fault is returned, nothing refused.
	short := []vectorstore.Record{{ID: "s", Vector: make([]float32, dim-1)}}
	if refused, err := vectorstore.UpsertValid(ctx, s, name, short); !errors.Is(err, vectorstore.ErrDimensionMismatch) || len(refused) != 0 {
		t.Errorf("UpsertValid with a short vector = %v, %v; want ErrDimensionMismatch", refused, err)
	}
}

func (h *harness) testUpsertReplaces(t *testing.T) {
	ctx := context.Background()
	s, name := h.setup(t, h.f.Lexical)
	r := rand.New(rand.NewPCG(7, 7))
	v1, v2 := randVec(r), randVec(r)
	upsert(t, s, name, vectorstore.Record{ID: "x", Vector: v1, Text: "old words", Attrs: map[string]string{"v": "1", "gone": "yes"}})
	upsert(t, s, name, vectorstore.Record{ID: "x", Vector: v2, Text: "new words", Attrs: map[string]string{"v": "2"}})
	got, err := s.Get(ctx, name, []string{"x"})
	if err != nil || len(got) != 1 {
		t.Fatalf("Get = %v, %v; want one record", got, err)
	}
	want := vectorstore.Record{ID: "x", Vector: v2, Text: "new words", Attrs: map[string]string{"v": "2"}}
	if !equalRecord(got[0], want) {
		t.Fatalf("Get after replace = %+v, want %+v", got[0], want)
	}
	if n, _ := s.Count(ctx, name); n != 1 {
		t.Fatalf("Count after replace = %d, want 1", n)
	}
	hits, err := s.Search(ctx, name, v2, 1, vectorstore.Filter{})
	if err != nil || len(hits) != 1 || math.Abs(hits[0].Score-1) > 1e-4 {
		t.Fatalf("Search(new vector) = %+v, %v; want x with score 1", hits, err)
	}
	hits, err = s.Search(ctx, name, v1, 1, vectorstore.Filter{Attrs: map[string]string{"gone": "yes"}})
	if err != nil || len(hits) != 0 {
		t.Fatalf("Search by a replaced attribute = %v, %v; want nothing", ids(hits), err)
	}
	// A batch with a repeated ID keeps the last occurrence.
	upsert(t, s, name, vectorstore.Record{ID: "y", Vector: v1, Text: "first"}, vectorstore.Record{ID: "y", Vector: v2, Text: "second"})
	got, _ = s.Get(ctx, name, []string{"y"})
	if len(got) != 1 || got[0].Text != "second" {
		t.Fatalf("Get(y) after a batch with a repeated ID = %+v, want text %q", got, "second")
	}
}

func equalRecord(a, b vectorstore.Record) bool {
	if a.ID != b.ID || a.Text != b.Text || !slices.Equal(a.Vector, b.Vector) || len(a.Attrs) != len(b.Attrs) {
		return false
	}
	for k, v := range a.Attrs {
		if bv, ok := b.Attrs[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

func (h *harness) testGet(t *testing.T) {
	ctx := context.Background()
	s, name := h.setup(t, false)
	vecs := seeded(t, s, name, 5, 1)
	tests := []struct {
		name string
		ids  []string
		want []string
	}{
		{"given order", []string{"r003", "r000", "r004"}, []string{"r003", "r000", "r004"}},
		{"missing skipped", []string{"nope", "r001", "gone"}, []string{"r001"}},
		{"none", nil, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Get(ctx, name, tc.ids)
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			if !slices.Equal(recIDs(got), tc.want) {
				t.Fatalf("Get(%v) = %v, want %v", tc.ids, recIDs(got), tc.want)
			}
			for _, r := range got {
				if !slices.Equal(r.Vector, vecs[r.ID]) {
					t.Fatalf("Get(%s) returned another vector", r.ID)
				}
			}
		})
	}
}

// testAttrs: Attrs returns what Get returns as attributes, for the records
// found only, and follows replacements and deletions.
func (h *harness) testAttrs(t *testing.T) {
	ctx := context.Background()
	s, name := h.setup(t, false)
	seeded(t, s, name, 5, 1)
	bare := make([]float32, dim)
	bare[1] = 1
	upsert(t, s, name, vectorstore.Record{ID: "bare", Vector: bare},
		vectorstore.Record{ID: "r002", Vector: bare, Attrs: map[string]string{"parity": "replaced"}})
	if err := s.Delete(ctx, name, []string{"r004"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Attrs(ctx, name, []string{"r000", "r001", "nope", "r002", "r004", "bare", "r000"})
	if err != nil {
		t.Fatalf("Attrs: %v", err)
	}
	want := map[string]map[string]string{
		"r000": {"parity": "even", "group": "g0"},
		"r001": {"parity": "odd", "group": "g1"},
		"r002": {"parity": "replaced"},
		"bare": {},
	}
	if len(got) != len(want) {
		t.Fatalf("Attrs = %v, want %v", got, want)
	}
	for id, w := range want {
		g, ok := got[id]
		if !ok || g == nil || !maps.Equal(g, w) {
			t.Errorf("Attrs[%s] = %v (present %v), want %v", id, g, ok, w)
		}
	}
	if got, err := s.Attrs(ctx, name, nil); err != nil || len(got) != 0 {
		t.Errorf("Attrs(nil) = %v, %v: want empty", got, err)
	}
}

func (h *harness) testDelete(t *testing.T) {
	ctx := context.Background()
	s, name := h.setup(t, false)
	vecs := seeded(t, s, name, 10, 2)
	if err := s.Delete(ctx, name, []string{"r002", "r005", "unknown"}); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if n, _ := s.Count(ctx, name); n != 8 {
		t.Fatalf("Count after deleting 2 of 10 = %d", n)
	}
	if got, _ := s.Get(ctx, name, []string{"r002", "r003"}); !slices.Equal(recIDs(got), []string{"r003"}) {
		t.Fatalf("Get after delete = %v, want [r003]", recIDs(got))
	}
	hits, err := s.Search(ctx, name, vecs["r002"], 10, vectorstore.Filter{})
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	if slices.Contains(ids(hits), "r002") || slices.Contains(ids(hits), "r005") || len(hits) != 8 {
		t.Fatalf("Search after delete = %v; want the 8 remaining records", ids(hits))
	}
}

func (h *harness) testDrop(t *testing.T) {
	ctx := context.Background()
	s, name := h.setup(t, h.f.Lexical)
	seeded(t, s, name, 3, 3)
	if err := s.DropCollection(ctx, name); err != nil {
		t.Fatalf("DropCollection: %v", err)
	}
	names, _ := s.Collections(ctx)
	if slices.Contains(names, name) {
		t.Fatalf("Collections after drop = %v", names)
	}
	if _, err := s.Count(ctx, name); !errors.Is(err, vectorstore.ErrNotFound) {
		t.Fatalf("Count after drop = %v, want ErrNotFound", err)
	}
	// Recreating with another dimension starts empty.
	if err := s.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: name, Dim: dim * 2, Lexical: h.f.Lexical}); err != nil {
		t.Fatalf("EnsureCollection after drop: %v", err)
	}
	if n, err := s.Count(ctx, name); err != nil || n != 0 {
		t.Fatalf("Count of recreated collection = %d, %v", n, err)
	}
	if h.f.Lexical {
		hits, err := s.SearchText(ctx, name, "record", 10, vectorstore.Filter{})
		if err != nil || len(hits) != 0 {
			t.Fatalf("SearchText in recreated collection = %v, %v; want nothing", ids(hits), err)
		}
	}
}

func (h *harness) testDenseRanking(t *testing.T) {
	ctx := context.Background()
	s, name := h.setup(t, false)
	vecs := seeded(t, s, name, 60, 4)
	for _, target := range []string{"r000", "r017", "r059"} {
		t.Run(target, func(t *testing.T) {
			hits, err := s.Search(ctx, name, vecs[target], 10, vectorstore.Filter{})
			if err != nil {
				t.Fatalf("Search: %v", err)
			}
			if len(hits) != 10 || hits[0].ID != target {
				t.Fatalf("Search(%s) = %v; want 10 hits, the exact match first", target, ids(hits))
			}
			// Scores are cosine similarities, best first, and the hits are the
			// true top 10 (the suite's collection is small enough for any
			// index to be exact).
			type pair struct {
				id string
				s  float64
			}
			var all []pair
			for id, v := range vecs {
				all = append(all, pair{id, cosine(vecs[target], v)})
			}
			slices.SortFunc(all, func(a, b pair) int {
				if a.s != b.s {
					if a.s > b.s {
						return -1
					}
					return 1
				}
				return strings.Compare(a.id, b.id)
			})
			for i, hit := range hits {
				if hit.ID != all[i].id || math.Abs(hit.Score-all[i].s) > 1e-4 {
					t.Fatalf("hit %d = %s (%.5f), want %s (%.5f)", i, hit.ID, hit.Score, all[i].id, all[i].s)
				}
				if !slices.Equal(hit.Vector, vecs[hit.ID]) || hit.Text == "" || hit.Attrs["parity"] == "" {
					t.Fatalf("hit %s does not carry its record: %+v", hit.ID, hit.Record)
				}
			}
		})
	}
}

func (h *harness) testDenseTies(t *testing.T) {
	ctx := context.Background()
	s, name := h.setup(t, false)
	v := make([]float32, dim)
	v[0], v[1] = 1, 1
	scaled := []float32{3, 3}
	scaled = append(scaled, make([]float32, dim-2)...)
	other := make([]float32, dim)
	other[2] = 1
	// Same direction, different lengths: equal cosine, so ID order decides.
	upsert(t, s, name,
		vectorstore.Record{ID: "c", Vector: v},
		vectorstore.Record{ID: "a", Vector: scaled},
		vectorstore.Record{ID: "b", Vector: v},
		vectorstore.Record{ID: "z", Vector: other},
	)
	hits, err := s.Search(ctx, name, v, 4, vectorstore.Filter{})
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	if want := []string{"a", "b", "c", "z"}; !slices.Equal(ids(hits), want) {
		t.Fatalf("Search with ties = %v, want %v", ids(hits), want)
	}
	if math.Abs(hits[0].Score-1) > 1e-5 || math.Abs(hits[3].Score) > 1e-5 {
		t.Fatalf("scores = %v, %v; want cosine 1 and 0", hits[0].Score, hits[3].Score)
	}
}

func (h *harness) testDenseFilters(t *testing.T) {
	ctx := context.Background()
	s, name := h.setup(t, false)
	vecs := seeded(t, s, name, 30, 5)
	q := vecs["r010"]
	tests := []struct {
		name   string
		f      vectorstore.Filter
		k      int
		wantN  int
		accept func(id string, i int) bool
	}{
		{"ids", vectorstore.Filter{IDs: []string{"r001", "r029", "r013", "missing"}}, 10, 3,
			func(id string, _ int) bool { return id == "r001" || id == "r029" || id == "r013" }},
		{"ids exclude the best", vectorstore.Filter{IDs: []string{"r011", "r012"}}, 1, 1,
			func(id string, _ int) bool { return id == "r011" || id == "r012" }},
		{"attrs", vectorstore.Filter{Attrs: map[string]string{"parity": "odd"}}, 30, 15,
			func(id string, i int) bool { return i%2 == 1 }},
		{"ids and attrs", vectorstore.Filter{IDs: []string{"r000", "r001", "r002", "r003"}, Attrs: map[string]string{"parity": "even"}}, 10, 2,
			func(id string, i int) bool { return id == "r000" || id == "r002" }},
		{"two attrs", vectorstore.Filter{Attrs: map[string]string{"parity": "even", "group": "g0"}}, 30, 5,
			func(id string, i int) bool { return i%6 == 0 }},
		{"no match", vectorstore.Filter{Attrs: map[string]string{"parity": "none"}}, 5, 0, nil},
		{"unknown key", vectorstore.Filter{Attrs: map[string]string{"color": "red"}}, 5, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := s.Search(ctx, name, q, tc.k, tc.f)
			if err != nil {
				t.Fatalf("Search: %v", err)
			}
			if len(hits) != tc.wantN {
				t.Fatalf("Search = %v, want %d hits", ids(hits), tc.wantN)
			}
			for j, hit := range hits {
				var i int
				if _, err := fmt.Sscanf(hit.ID, "r%d", &i); err != nil {
					t.Fatalf("hit id %q: %v", hit.ID, err)
				}
				if !tc.accept(hit.ID, i) {
					t.Fatalf("hit %s does not satisfy the filter", hit.ID)
				}
				if math.Abs(hit.Score-cosine(q, vecs[hit.ID])) > 1e-4 {
					t.Fatalf("hit %s score %v, want %v", hit.ID, hit.Score, cosine(q, vecs[hit.ID]))
				}
				if j > 0 && vectorstore.CompareHits(hits[j-1], hit) > 0 {
					t.Fatalf("hits out of order: %v", ids(hits))
				}
			}
		})
	}
}

func (h *harness) testKLarge(t *testing.T) {
	ctx := context.Background()
	s, name := h.setup(t, h.f.Lexical)
	vecs := seeded(t, s, name, 7, 6)
	hits, err := s.Search(ctx, name, vecs["r001"], 100, vectorstore.Filter{})
	if err != nil || len(hits) != 7 {
		t.Fatalf("Search k=100 over 7 = %d hits, %v", len(hits), err)
	}
	if h.f.Lexical {
		hits, err := s.SearchText(ctx, name, "record", 100, vectorstore.Filter{})
		if err != nil || len(hits) != 7 {
			t.Fatalf("SearchText k=100 over 7 = %d hits, %v", len(hits), err)
		}
	}
}

func (h *harness) testTextUnsupported(t *testing.T) {
	s, name := h.setup(t, false)
	seeded(t, s, name, 2, 8)
	if _, err := s.SearchText(context.Background(), name, "record", 5, vectorstore.Filter{}); !errors.Is(err, vectorstore.ErrUnsupported) {
		t.Fatalf("SearchText on a non-lexical collection = %v, want ErrUnsupported", err)
	}
}

// textRecs builds records with the given texts, ids t0.., random vectors.
func textRecs(seed uint64, texts ...string) []vectorstore.Record {
	r := rand.New(rand.NewPCG(seed, 2))
	recs := make([]vectorstore.Record, len(texts))
	for i, txt := range texts {
		recs[i] = vectorstore.Record{ID: fmt.Sprintf("t%d", i), Vector: randVec(r), Text: txt,
			Attrs: map[string]string{"lang": []string{"en", "de"}[i%2]}}
	}
	return recs
}

func (h *harness) testBM25Rare(t *testing.T) {
	ctx := context.Background()
	s, name := h.setup(t, true)
	upsert(t, s, name, textRecs(1,
		"the brain releases dopamine when rewarded", // t0: rare term "dopamine"
		"the brain needs sleep and the brain needs food",
		"the brain is an organ",
		"motivation and the brain",
		"unrelated text about gardens",
	)...)
	hits, err := s.SearchText(ctx, name, "brain dopamine", 10, vectorstore.Filter{})
	if err != nil {
		t.Fatalf("SearchText: %v", err)
	}
	if len(hits) != 4 || hits[0].ID != "t0" {
		t.Fatalf("SearchText = %v; want 4 hits, t0 (with the rare term) first", ids(hits))
	}
	for i, hit := range hits {
		if hit.Score <= 0 || (i > 0 && vectorstore.CompareHits(hits[i-1], hit) > 0) {
			t.Fatalf("hits not ranked by positive score: %+v", hits)
		}
	}
	if hits[0].Text != "the brain releases dopamine when rewarded" || len(hits[0].Vector) != dim {
		t.Fatalf("hit does not carry its record: %+v", hits[0].Record)
	}
	// Stemming (English analyzer): "releasing" matches "releases".
	hits, err = s.SearchText(ctx, name, "releasing", 10, vectorstore.Filter{})
	if err != nil || !slices.Equal(ids(hits), []string{"t0"}) {
		t.Fatalf("SearchText(releasing) = %v, %v; want [t0]", ids(hits), err)
	}
	hits, err = s.SearchText(ctx, name, "   ", 10, vectorstore.Filter{})
	if err != nil || len(hits) != 0 {
		t.Fatalf("SearchText(blank) = %v, %v; want no hits", ids(hits), err)
	}
}

func (h *harness) testBM25Saturation(t *testing.T) {
	ctx := context.Background()
	s, name := h.setup(t, true)
	// Equal lengths (60 tokens) so only term frequency differs.
	doc := func(tf int) string {
		return strings.TrimSpace(strings.Repeat("neuron ", tf) + strings.Repeat("filler ", 60-tf))
	}
	upsert(t, s, name, textRecs(2, doc(1), doc(5), doc(50), strings.Repeat("filler ", 60))...)
	hits, err := s.SearchText(ctx, name, "neuron", 10, vectorstore.Filter{})
	if err != nil {
		t.Fatalf("SearchText: %v", err)
	}
	if !slices.Equal(ids(hits), []string{"t2", "t1", "t0"}) {
		t.Fatalf("SearchText = %v, want [t2 t1 t0]", ids(hits))
	}
	// BM25 saturates: 10x the term frequency gives far less than 10x (or
	// even sqrt(10)x, as TF-IDF would) the score.
	if ratio := hits[0].Score / hits[1].Score; ratio > 1.5 {
		t.Fatalf("score(tf=50)/score(tf=5) = %.2f, want BM25 saturation (< 1.5)", ratio)
	}
}

func (h *harness) testBM25Filters(t *testing.T) {
	ctx := context.Background()
	s, name := h.setup(t, true)
	upsert(t, s, name, textRecs(3,
		"graph communities summary", // t0 en
		"graph entities",            // t1 de
		"graph graph relationships", // t2 en
		"graph",                     // t3 de
	)...)
	tests := []struct {
		name string
		f    vectorstore.Filter
		want []string
	}{
		{"ids", vectorstore.Filter{IDs: []string{"t1", "t3", "nope"}}, []string{"t3", "t1"}},
		{"attrs", vectorstore.Filter{Attrs: map[string]string{"lang": "en"}}, []string{"t2", "t0"}},
		{"both", vectorstore.Filter{IDs: []string{"t0", "t1"}, Attrs: map[string]string{"lang": "de"}}, []string{"t1"}},
		{"no match", vectorstore.Filter{Attrs: map[string]string{"lang": "fr"}}, []string{}},
	}
	unfiltered, err := s.SearchText(ctx, name, "graph", 10, vectorstore.Filter{})
	if err != nil {
		t.Fatalf("SearchText: %v", err)
	}
	score := map[string]float64{}
	for _, hit := range unfiltered {
		score[hit.ID] = hit.Score
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := s.SearchText(ctx, name, "graph", 10, tc.f)
			if err != nil {
				t.Fatalf("SearchText: %v", err)
			}
			if !slices.Equal(ids(hits), tc.want) {
				t.Fatalf("SearchText = %v, want %v", ids(hits), tc.want)
			}
			// A filter restricts; it does not change scores.
			for _, hit := range hits {
				if math.Abs(hit.Score-score[hit.ID]) > 1e-9 {
					t.Fatalf("filtered score of %s = %v, unfiltered %v", hit.ID, hit.Score, score[hit.ID])
				}
			}
		})
	}
}

func (h *harness) testBM25Updates(t *testing.T) {
	ctx := context.Background()
	s, name := h.setup(t, true)
	upsert(t, s, name, textRecs(4, "apples and pears", "apples only", "pears only")...)
	if err := s.Delete(ctx, name, []string{"t1"}); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	hits, err := s.SearchText(ctx, name, "apples", 10, vectorstore.Filter{})
	if err != nil || !slices.Equal(ids(hits), []string{"t0"}) {
		t.Fatalf("SearchText after delete = %v, %v; want [t0]", ids(hits), err)
	}
	// Re-upsert t0 with other text: the old words no longer match.
	rec := textRecs(4, "cherries now")[0]
	upsert(t, s, name, rec)
	for q, want := range map[string][]string{"apples": {}, "cherries": {"t0"}, "pears": {"t2"}} {
		hits, err := s.SearchText(ctx, name, q, 10, vectorstore.Filter{})
		if err != nil || !slices.Equal(ids(hits), want) {
			t.Fatalf("SearchText(%s) after re-upsert = %v, %v; want %v", q, ids(hits), err, want)
		}
	}
}

func (h *harness) testPersistence(t *testing.T) {
	ctx := context.Background()
	s := h.open(t)
	dense, lex := collName(t), collName(t)
	for _, spec := range []vectorstore.CollectionSpec{{Name: dense, Dim: dim}, {Name: lex, Dim: dim, Lexical: h.f.Lexical}} {
		if err := s.EnsureCollection(ctx, spec); err != nil {
			t.Fatalf("EnsureCollection: %v", err)
		}
	}
	vecs := seeded(t, s, dense, 40, 9)
	upsert(t, s, lex, textRecs(5, "persistent words", "durable words", "gone words")...)
	if err := s.Delete(ctx, dense, []string{"r007"}); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if err := s.Delete(ctx, lex, []string{"t2"}); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	upsert(t, s, dense, vectorstore.Record{ID: "r008", Vector: vecs["r009"], Text: "moved"})

	s = h.f.Reopen(t, s)
	t.Cleanup(func() {
		_ = s.DropCollection(context.Background(), dense)
		_ = s.DropCollection(context.Background(), lex)
	})
	names, err := s.Collections(ctx)
	if err != nil || !slices.Contains(names, dense) || !slices.Contains(names, lex) {
		t.Fatalf("Collections after reopen = %v, %v", names, err)
	}
	if err := s.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: dense, Dim: dim + 1}); !errors.Is(err, vectorstore.ErrDimensionMismatch) {
		t.Fatalf("EnsureCollection with another dim after reopen = %v", err)
	}
	if n, err := s.Count(ctx, dense); err != nil || n != 39 {
		t.Fatalf("Count after reopen = %d, %v; want 39", n, err)
	}
	got, err := s.Get(ctx, dense, []string{"r003", "r007", "r008"})
	if err != nil || !slices.Equal(recIDs(got), []string{"r003", "r008"}) || !slices.Equal(got[0].Vector, vecs["r003"]) || got[1].Text != "moved" {
		t.Fatalf("Get after reopen = %+v, %v", got, err)
	}
	hits, err := s.Search(ctx, dense, vecs["r020"], 3, vectorstore.Filter{})
	if err != nil || len(hits) != 3 || hits[0].ID != "r020" {
		t.Fatalf("Search after reopen = %v, %v", ids(hits), err)
	}
	hits, err = s.Search(ctx, dense, vecs["r009"], 2, vectorstore.Filter{})
	if err != nil || !slices.Equal(ids(hits), []string{"r008", "r009"}) {
		t.Fatalf("Search for a replaced vector after reopen = %v, %v; want [r008 r009]", ids(hits), err)
	}
	if h.f.Lexical {
		hits, err := s.SearchText(ctx, lex, "words", 10, vectorstore.Filter{})
		if err != nil || !slices.Equal(ids(hits), []string{"t0", "t1"}) {
			t.Fatalf("SearchText after reopen = %v, %v; want [t0 t1]", ids(hits), err)
		}
	}
	// Writes continue after reopen.
	upsert(t, s, dense, vectorstore.Record{ID: "new", Vector: vecs["r007"]})
	hits, err = s.Search(ctx, dense, vecs["r007"], 1, vectorstore.Filter{})
	if err != nil || !slices.Equal(ids(hits), []string{"new"}) {
		t.Fatalf("Search for a record written after reopen = %v, %v", ids(hits), err)
	}
}

func (h *harness) testConcurrency(t *testing.T) {
	ctx := context.Background()
	s, name := h.setup(t, h.f.Lexical)
	const writers, perWriter = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	vecs := make([][]vectorstore.Record, writers)
	for w := range writers {
		r := rand.New(rand.NewPCG(uint64(w), 3))
		for i := range perWriter {
			vecs[w] = append(vecs[w], vectorstore.Record{ID: fmt.Sprintf("w%d_%02d", w, i), Vector: randVec(r), Text: fmt.Sprintf("writer%d item", w)})
		}
	}
	for w := range writers {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := 0; i < perWriter; i += 5 {
				if err := s.Upsert(ctx, name, vecs[w][i:i+5]); err != nil {
					errs <- err
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := range perWriter {
				if _, err := s.Search(ctx, name, vecs[w][i].Vector, 3, vectorstore.Filter{}); err != nil {
					errs <- err
					return
				}
				if h.f.Lexical {
					if _, err := s.SearchText(ctx, name, "item", 3, vectorstore.Filter{}); err != nil {
						errs <- err
						return
					}
				}
				if _, err := s.Count(ctx, name); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent operation: %v", err)
	}
	if n, _ := s.Count(ctx, name); n != writers*perWriter {
		t.Fatalf("Count = %d, want %d", n, writers*perWriter)
	}
	for w := range writers {
		for _, rec := range vecs[w] {
			hits, err := s.Search(ctx, name, rec.Vector, 1, vectorstore.Filter{})
			if err != nil || len(hits) != 1 || hits[0].ID != rec.ID {
				t.Fatalf("Search(%s) after concurrent writes = %v, %v", rec.ID, ids(hits), err)
			}
		}
	}
}

func (h *harness) testCanceled(t *testing.T) {
	s, name := h.setup(t, h.f.Lexical)
	seeded(t, s, name, 3, 10)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v := make([]float32, dim)
	v[0] = 1
	ops := map[string]func() error{
		"EnsureCollection": func() error {
			return s.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: name, Dim: dim, Lexical: h.f.Lexical})
		},
		"Upsert": func() error { return s.Upsert(ctx, name, []vectorstore.Record{{ID: "late", Vector: v}}) },
		"Get":    func() error { _, err := s.Get(ctx, name, []string{"r000"}); return err },
		"Delete": func() error { return s.Delete(ctx, name, []string{"r000"}) },
		"Search": func() error { _, err := s.Search(ctx, name, v, 1, vectorstore.Filter{}); return err },
		"SearchText": func() error {
			if !h.f.Lexical {
				return context.Canceled
			}
			_, err := s.SearchText(ctx, name, "record", 1, vectorstore.Filter{})
			return err
		},
		"Count":       func() error { _, err := s.Count(ctx, name); return err },
		"List":        func() error { _, _, err := s.List(ctx, name, "", 10); return err },
		"Collections": func() error { _, err := s.Collections(ctx); return err },
		"Ping":        func() error { return s.Ping(ctx) },
	}
	for op, fn := range ops {
		t.Run(op, func(t *testing.T) {
			if err := fn(); !errors.Is(err, context.Canceled) {
				t.Fatalf("%s with a canceled context = %v, want context.Canceled", op, err)
			}
		})
	}
	// Nothing was written or deleted by the canceled calls.
	got, err := s.Get(context.Background(), name, []string{"r000", "late"})
	if err != nil || !slices.Equal(recIDs(got), []string{"r000"}) {
		t.Fatalf("Get after canceled writes = %v, %v; want [r000]", recIDs(got), err)
	}
}

func (h *harness) testClose(t *testing.T) {
	ctx := context.Background()
	s := h.open(t)
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := s.Ping(ctx); !errors.Is(err, vectorstore.ErrClosed) {
		t.Fatalf("Ping after Close = %v, want ErrClosed", err)
	}
	if _, err := s.Collections(ctx); !errors.Is(err, vectorstore.ErrClosed) {
		t.Fatalf("Collections after Close = %v, want ErrClosed", err)
	}
}
