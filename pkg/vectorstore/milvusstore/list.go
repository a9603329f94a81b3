package milvusstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
)

// List implements vectorstore.Store with one query per page: `id > "after"`
// limited to the page size plus one, the extra ID telling whether more
// follow. It relies on a query with a limit returning the smallest matching
// primary keys in ascending order: segcore picks each segment's first rows
// by primary key (its growing and sealed primary-key indexes are ordered)
// and the partial results are merged by primary key, which is also what
// pymilvus' query iterator builds on. Measured on Milvus Lite 2.5.1 across
// flushed and growing segments, replaced and deleted records, and non-ASCII
// IDs (byte order, as Go compares strings): list_integration_test.go. A page
// out of order is an error rather than a silent gap.
func (s *store) List(ctx context.Context, coll, after string, limit int) ([]string, string, error) {
	if err := s.begin(ctx); err != nil {
		return nil, "", err
	}
	if _, err := s.info(ctx, coll); err != nil {
		return nil, "", fmt.Errorf("listing records of %q: %w", coll, err)
	}
	// Milvus accepts limits up to MaxK; one is kept for the look-ahead.
	page := min(limit, MaxK-1)
	expr := ""
	if after != "" {
		q, err := quoteString(after)
		if err != nil {
			return nil, "", fmt.Errorf("listing records of %q after a cursor: %w", coll, err)
		}
		expr = fieldID + " > " + q
	}
	if err := s.awaitVisibility(ctx); err != nil {
		return nil, "", fmt.Errorf("milvusstore: listing records of %q: %w", coll, err)
	}
	var resp *milvuspb.QueryResults
	err := s.retryLoad(ctx, coll, func() error {
		var err error
		resp, err = s.svc.Query(ctx, &milvuspb.QueryRequest{
			CollectionName:   coll,
			Expr:             expr,
			OutputFields:     []string{fieldID},
			QueryParams:      []*commonpb.KeyValuePair{kv("limit", strconv.Itoa(page+1))},
			ConsistencyLevel: s.cfg.consistency.proto(),
		})
		return check(ctx, fmt.Sprintf("listing records of %q", coll), resp.GetStatus(), err)
	})
	if err != nil {
		s.forget(coll, err)
		return nil, "", err
	}
	ids, err := pageIDs(resp.GetFieldsData(), after)
	if err != nil {
		return nil, "", fmt.Errorf("milvusstore: listing records of %q: %w", coll, err)
	}
	if len(ids) <= page {
		return ids, "", nil
	}
	ids = ids[:page]
	return ids, ids[page-1], nil
}

// pageIDs reads the id column of a List query and checks that it is what
// paging needs: every ID after the cursor, strictly ascending.
func pageIDs(fields []*schemapb.FieldData, after string) ([]string, error) {
	var ids []string
	for _, fd := range fields {
		if fd.GetFieldName() == fieldID {
			ids = fd.GetScalars().GetStringData().GetData()
		}
	}
	prev := after
	for _, id := range ids {
		if id <= prev {
			return nil, fmt.Errorf("the server returned IDs out of primary-key order (%q after %q), which paging cannot survive", id, prev)
		}
		prev = id
	}
	return ids, nil
}
