package extractor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// refusingStore refuses, as invalid, every batch holding a record whose text contains
// poison, as Milvus refuses a record it cannot hold.
type refusingStore struct {
	vectorstore.Store
	poison string
}

func (r refusingStore) Upsert(ctx context.Context, coll string, recs []vectorstore.Record) error {
	for _, rec := range recs {
		if strings.Contains(rec.Text, r.poison) {
			return fmt.Errorf("%w: record %s: refused by the test", vectorstore.ErrInvalidArgument, rec.ID)
		}
	}
	return r.Store.Upsert(ctx, coll, recs)
}

// TestRefusedChunkIsQuarantined: a chunk record the vector store refuses is quarantined
// with its reason, the other chunks of its document are written, the chunk's event says
// it is skipped and why, and the document completes; a new version of the document
// takes the chunk off the list.
func TestRefusedChunkIsQuarantined(t *testing.T) {
	f := newFixture(t, nil)
	store := f.svc.deps.Vectors.(vectorstore.Store)
	f.svc.deps.Vectors = refusingStore{Store: store, poison: "Zyxwv"}
	f.svc.cfg.ChunkTokens, f.svc.cfg.ChunkOverlap = 40, 0
	ctx := t.Context()
	if err := f.svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.svc.Stop(context.Background()) })
	var text strings.Builder
	for i := range 8 {
		fmt.Fprintf(&text, "Ada Quillane surveyed the estuary of Marrow Bay in year %d of the survey, with her team of divers.\n\n", 1900+i)
	}
	text.WriteString("The Zyxwv lighthouse stands alone on the northern cape of Marrow Bay.\n\n")
	if _, err := pipeline.PublishDocument(ctx, f.bus, events.Document{Corpus: "demo", ID: "d1", Title: "Survey", Text: text.String()}); err != nil {
		t.Fatal(err)
	}
	waitStage(t, f.bus, 1)

	st, err := pipeline.GetStatus(ctx, f.bus, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if st.Quarantined != 1 || len(st.QuarantinedRecords) != 1 {
		t.Fatalf("quarantined %d %+v, want the one chunk", st.Quarantined, st.QuarantinedRecords)
	}
	q := st.QuarantinedRecords[0]
	if q.Stage != pipeline.StageChunker || q.Collection != schema.Collection("demo", schema.Chunks) || !strings.Contains(q.Reason, "refused by the test") {
		t.Fatalf("quarantined %+v, want the chunk with its reason", q)
	}
	for _, ss := range st.Stages[:2] {
		if ss.Pending+ss.InFlight != 0 || ss.DeadLettered != 0 {
			t.Fatalf("stage %+v: want everything handled, nothing dead-lettered", ss)
		}
	}
	rec, _, err := pipeline.LoadDocument(ctx, f.svc.state, "demo", "d1")
	if err != nil || rec.State != pipeline.StateIndexed {
		t.Fatalf("document record %+v %v, want indexed", rec, err)
	}
	ids := chunkIDs(t, f)
	if len(ids) < 3 || len(ids) != rec.Chunks.Len()-1 || slices.Contains(ids, q.ID) {
		t.Fatalf("chunk records %v of %d chunks, want all but %s", ids, rec.Chunks.Len(), q.ID)
	}
	skipped := 0
	for _, d := range bustest.Messages(t, f.bus, pipeline.StreamName(events.KindExtractions), events.Subject(events.KindExtractions, "demo")) {
		var x events.Extraction
		if events.Decode(d, &x) == nil && strings.HasPrefix(x.Skipped, quarantinedSkip) {
			skipped++
			if x.ChunkID != q.ID || !strings.Contains(x.Skipped, "refused by the test") {
				t.Errorf("extraction %+v, want the quarantined chunk %s with its reason", x, q.ID)
			}
		}
	}
	if skipped != 1 {
		t.Fatalf("%d extractions of a quarantined chunk, want 1", skipped)
	}

	if _, err := pipeline.PublishDocument(ctx, f.bus, events.Document{Corpus: "demo", ID: "d1", Title: "Survey", Text: "Ada Quillane retired."}); err != nil {
		t.Fatal(err)
	}
	waitStage(t, f.bus, 2)
	if _, n, err := pipeline.QuarantinedRecords(ctx, f.svc.state, "demo", 10); err != nil || n != 0 {
		t.Fatalf("%d records still quarantined (%v) after their version was retired", n, err)
	}

	// A drop forgets what every stage quarantined in the corpus.
	if err := pipeline.Quarantine(ctx, f.svc.state, "demo", pipeline.StageGrapher, schema.Collection("demo", schema.Entities),
		[]vectorstore.Refused{{ID: "all", Err: vectorstore.ErrInvalidArgument}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.DropCorpus(ctx, f.bus, "demo", "test"); err != nil {
		t.Fatal(err)
	}
	waitStage(t, f.bus, 3)
	if qs, n, err := pipeline.QuarantinedRecords(ctx, f.svc.state, "demo", 10); err != nil || n != 0 {
		t.Fatalf("quarantined %+v (%d, %v) after the corpus was dropped", qs, n, err)
	}
}
