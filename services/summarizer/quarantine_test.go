package summarizer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// refusingVectors refuses, as invalid, every batch holding a record named in refuse.
type refusingVectors struct {
	VectorStore
	mu     sync.Mutex
	refuse map[string]bool
}

func (r *refusingVectors) Upsert(ctx context.Context, coll string, recs []vectorstore.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range recs {
		if r.refuse[rec.ID] {
			return fmt.Errorf("%w: record %s: refused by the test", vectorstore.ErrInvalidArgument, rec.ID)
		}
	}
	return r.VectorStore.Upsert(ctx, coll, recs)
}

// TestRefusedReportIsQuarantined: a report the store refuses as invalid is quarantined
// with its reason and not announced, its handler succeeds, and the reports written in
// the same group are written and announced; once the store takes it, a new event of
// the community writes it and takes it off the list.
func TestRefusedReportIsQuarantined(t *testing.T) {
	ctx := t.Context()
	ts, gv := batchFixture(t, 4)
	close(gv.release)
	rv := &refusingVectors{VectorStore: gv, refuse: map[string]bool{"c0-2": true}}
	ts.s.deps.Vectors, ts.s.writer.vectors = rv, rv
	for id, err := range handleAll(t, ts, 0, 4) {
		if err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	if got := ts.reports(t); !slices.Equal(got, []string{"c0-0", "c0-1", "c0-3"}) {
		t.Fatalf("reports %v, want all but c0-2", got)
	}
	for _, s := range ts.summaries(t) {
		if s.CommunityID == "c0-2" {
			t.Fatalf("the refused report was announced: %+v", s)
		}
	}
	qs, n, err := pipeline.QuarantinedRecords(ctx, ts.s.state, "demo", 10)
	if err != nil || n != 1 || qs[0].ID != "c0-2" || qs[0].Stage != pipeline.StageSummarizer || !strings.Contains(qs[0].Reason, "refused by the test") {
		t.Fatalf("quarantined %+v (%d) %v, want c0-2 with its reason", qs, n, err)
	}

	rv.mu.Lock()
	delete(rv.refuse, "c0-2")
	rv.mu.Unlock()
	if err := ts.s.handleCommunity(ctx, "demo", communityMsg(t, "c0-2", "run2")); err != nil {
		t.Fatal(err)
	}
	if got := ts.reports(t); len(got) != 4 {
		t.Fatalf("reports %v, want all four", got)
	}
	if _, n, err := pipeline.QuarantinedRecords(ctx, ts.s.state, "demo", 10); err != nil || n != 0 {
		t.Fatalf("%d reports still quarantined (%v) after the store took them", n, err)
	}
}
