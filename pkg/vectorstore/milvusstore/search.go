package milvusstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"google.golang.org/protobuf/proto"

	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// tieEpsilon: scores closer than this are treated as tied when deciding
// whether records beyond a full page could still belong to the top k
// (Milvus computes scores in float32).
const tieEpsilon = 1e-5

// query describes one kind of search: the field, its metric, the encoded
// query and how to score a hit.
type query struct {
	field        string
	metric       string
	phType       commonpb.PlaceholderType
	phValue      []byte
	params       map[string]any
	rescore      func(vectorstore.Record) float64 // nil: keep Milvus' score
	positiveOnly bool
}

// Search implements vectorstore.Store. Milvus finds the candidates; scores
// are recomputed in float64 from the returned vectors so that they are
// exact cosine similarities, equal for parallel vectors, and ties are broken
// by ID as in every driver.
func (s *store) Search(ctx context.Context, coll string, vec []float32, k int, f vectorstore.Filter) ([]vectorstore.Hit, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	info, err := s.info(ctx, coll)
	if err != nil {
		return nil, fmt.Errorf("searching %q: %w", coll, err)
	}
	if err := vectorstore.ValidateVector(vec, info.dim); err != nil {
		return nil, fmt.Errorf("searching %q: %w", coll, err)
	}
	q := query{
		field: fieldVector, metric: "COSINE",
		phType: commonpb.PlaceholderType_FloatVector, phValue: floatVectorBytes(vec),
		rescore: func(r vectorstore.Record) float64 { return cosine(vec, r.Vector) },
	}
	return s.topK(ctx, coll, q, k, f)
}

// SearchText implements vectorstore.Store with Milvus full-text search: the
// query is analyzed by the server (English analyzer) and ranked by BM25
// against the sparse field the BM25 function fills from the text.
func (s *store) SearchText(ctx context.Context, coll string, text string, k int, f vectorstore.Filter) ([]vectorstore.Hit, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	info, err := s.info(ctx, coll)
	if err != nil {
		return nil, fmt.Errorf("searching text in %q: %w", coll, err)
	}
	if !info.lexical {
		return nil, fmt.Errorf("searching text in %q: %w: the collection has no BM25 index", coll, vectorstore.ErrUnsupported)
	}
	if strings.TrimSpace(text) == "" {
		return []vectorstore.Hit{}, nil
	}
	q := query{
		field: fieldSparse, metric: "BM25",
		phType: commonpb.PlaceholderType_VarChar, phValue: []byte(text),
		params:       map[string]any{"drop_ratio_search": 0},
		positiveOnly: true,
	}
	hits, err := s.topK(ctx, coll, q, k, f)
	for _, wait := range bm25StatsBackoff {
		if !isBadSparseRow(err) {
			break
		}
		// Milvus Lite 2.5 fails BM25 searches of an empty collection (its
		// average document length is 0/0, "Invalid sparse row: NaN or Inf"),
		// and, while upserts run, can score the query with document
		// frequencies counted on more records than its total, which makes an
		// IDF negative ("Invalid sparse row: negative value"). An empty
		// collection has no hits; otherwise the statistics settle within
		// milliseconds and the search is worth a few more tries.
		if n, cerr := s.Count(ctx, coll); cerr == nil && n == 0 {
			return []vectorstore.Hit{}, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("searching text in %q: %w (after: %v)", coll, ctx.Err(), err) //nolint:errorlint // ctx's error decides; the last attempt's is detail
		case <-time.After(wait):
		}
		hits, err = s.topK(ctx, coll, q, k, f)
	}
	return hits, err
}

// bm25StatsBackoff is how long SearchText waits before each new try of a
// search Milvus rejected for inconsistent BM25 statistics.
var bm25StatsBackoff = []time.Duration{20 * time.Millisecond, 100 * time.Millisecond, 500 * time.Millisecond}

// isBadSparseRow reports whether Milvus rejected a BM25 query vector it built
// itself (see SearchText): a transient server-side state, not a bad request.
func isBadSparseRow(err error) bool {
	var se *ServerError
	return errors.As(err, &se) && strings.Contains(se.Reason, "Invalid sparse row")
}

// topK runs q and returns the best k hits ordered by vectorstore.CompareHits.
// Milvus orders equal scores arbitrarily and cuts at its limit, so it asks
// for one more than k; when the last record of a full page scores like the
// k-th, a tied record with a smaller ID may lie beyond the page, and it asks
// again with twice the limit.
func (s *store) topK(ctx context.Context, coll string, q query, k int, f vectorstore.Filter) ([]vectorstore.Hit, error) {
	expr, none, err := filterExpr(f)
	if err != nil {
		return nil, err
	}
	if none {
		return []vectorstore.Hit{}, nil
	}
	k = min(k, MaxK)
	limit := min(k+1, MaxK)
	for {
		hits, lowest, full, err := s.searchOnce(ctx, coll, q, expr, limit)
		if err != nil {
			return nil, err
		}
		vectorstore.SortHits(hits)
		if !full || limit == MaxK || len(hits) <= k || hits[k-1].Score-lowest > tieEpsilon {
			return hits[:min(k, len(hits))], nil
		}
		limit = min(2*limit, MaxK)
	}
}

// searchOnce runs one Milvus search. It returns the hits, the lowest score
// Milvus reported and whether the page was full (more records may match).
func (s *store) searchOnce(ctx context.Context, coll string, q query, expr string, limit int) ([]vectorstore.Hit, float64, bool, error) {
	ph, err := proto.Marshal(&commonpb.PlaceholderGroup{Placeholders: []*commonpb.PlaceholderValue{{
		Tag: "$0", Type: q.phType, Values: [][]byte{q.phValue},
	}}})
	if err != nil {
		return nil, 0, false, fmt.Errorf("milvusstore: encoding the query: %w", err)
	}
	params := map[string]any{}
	maps.Copy(params, q.params)
	if q.field == fieldVector && s.cfg.index == IndexHNSW {
		params["ef"] = max(limit, s.cfg.hnswEf)
	}
	pj, err := json.Marshal(params)
	if err != nil {
		return nil, 0, false, fmt.Errorf("milvusstore: encoding search parameters: %w", err)
	}
	req := &milvuspb.SearchRequest{
		CollectionName: coll,
		Dsl:            expr,
		DslType:        commonpb.DslType_BoolExprV1,
		SearchInput:    &milvuspb.SearchRequest_PlaceholderGroup{PlaceholderGroup: ph},
		OutputFields:   outputFields,
		SearchParams: []*commonpb.KeyValuePair{
			kv("anns_field", q.field), kv("topk", strconv.Itoa(limit)), kv("metric_type", q.metric),
			kv("params", string(pj)), kv("round_decimal", "-1"), kv("offset", "0"),
		},
		Nq:               1,
		ConsistencyLevel: s.cfg.consistency.proto(),
	}
	if err := s.awaitVisibility(ctx); err != nil {
		return nil, 0, false, fmt.Errorf("milvusstore: searching %q: %w", coll, err)
	}
	var resp *milvuspb.SearchResults
	err = s.retryLoad(ctx, coll, func() error {
		var err error
		resp, err = s.svc.Search(ctx, req)
		return check(ctx, fmt.Sprintf("searching %q", coll), resp.GetStatus(), err)
	})
	if err != nil {
		s.forget(coll, err)
		return nil, 0, false, err
	}
	res := resp.GetResults()
	if res.GetNumQueries() == 0 || len(res.GetIds().GetStrId().GetData()) == 0 {
		return []vectorstore.Hit{}, 0, false, nil
	}
	recs, err := decodeRecords(res.GetFieldsData())
	if err != nil {
		return nil, 0, false, fmt.Errorf("searching %q: %w", coll, err)
	}
	scores := res.GetScores()
	if len(scores) != len(recs) {
		return nil, 0, false, fmt.Errorf("milvusstore: searching %q: %d scores for %d records", coll, len(scores), len(recs))
	}
	hits := make([]vectorstore.Hit, 0, len(recs))
	lowest := math.Inf(1)
	for i, r := range recs {
		sc := float64(scores[i])
		lowest = min(lowest, sc)
		if q.rescore != nil {
			sc = q.rescore(r)
		}
		if q.positiveOnly && sc <= 0 {
			continue
		}
		hits = append(hits, vectorstore.Hit{Record: r, Score: sc})
	}
	return hits, lowest, len(recs) >= limit, nil
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
