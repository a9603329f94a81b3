package milvusstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/graphrag/graphrag/pkg/vectorstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeMilvus answers the few RPCs these tests need, the way Milvus does,
// and orders equal search scores by descending ID: the worst case for the
// driver's tie handling.
type fakeMilvus struct {
	milvuspb.UnimplementedMilvusServiceServer
	mu      sync.Mutex
	schemas map[string]*schemapb.CollectionSchema
	recs    []vectorstore.Record
	scores  []float32
	topks   []int
	upserts [][]*schemapb.FieldData
	auth    []string           // "authorization" metadata seen by ShowCollections
	dbs     []string           // "dbname" metadata seen by ShowCollections
	fail    []*commonpb.Status // statuses the next searches answer, in order
	writeTS uint64             // the timestamp Upsert reports (0, like Milvus Lite)
	wroteAt time.Time          // when the last Upsert handler returned
	readAt  []time.Time        // when each Search arrived
	queries []string           // "<expr> limit <n>" of each Query
}

func notFound() *commonpb.Status {
	return &commonpb.Status{ErrorCode: commonpb.ErrorCode_CollectionNotExists, Code: codeCollectionNotFound, Reason: "collection not found"} //nolint:staticcheck // SA1019: a server that sets the legacy code too
}

func (f *fakeMilvus) ShowCollections(ctx context.Context, _ *milvuspb.ShowCollectionsRequest) (*milvuspb.ShowCollectionsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		f.auth = append(f.auth, md.Get("authorization")...)
		f.dbs = append(f.dbs, md.Get("dbname")...)
	}
	resp := &milvuspb.ShowCollectionsResponse{Status: &commonpb.Status{}}
	for name := range f.schemas {
		resp.CollectionNames = append(resp.CollectionNames, name)
	}
	return resp, nil
}

func (f *fakeMilvus) DescribeCollection(_ context.Context, req *milvuspb.DescribeCollectionRequest) (*milvuspb.DescribeCollectionResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sch, ok := f.schemas[req.GetCollectionName()]
	if !ok {
		return &milvuspb.DescribeCollectionResponse{Status: notFound()}, nil
	}
	return &milvuspb.DescribeCollectionResponse{Status: &commonpb.Status{}, Schema: sch}, nil
}

func (f *fakeMilvus) Upsert(_ context.Context, req *milvuspb.UpsertRequest) (*milvuspb.MutationResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.upserts = append(f.upserts, req.GetFieldsData())
	f.wroteAt = time.Now()
	return &milvuspb.MutationResult{Status: &commonpb.Status{}, Timestamp: f.writeTS}, nil
}

func (f *fakeMilvus) Search(_ context.Context, req *milvuspb.SearchRequest) (*milvuspb.SearchResults, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var topk int
	for _, p := range req.GetSearchParams() {
		if p.GetKey() == "topk" {
			_, _ = fmt.Sscan(p.GetValue(), &topk) // a malformed topk is recorded as 0
		}
	}
	f.topks = append(f.topks, topk)
	f.readAt = append(f.readAt, time.Now())
	if len(f.fail) > 0 {
		st := f.fail[0]
		f.fail = f.fail[1:]
		return &milvuspb.SearchResults{Status: st}, nil
	}
	idx := make([]int, len(f.recs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if f.scores[a] != f.scores[b] {
			if f.scores[a] > f.scores[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(f.recs[b].ID, f.recs[a].ID)
	})
	idx = idx[:min(topk, len(idx))]
	var recs []vectorstore.Record
	var scores []float32
	var ids []string
	for _, i := range idx {
		recs = append(recs, f.recs[i])
		scores = append(scores, f.scores[i])
		ids = append(ids, f.recs[i].ID)
	}
	fields, err := encodeRecords(recs, len(f.recs[0].Vector))
	if err != nil {
		return nil, err
	}
	return &milvuspb.SearchResults{Status: &commonpb.Status{}, Results: &schemapb.SearchResultData{
		NumQueries: 1, TopK: int64(topk), FieldsData: fields, Scores: scores,
		Ids: &schemapb.IDs{IdField: &schemapb.IDs_StrId{StrId: &schemapb.StringArray{Data: ids}}},
	}}, nil
}

// startFake serves f on a loopback port and opens a store on it.
func startFake(t *testing.T, f *fakeMilvus, opts ...Option) *Store {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	milvuspb.RegisterMilvusServiceServer(srv, f)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(lis) }()
	t.Cleanup(func() { srv.Stop(); <-done })
	s, err := Open(context.Background(), lis.Addr().String(), opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func newFake(dim int, lexical bool) *fakeMilvus {
	return &fakeMilvus{schemas: map[string]*schemapb.CollectionSchema{
		"c": collectionSchema(vectorstore.CollectionSpec{Name: "c", Dim: dim, Lexical: lexical}),
	}}
}

func TestSearchTiesAtTheBoundary(t *testing.T) {
	tests := []struct {
		name      string
		n, k      int
		same      bool
		wantTopks []int
	}{
		// All tied: the server returns the largest IDs first, so the driver
		// must widen the request until the page is no longer full.
		{"all tied", 10, 3, true, []int{4, 8, 16}},
		// Distinct scores: one request with one extra record settles it.
		{"distinct", 10, 3, false, []int{4}},
		{"k above count", 5, 10, true, []int{11}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(2, false)
			for i := range tc.n {
				v := []float32{1, 0}
				if !tc.same {
					v = []float32{1, float32(i)}
				}
				f.recs = append(f.recs, vectorstore.Record{ID: fmt.Sprintf("r%02d", i), Vector: v})
				f.scores = append(f.scores, float32(cosine([]float32{1, 0}, v)))
			}
			s := startFake(t, f)
			hits, err := s.Search(context.Background(), "c", []float32{2, 0}, tc.k, vectorstore.Filter{})
			if err != nil {
				t.Fatalf("Search: %v", err)
			}
			var got []string
			for _, h := range hits {
				got = append(got, h.ID)
			}
			var want []string
			for i := range min(tc.k, tc.n) {
				want = append(want, fmt.Sprintf("r%02d", i))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("Search = %v, want %v", got, want)
			}
			if !slices.Equal(f.topks, tc.wantTopks) {
				t.Fatalf("topk requested = %v, want %v", f.topks, tc.wantTopks)
			}
		})
	}
}

// Milvus Lite builds BM25 query vectors from statistics that can be
// inconsistent while upserts run; SearchText tries again, a bounded number of
// times, and only for that error.
func TestSearchTextRetriesInconsistentBM25Stats(t *testing.T) {
	negative := func() *commonpb.Status {
		return &commonpb.Status{ErrorCode: commonpb.ErrorCode_Success, Code: 2000, //nolint:staticcheck // SA1019: a server that sets the legacy code too
			Reason: `Assert "element.val >= 0"  => Invalid sparse row: negative value`}
	}
	setup := func(fail ...*commonpb.Status) (*fakeMilvus, *Store) {
		f := newFake(2, true)
		f.recs = []vectorstore.Record{{ID: "a", Vector: []float32{1, 0}, Text: "item"}}
		f.scores = []float32{1.5}
		f.fail = fail
		return f, startFake(t, f)
	}

	f, s := setup(negative(), negative())
	hits, err := s.SearchText(context.Background(), "c", "item", 3, vectorstore.Filter{})
	if err != nil || len(hits) != 1 || hits[0].ID != "a" {
		t.Fatalf("SearchText after two transient failures = %v, %v; want [a]", hits, err)
	}
	if len(f.topks) != 3 {
		t.Fatalf("searches = %d, want 3", len(f.topks))
	}

	// A lasting failure ends with the server's error after the bounded tries.
	var fail []*commonpb.Status
	for range len(bm25StatsBackoff) + 5 {
		fail = append(fail, negative())
	}
	f, s = setup(fail...)
	if _, err := s.SearchText(context.Background(), "c", "item", 3, vectorstore.Filter{}); err == nil || !strings.Contains(err.Error(), "negative value") {
		t.Fatalf("SearchText with a lasting failure: err = %v, want the server's", err)
	}
	if len(f.topks) != len(bm25StatsBackoff)+1 {
		t.Fatalf("searches = %d, want %d", len(f.topks), len(bm25StatsBackoff)+1)
	}

	// Any other server error is returned at once.
	f, s = setup(&commonpb.Status{ErrorCode: commonpb.ErrorCode_UnexpectedError, Code: 65535, Reason: "boom"}) //nolint:staticcheck // SA1019: a server that sets the legacy code too
	if _, err := s.SearchText(context.Background(), "c", "item", 3, vectorstore.Filter{}); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("SearchText with another error: err = %v", err)
	}
	if len(f.topks) != 1 {
		t.Fatalf("searches = %d, want 1", len(f.topks))
	}
}

// Milvus Lite reports no write timestamp and makes a row visible only from the
// millisecond after its insert: a Strong read right after a write waits that
// long. Milvus reports the timestamp, and its reads need no wait.
func TestReadAfterUntimedWriteWaits(t *testing.T) {
	for _, ts := range []uint64{0, 42} {
		f := newFake(2, false)
		f.recs = []vectorstore.Record{{ID: "a", Vector: []float32{1, 0}}}
		f.scores = []float32{1}
		f.writeTS = ts
		s := startFake(t, f)
		for range 3 {
			if err := s.Upsert(context.Background(), "c", []vectorstore.Record{{ID: "a", Vector: []float32{1, 0}}}); err != nil {
				t.Fatalf("Upsert: %v", err)
			}
			if _, err := s.Search(context.Background(), "c", []float32{1, 0}, 1, vectorstore.Filter{}); err != nil {
				t.Fatalf("Search: %v", err)
			}
			f.mu.Lock()
			gap := f.readAt[len(f.readAt)-1].Sub(f.wroteAt)
			f.mu.Unlock()
			if ts == 0 && gap < liteVisibilityLag {
				t.Fatalf("Search arrived %v after an untimed write, want at least %v", gap, liteVisibilityLag)
			}
		}
		if got := s.s.untimedWrite.Load() != 0; got != (ts == 0) {
			t.Fatalf("write timestamp %d: untimed write recorded = %v", ts, got)
		}
	}
}

func TestNotFound(t *testing.T) {
	ctx := context.Background()
	s := startFake(t, newFake(2, false))
	v := []float32{1, 0}
	ops := map[string]func() error{
		"Upsert":     func() error { return s.Upsert(ctx, "missing", []vectorstore.Record{{ID: "a", Vector: v}}) },
		"Get":        func() error { _, err := s.Get(ctx, "missing", []string{"a"}); return err },
		"Search":     func() error { _, err := s.Search(ctx, "missing", v, 1, vectorstore.Filter{}); return err },
		"SearchText": func() error { _, err := s.SearchText(ctx, "missing", "x", 1, vectorstore.Filter{}); return err },
		"Count":      func() error { _, err := s.Count(ctx, "missing"); return err },
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			err := op()
			var se *ServerError
			if !errors.Is(err, vectorstore.ErrNotFound) || !errors.As(err, &se) || se.Code != codeCollectionNotFound {
				t.Fatalf("%s on a missing collection = %v, want ErrNotFound from a ServerError", name, err)
			}
		})
	}
	if _, err := s.SearchText(ctx, "c", "x", 1, vectorstore.Filter{}); !errors.Is(err, vectorstore.ErrUnsupported) {
		t.Fatalf("SearchText on a dense collection = %v, want ErrUnsupported", err)
	}
}

func TestUpsertEncoding(t *testing.T) {
	ctx := context.Background()
	long := strings.Repeat("é", MaxTextBytes/2+1) // MaxTextBytes+1 bytes, two per rune
	tests := []struct {
		name    string
		opts    []Option
		recs    []vectorstore.Record
		want    []vectorstore.Record // what the server receives; nil: refused
		wantErr error
	}{
		{"last duplicate wins", nil,
			[]vectorstore.Record{{ID: "a", Vector: []float32{1, 0}, Text: "old"}, {ID: "b", Vector: []float32{0, 1}, Attrs: map[string]string{"k": `"v"`}}, {ID: "a", Vector: []float32{2, 0}, Text: "new"}},
			[]vectorstore.Record{{ID: "b", Vector: []float32{0, 1}, Attrs: map[string]string{"k": `"v"`}}, {ID: "a", Vector: []float32{2, 0}, Text: "new"}}, nil},
		{"text too long", nil, []vectorstore.Record{{ID: "a", Vector: []float32{1, 0}, Text: long}}, nil, vectorstore.ErrInvalidArgument},
		{"text truncated", []Option{WithTruncateText(true)}, []vectorstore.Record{{ID: "a", Vector: []float32{1, 0}, Text: long}},
			// Cut at the rune boundary below the limit.
			[]vectorstore.Record{{ID: "a", Vector: []float32{1, 0}, Text: long[:MaxTextBytes-1]}}, nil},
		{"id too long", nil, []vectorstore.Record{{ID: strings.Repeat("x", MaxIDBytes+1), Vector: []float32{1, 0}}}, nil, vectorstore.ErrInvalidArgument},
		{"id with a line break", nil, []vectorstore.Record{{ID: "a\nb", Vector: []float32{1, 0}}}, nil, vectorstore.ErrInvalidArgument},
		{"text not UTF-8", nil, []vectorstore.Record{{ID: "a", Vector: []float32{1, 0}, Text: "\xff"}}, nil, vectorstore.ErrInvalidArgument},
		{"wrong dim", nil, []vectorstore.Record{{ID: "a", Vector: []float32{1, 0, 0}}}, nil, vectorstore.ErrDimensionMismatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(2, false)
			s := startFake(t, f, tc.opts...) //nolint:contextcheck // the test helper opens with its own context
			err := s.Upsert(ctx, "c", tc.recs)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || len(f.upserts) != 0 {
					t.Fatalf("Upsert = %v after %d requests; want %v before any", err, len(f.upserts), tc.wantErr)
				}
				return
			}
			if err != nil || len(f.upserts) != 1 {
				t.Fatalf("Upsert = %v, %d requests", err, len(f.upserts))
			}
			got, err := decodeRecords(f.upserts[0])
			if err != nil {
				t.Fatalf("decoding the request: %v", err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("server received %.200v, want %.200v", fmt.Sprint(got), fmt.Sprint(tc.want))
			}
		})
	}
}

func TestClosedAndCanceled(t *testing.T) {
	s := startFake(t, newFake(2, false))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Count(ctx, "c"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Count with a canceled context = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := s.Ping(context.Background()); !errors.Is(err, vectorstore.ErrClosed) {
		t.Fatalf("Ping after Close = %v", err)
	}
}

func TestOpenUnreachable(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close() // nothing listens there now
	s, err := Open(context.Background(), addr, WithDialTimeout(300*time.Millisecond))
	if err == nil {
		s.Close()
		t.Fatal("Open of a closed port succeeded")
	}
}

func TestCheck(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		st   *commonpb.Status
		err  error
		want error
	}{
		{"success", &commonpb.Status{}, nil, nil},
		{"nil status", nil, nil, nil},
		{"not found by code", &commonpb.Status{Code: 100}, nil, vectorstore.ErrNotFound},
		{"not found by legacy code", &commonpb.Status{ErrorCode: commonpb.ErrorCode_CollectionNotExists}, nil, vectorstore.ErrNotFound}, //nolint:staticcheck // SA1019: the legacy code alone (older servers)
		{"grpc canceled", nil, status.Error(codes.Canceled, "x"), context.Canceled},
		{"grpc deadline", nil, status.Error(codes.DeadlineExceeded, "x"), context.DeadlineExceeded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := check(ctx, "doing", tc.st, tc.err)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("check = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("check = %v, want %v", err, tc.want)
			}
		})
	}
	other := check(ctx, "doing", &commonpb.Status{Code: 1100, Reason: "bad"}, nil)
	if other == nil || errors.Is(other, vectorstore.ErrNotFound) || !strings.Contains(other.Error(), "bad") {
		t.Fatalf("check(other error) = %v", other)
	}
}

func TestSchemaRoundTrip(t *testing.T) {
	for _, spec := range []vectorstore.CollectionSpec{{Name: "d", Dim: 384}, {Name: "l", Dim: 8, Lexical: true}} {
		info, err := infoFromSchema(spec.Name, collectionSchema(spec))
		if err != nil || info.dim != spec.Dim || info.lexical != spec.Lexical {
			t.Fatalf("infoFromSchema(collectionSchema(%+v)) = %+v, %v", spec, info, err)
		}
	}
	foreign := &schemapb.CollectionSchema{Fields: []*schemapb.FieldSchema{{Name: "pk", DataType: schemapb.DataType_Int64, IsPrimaryKey: true}}}
	if _, err := infoFromSchema("f", foreign); !errors.Is(err, vectorstore.ErrUnsupported) {
		t.Fatalf("infoFromSchema(foreign) = %v, want ErrUnsupported", err)
	}
}

func TestTruncateUTF8(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abc", 2, "ab"},
		{"aé", 2, "a"}, // é is two bytes: never split
		{"aé", 3, "aé"},
		{"🚀x", 3, ""},
	}
	for _, tc := range tests {
		if got := truncateUTF8(tc.s, tc.n); got != tc.want {
			t.Errorf("truncateUTF8(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

// Credentials and the database travel as metadata on every call, encoded as Milvus'
// clients encode them.
func TestCredentialsMetadata(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
		auth string
	}{
		{"user and password", []Option{WithCredentials("root", "Milvus"), WithDatabase("rag")}, "cm9vdDpNaWx2dXM="},
		{"token", []Option{WithToken("api-key-1")}, "YXBpLWtleS0x"},
		{"none", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(4, false)
			s := startFake(t, f, tc.opts...)
			if err := s.Ping(t.Context()); err != nil {
				t.Fatal(err)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if tc.auth == "" {
				if len(f.auth) != 0 {
					t.Fatalf("authorization sent without credentials: %v", f.auth)
				}
				return
			}
			if len(f.auth) < 2 || f.auth[len(f.auth)-1] != tc.auth {
				t.Fatalf("authorization %v, want %q on every call", f.auth, tc.auth)
			}
			if tc.name == "user and password" && (len(f.dbs) < 2 || f.dbs[len(f.dbs)-1] != "rag") {
				t.Fatalf("dbname %v, want rag alongside the credentials", f.dbs)
			}
		})
	}
}
