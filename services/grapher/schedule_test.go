package grapher

import (
	"slices"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/pipeline"
)

// While a corpus streams in without a pause, forced detection runs grow geometrically:
// the first comes after MaxChanges merged chunks, and later ones wait until the graph
// has grown DetectGrowth-fold, so the reports rewritten along the way stay a bounded
// share of the final count instead of one full rewrite per MaxChanges chunks.
func TestForcedDetectionRunsGrowGeometrically(t *testing.T) {
	s := &Service{cfg: Config{MaxChanges: 10, DetectGrowth: 5}}
	st := &corpusState{}
	var runs []int // merged chunks at each forced run
	for range 1000 {
		st.state.Changes++
		st.merged++
		if s.forced(st) {
			runs = append(runs, st.merged)
			st.state.Changes = 0
		}
	}
	if len(runs) == 0 || runs[0] != 10 {
		t.Fatalf("forced runs at %v: the first must come after MaxChanges (10) chunks", runs)
	}
	sum := 0
	for i, r := range runs {
		sum += r
		if i > 0 && r < 6*runs[i-1] {
			t.Errorf("forced runs at %v: run %d came before the graph grew 6-fold", runs, i+1)
		}
	}
	// Each run may rewrite every report of the graph it saw.
	if sum > 1000/2 {
		t.Errorf("forced runs at %v saw %d chunks in all, more than half the corpus", runs, sum)
	}
	// DetectGrowth 0 is MaxChanges alone.
	s.cfg.DetectGrowth, st.merged, st.state.Changes = 0, 500, 10
	if !s.forced(st) {
		t.Error("with DetectGrowth 0, MaxChanges alone must force a run")
	}
}

// A corpus whose merges paused for longer than the debounce while documents still wait
// for the chunker is not detected yet; an idle one is.
func TestQuietRunWaitsForTheUpstreamBacklog(t *testing.T) {
	ctx := t.Context()
	tg := newTestGrapher(t)
	if _, err := pipeline.PublishDocument(ctx, tg.b, events.Document{Corpus: "busy", ID: "d1", Title: "T", Text: "Text waiting for the chunker."}); err != nil {
		t.Fatal(err)
	}
	// Both corpora merged a chunk long ago (the scheduler is stopped so it does not act).
	if err := tg.s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"busy", "idle"} {
		if err := tg.s.markDirty(ctx, c); err != nil {
			t.Fatal(err)
		}
		tg.s.mu.Lock()
		tg.s.corpora[c].lastChange = time.Now().Add(-time.Hour)
		tg.s.mu.Unlock()
	}
	if got := tg.s.dueNow(ctx); !slices.Equal(got, []string{"idle"}) {
		t.Errorf("due now %v, want [idle]: busy still has a document before the chunker", got)
	}
}
