package milvusstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/graphrag/graphrag/pkg/vectorstore"
)

func TestPageIDs(t *testing.T) {
	tests := []struct {
		name  string
		after string
		ids   []string
		ok    bool
	}{
		{"ascending from the start", "", []string{"a", "b", "c"}, true},
		{"ascending after the cursor", "a", []string{"b", "c"}, true},
		{"empty", "z", nil, true},
		{"out of order", "", []string{"a", "c", "b"}, false},
		{"repeated", "", []string{"a", "a"}, false},
		{"not after the cursor", "b", []string{"b", "c"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pageIDs([]*schemapb.FieldData{stringField(fieldID, tc.ids)}, tc.after)
			if (err == nil) != tc.ok {
				t.Fatalf("pageIDs(%q after %q) error = %v, want ok %v", tc.ids, tc.after, err, tc.ok)
			}
			if tc.ok && !slices.Equal(got, tc.ids) {
				t.Fatalf("pageIDs = %q, want %q", got, tc.ids)
			}
		})
	}
}

// Query answers List's queries the way Milvus does (see List): the smallest
// IDs after the cursor, ascending, at most limit of them.
func (f *fakeMilvus) Query(_ context.Context, req *milvuspb.QueryRequest) (*milvuspb.QueryResults, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	limit := 0
	for _, p := range req.GetQueryParams() {
		if p.GetKey() == "limit" {
			limit, _ = strconv.Atoi(p.GetValue())
		}
	}
	f.queries = append(f.queries, fmt.Sprintf("%s limit %d", req.GetExpr(), limit))
	after := ""
	if e := req.GetExpr(); e != "" {
		var err error
		if after, err = strconv.Unquote(strings.TrimPrefix(e, fieldID+" > ")); err != nil {
			return nil, err
		}
	}
	var ids []string
	for _, r := range f.recs {
		if r.ID > after {
			ids = append(ids, r.ID)
		}
	}
	slices.Sort(ids)
	ids = ids[:min(limit, len(ids))]
	return &milvuspb.QueryResults{Status: &commonpb.Status{}, FieldsData: []*schemapb.FieldData{stringField(fieldID, ids)}}, nil
}

func TestListPages(t *testing.T) {
	f := newFake(2, false)
	for _, id := range []string{"d", "a", "e", "c", "b"} {
		f.recs = append(f.recs, vectorstore.Record{ID: id, Vector: []float32{1, 0}})
	}
	s := startFake(t, f)
	type page struct {
		ids  []string
		next string
	}
	var got []page
	after := ""
	for {
		ids, next, err := s.List(context.Background(), "c", after, 2)
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		got = append(got, page{ids, next})
		if next == "" {
			break
		}
		after = next
	}
	want := []page{{[]string{"a", "b"}, "b"}, {[]string{"c", "d"}, "d"}, {[]string{"e"}, ""}}
	if !slices.EqualFunc(got, want, func(a, b page) bool { return slices.Equal(a.ids, b.ids) && a.next == b.next }) {
		t.Fatalf("pages = %v, want %v", got, want)
	}
	// One ID more than the page is asked for, to tell whether more follow.
	wantQueries := []string{" limit 3", `id > "b" limit 3`, `id > "d" limit 3`}
	if !slices.Equal(f.queries, wantQueries) {
		t.Fatalf("queries = %q, want %q", f.queries, wantQueries)
	}
	// Milvus refuses limits above MaxK: a larger page is cut.
	f.queries = nil
	if _, _, err := s.List(context.Background(), "c", "", MaxK+10); err != nil {
		t.Fatalf("List: %v", err)
	}
	if want := fmt.Sprintf(" limit %d", MaxK); !slices.Equal(f.queries, []string{want}) {
		t.Fatalf("queries = %q, want [%q]", f.queries, want)
	}
}
