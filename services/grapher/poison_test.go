package grapher

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/normalize"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// strictStore refuses, as invalid, records with an ID or a text longer than Milvus
// accepts and the records named in refuse: the embedded store takes them all.
type strictStore struct {
	VectorStore
	refuse map[string]bool
}

func (s strictStore) Upsert(ctx context.Context, coll string, recs []vectorstore.Record) error {
	for _, r := range recs {
		if len(r.ID) > 512 || len(r.Text) > 65535 || s.refuse[r.ID] {
			return fmt.Errorf("%w: record %.40q: refused by the test", vectorstore.ErrInvalidArgument, r.ID)
		}
	}
	return s.VectorStore.Upsert(ctx, coll, recs)
}

// poisonHarness is newTestGrapherWrapped: the grapher, its graph store, and its
// vector store as the grapher sees it.
func poisonHarness(t *testing.T, wrap func(VectorStore) VectorStore) (*Service, graphstore.Store, VectorStore) {
	t.Helper()
	tg := newTestGrapherWrapped(t, wrap)
	return tg.s, tg.g, tg.s.deps.Vectors
}

// mergeNames merges one chunk per three names, each name related to the next. A
// name's key is its normalized form, or a hash when that is empty or longer than graph
// stores take (the merge refuses such keys before detection sees them).
func mergeNames(t *testing.T, g graphstore.Store, corpus string, names []string) {
	t.Helper()
	var batch []graphstore.ChunkExtraction
	keys := make([]string, len(names))
	for i, n := range names {
		keys[i] = normalize.Name(n)
		if keys[i] == "" || len(keys[i]) > 1024 {
			keys[i] = "h" + events.Hash(n)[:16]
		}
		if i%3 == 0 {
			batch = append(batch, graphstore.ChunkExtraction{ChunkID: fmt.Sprintf("c%04d", i/3), DocumentID: "d"})
		}
		ce := &batch[len(batch)-1]
		ce.Entities = append(ce.Entities, graphstore.EntityMention{Key: keys[i], Name: n, Type: "THING"})
		if i%3 > 0 && keys[i-1] != keys[i] {
			ce.Relations = append(ce.Relations, graphstore.RelationMention{SourceKey: keys[i-1], TargetKey: keys[i], Type: "RELATED", Strength: 1})
		}
	}
	if err := g.Merge(t.Context(), corpus, batch); err != nil {
		t.Fatal(err)
	}
}

// TestRefusedRecordIsQuarantined: a record the store refuses is quarantined with its
// reason and the run completes without it; once the store takes it, it leaves the list.
func TestRefusedRecordIsQuarantined(t *testing.T) {
	ctx := t.Context()
	strict := strictStore{refuse: map[string]bool{"all": true}}
	s, g, vs := poisonHarness(t, func(v VectorStore) VectorStore { strict.VectorStore = v; return strict })
	mergeNames(t, g, "z", []string{"ALL", "acute lymphoblastic leukemia", "lymphocytes", "blood", "children", "cancer"})
	if err := s.Detect(ctx, "z"); err != nil {
		t.Fatalf("detection stopped by one record: %v", err)
	}
	qs, n, err := pipeline.QuarantinedRecords(ctx, s.kv, "z", 10)
	if err != nil || n != 1 || qs[0].ID != "all" || qs[0].Stage != pipeline.StageGrapher || !strings.Contains(qs[0].Reason, "invalid argument") {
		t.Fatalf("quarantined %+v (%d) %v; want the record all with its reason", qs, n, err)
	}
	if c, err := vs.Count(ctx, schema.Collection("z", schema.Entities)); err != nil || c != 5 {
		t.Fatalf("entity records %d %v, want the 5 others", c, err)
	}
	delete(strict.refuse, "all")
	if err := s.Detect(ctx, "z"); err != nil {
		t.Fatal(err)
	}
	if _, n, err := pipeline.QuarantinedRecords(ctx, s.kv, "z", 10); err != nil || n != 0 {
		t.Fatalf("%d records still quarantined (%v) after the store took them", n, err)
	}
}

// TestRandomNamesNeverStopDetection: entity names of every kind (stopwords in either
// case, punctuation only, emoji, invalid UTF-8, megabyte names) never fail a run.
func TestRandomNamesNeverStopDetection(t *testing.T) {
	pieces := []string{"ALL", "all", "IT", "it", "US", "OR", "AND", "the", "?!", "…", "—", "🧬", "🩸🩸", " ", "\t",
		"é", "Ω", "lymphocytes", "Acute", "0", "&", "'"}
	rng := rand.New(rand.NewPCG(33, 1))
	for round := range 3 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			s, g, _ := poisonHarness(t, func(v VectorStore) VectorStore { return strictStore{VectorStore: v} })
			seen := map[string]bool{}
			var names []string
			for len(names) < 30 {
				var b strings.Builder
				for range 1 + rng.IntN(4) {
					b.WriteString(pieces[rng.IntN(len(pieces))])
				}
				n := b.String()
				if rng.IntN(15) == 0 {
					n = strings.Repeat(n, 1+(1<<20)/len(n)) // about a megabyte
				}
				if k := normalize.Name(n); !seen[k] {
					seen[k] = true
					names = append(names, n)
				}
			}
			mergeNames(t, g, "p", names)
			if err := s.Detect(t.Context(), "p"); err != nil {
				t.Fatalf("detection failed: %v", err)
			}
			if _, _, err := pipeline.QuarantinedRecords(t.Context(), s.kv, "p", 100); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// failingStore is unavailable for every write: not a record's fault.
type failingStore struct{ VectorStore }

var errUnavailable = errors.New("store unavailable")

func (failingStore) Upsert(context.Context, string, []vectorstore.Record) error {
	return errUnavailable
}

// TestFailedRunsBackOff: a store that is down fails the run, which is not retried before
// its pause, and status says since when and why.
func TestFailedRunsBackOff(t *testing.T) {
	ctx := t.Context()
	s, g, _ := poisonHarness(t, func(v VectorStore) VectorStore { return failingStore{v} })
	mergeNames(t, g, "f", []string{"a1", "b2", "c3"})
	s.mu.Lock()
	s.corpora["f"] = &corpusState{state: pipeline.GraphState{Dirty: true}}
	s.mu.Unlock()
	err := s.Detect(ctx, "f")
	if !errors.Is(err, errUnavailable) {
		t.Fatalf("Detect = %v, want the store's error", err)
	}
	s.detectFailed(ctx, "f", err)
	s.detectFailed(ctx, "f", err)
	st, err := pipeline.LoadGraphState(ctx, s.kv, "f")
	if err != nil {
		t.Fatal(err)
	}
	if st.Failures != 2 || st.FailingSince.IsZero() || !strings.Contains(st.Failing(), "community detection failing since") ||
		!strings.Contains(st.Failing(), "store unavailable") || !st.NextRetry.After(time.Now()) {
		t.Fatalf("state %+v, failing %q", st, st.Failing())
	}
	if due, _ := s.due(); len(due) != 0 {
		t.Fatalf("due before its pause: %v", due)
	}
}

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		failures    int
		jitter      float64
		wantAtLeast time.Duration
		wantAtMost  time.Duration
	}{
		{1, 0, retryFirst / 2, retryFirst / 2},
		{1, 1, retryFirst, retryFirst},
		{2, 0.5, retryFirst, 2 * retryFirst},
		{9, 0, 128 * retryFirst, 128 * retryFirst},
		{10, 1, retryCeiling, retryCeiling},
		{1000, 0.3, retryCeiling / 2, retryCeiling},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.failures, tt.jitter), func(t *testing.T) {
			if got := retryAfter(tt.failures, tt.jitter); got < tt.wantAtLeast || got > tt.wantAtMost {
				t.Errorf("retryAfter(%d, %v) = %v, want in [%v, %v]", tt.failures, tt.jitter, got, tt.wantAtLeast, tt.wantAtMost)
			}
		})
	}
}

// TestQuarantinedReportsDoNotHoldTheCorpus: communities whose report the summarizer
// quarantined do not count as waiting for their report, and a detection run takes the
// entries of communities that are gone off the list.
func TestQuarantinedReportsDoNotHoldTheCorpus(t *testing.T) {
	ctx := t.Context()
	s, g, _ := poisonHarness(t, func(v VectorStore) VectorStore { return v })
	mergeNames(t, g, "r", []string{"ALL", "acute lymphoblastic leukemia", "lymphocytes", "blood", "children", "cancer"})
	if err := s.Detect(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	comms, err := g.Communities(ctx, "r", -1)
	if err != nil || len(comms) == 0 {
		t.Fatalf("communities %v %v", comms, err)
	}
	coll := schema.Collection("r", schema.Communities)
	refused := []vectorstore.Refused{{ID: "gone", Err: vectorstore.ErrInvalidArgument}}
	for _, c := range comms {
		refused = append(refused, vectorstore.Refused{ID: c.ID, Err: vectorstore.ErrInvalidArgument})
	}
	if err := pipeline.Quarantine(ctx, s.kv, "r", pipeline.StageSummarizer, coll, refused); err != nil {
		t.Fatal(err)
	}
	if err := s.recountReports(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	if st, err := pipeline.LoadGraphState(ctx, s.kv, "r"); err != nil || st.Unreported != 0 {
		t.Fatalf("graph state %+v %v: want no community waiting for a quarantined report", st, err)
	}
	if err := s.Detect(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	st, err := pipeline.LoadGraphState(ctx, s.kv, "r")
	if err != nil || st.Unreported != 0 {
		t.Fatalf("graph state %+v %v after a run: want no community waiting for a quarantined report", st, err)
	}
	qs, n, err := pipeline.QuarantinedRecords(ctx, s.kv, "r", 100)
	if err != nil || n != len(comms) {
		t.Fatalf("quarantined %d %v, want the %d current communities", n, err, len(comms))
	}
	for _, q := range qs {
		if q.ID == "gone" {
			t.Fatal("the report of a community that is gone is still quarantined")
		}
	}
}
