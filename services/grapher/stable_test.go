package grapher

import (
	"fmt"
	"slices"
	"testing"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// clique is one chunk naming the entities first..last-1 of group, all related.
func clique(group string, chunk, first, last int) graphstore.ChunkExtraction {
	ce := graphstore.ChunkExtraction{ChunkID: fmt.Sprintf("%s-c%d", group, chunk), DocumentID: group}
	k := func(i int) string { return fmt.Sprintf("%s %02d", group, i) }
	for i := first; i < last; i++ {
		ce.Entities = append(ce.Entities, graphstore.EntityMention{Key: k(i), Name: k(i), Type: "THING"})
		for j := first; j < i; j++ {
			ce.Relations = append(ce.Relations, graphstore.RelationMention{SourceKey: k(j), TargetKey: k(i), Type: "R", Strength: 1})
		}
	}
	return ce
}

// A community that gains a member keeps its id, its report and gets no new event; once
// it has grown by more than the threshold since its report, it is a new community.
func TestCommunityGrowingSlightlyKeepsItsReport(t *testing.T) {
	ctx := t.Context()
	tg := newTestGrapher(t)
	const corpus = "stable"
	coll := schema.Collection(corpus, schema.Communities)
	if err := tg.g.Merge(ctx, corpus, []graphstore.ChunkExtraction{clique("g", 0, 0, 10)}); err != nil {
		t.Fatal(err)
	}
	if err := tg.s.Detect(ctx, corpus); err != nil {
		t.Fatal(err)
	}
	first := currentCommunityIDs(t, tg.g, corpus)
	if len(first) != 1 {
		t.Fatalf("communities %v, want one", first)
	}
	vec := make([]float32, 32)
	vec[0] = 1
	if err := tg.vs.Upsert(ctx, coll, []vectorstore.Record{{ID: first[0], Vector: vec, Text: "report",
		Attrs: map[string]string{schema.ReportMembers: "10"}}}); err != nil {
		t.Fatal(err)
	}
	events := len(communityEvents(t, tg.b, corpus))

	// One more member (11 of 10: Jaccard 10/11, 10% larger than its report).
	if err := tg.g.Merge(ctx, corpus, []graphstore.ChunkExtraction{clique("g", 1, 0, 11)}); err != nil {
		t.Fatal(err)
	}
	if err := tg.s.Detect(ctx, corpus); err != nil {
		t.Fatal(err)
	}
	if got := currentCommunityIDs(t, tg.g, corpus); !slices.Equal(got, first) {
		t.Fatalf("after one new member: communities %v, want the old %v", got, first)
	}
	if got := listAll(t, tg.vs, coll); !slices.Equal(got, first) {
		t.Errorf("reports %v, want the old one kept", got)
	}
	if n := len(communityEvents(t, tg.b, corpus)); n != events {
		t.Errorf("%d community events after the run, %d before: a kept report was requested again", n, events)
	}
	com, err := tg.g.Community(ctx, corpus, first[0])
	if err != nil || len(com.Members) != 11 {
		t.Fatalf("community %v (%v): want the 11 current members under the kept id", com, err)
	}

	// Three more (14 against the report's 10): a new community, a new report. Both
	// chunks are replaced, so that the 14 are evenly linked.
	if err := tg.g.Merge(ctx, corpus, []graphstore.ChunkExtraction{clique("g", 0, 0, 14), clique("g", 1, 0, 14)}); err != nil {
		t.Fatal(err)
	}
	if err := tg.s.Detect(ctx, corpus); err != nil {
		t.Fatal(err)
	}
	got := currentCommunityIDs(t, tg.g, corpus)
	if len(got) != 1 || got[0] == first[0] {
		t.Fatalf("after growing by 40%%: communities %v, want one new id", got)
	}
	if n := len(listAll(t, tg.vs, coll)); n != 0 {
		t.Errorf("%d reports left, want the stale one deleted", n)
	}
	evs := communityEvents(t, tg.b, corpus)
	if last := evs[len(evs)-1]; last.ID != got[0] || last.MemberCount != 14 {
		t.Errorf("last event %+v, want the new community of 14", last)
	}
}
