package graphstoretest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

// Features declares what a driver supports.
type Features struct {
	// Persistent drivers keep their data across Reopen.
	Persistent bool
	// Reopen closes s and opens the same storage again. Required when Persistent.
	Reopen func(t *testing.T, s graphstore.Store) graphstore.Store
}

// Run runs the conformance suite. open must return a fresh, empty store and
// arrange for it to be closed when t ends (Close is safe twice, so cases may close
// it themselves).
func Run(t *testing.T, f Features, open func(t *testing.T) graphstore.Store) {
	cases := []struct {
		name string
		fn   func(t *testing.T, s graphstore.Store)
	}{
		{"NotFound", testNotFound},
		{"InvalidInput", testInvalidInput},
		{"IdempotentReplay", testIdempotentReplay},
		{"ReplaceSemantics", testReplaceSemantics},
		{"RemoveChunks", testRemoveChunks},
		{"Provenance", testProvenance},
		{"Contributions", testContributions},
		{"BriefReads", testBriefReads},
		{"NameTypeDescription", testNameTypeDescription},
		{"TypeOtherIsFallback", testTypeOther},
		{"Summaries", testSummaries},
		{"ImpliedEntitiesAndSelfLoops", testImpliedAndSelfLoops},
		{"Neighborhood", testNeighborhood},
		{"Relationships", testRelationships},
		{"Snapshot", testSnapshot},
		{"PageRankAndCommunities", testPageRankAndCommunities},
		{"DropCorpus", testDropCorpus},
		{"ConcurrentMerge", testConcurrentMerge},
		{"Cancellation", testCancellation},
		{"Close", testClose},
		{"CloseWhileBusy", testCloseWhileBusy},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.fn(t, open(t)) })
	}
	t.Run("Persistence", func(t *testing.T) {
		if !f.Persistent {
			t.Skip("driver is not persistent")
		}
		if f.Reopen == nil {
			t.Fatal("Features.Persistent needs Features.Reopen")
		}
		testPersistence(t, open(t), f.Reopen)
	})
}

// Helpers shared by the cases.

func em(key, name, typ, desc string) graphstore.EntityMention {
	return graphstore.EntityMention{Key: key, Name: name, Type: typ, Description: desc}
}

func rm(src, dst string, strength float64) graphstore.RelationMention {
	return graphstore.RelationMention{SourceKey: src, TargetKey: dst, Type: "related", Strength: strength}
}

func chunk(id string, ents []graphstore.EntityMention, rels ...graphstore.RelationMention) graphstore.ChunkExtraction {
	return graphstore.ChunkExtraction{ChunkID: id, DocumentID: "doc-" + id, Entities: ents, Relations: rels}
}

func merge(t *testing.T, s graphstore.Store, corpus string, batch ...graphstore.ChunkExtraction) {
	t.Helper()
	if err := s.Merge(t.Context(), corpus, batch); err != nil {
		t.Fatalf("Merge: %v", err)
	}
}

func entity(t *testing.T, s graphstore.Store, corpus, key string) graphstore.Entity {
	t.Helper()
	e, err := s.Entity(t.Context(), corpus, key)
	if err != nil {
		t.Fatalf("Entity(%q): %v", key, err)
	}
	return e
}

func mustAbsent(t *testing.T, s graphstore.Store, corpus, key string) {
	t.Helper()
	if _, err := s.Entity(t.Context(), corpus, key); !errors.Is(err, graphstore.ErrNotFound) {
		t.Fatalf("Entity(%q) error = %v, want ErrNotFound", key, err)
	}
}

// stats returns the corpus's Stats, checking that Levels reads the same level count.
func stats(t *testing.T, s graphstore.Store, corpus string) graphstore.Stats {
	t.Helper()
	st, err := s.Stats(t.Context(), corpus)
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	if n, err := s.Levels(t.Context(), corpus); err != nil || n != st.Levels {
		t.Fatalf("Levels = %d, %v; Stats says %d", n, err, st.Levels)
	}
	return st
}

func keysOf(ents []graphstore.Entity) []string {
	out := make([]string, len(ents))
	for i, e := range ents {
		out[i] = e.Key
	}
	return out
}

func relIDs(rels []graphstore.Relationship) []string {
	out := make([]string, len(rels))
	for i, r := range rels {
		out[i] = r.SourceKey + ">" + r.TargetKey
	}
	return out
}

func eq[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

// dump is everything observable about a corpus, for whole-graph comparisons.
type dump struct {
	Stats       graphstore.Stats
	Snapshot    graphstore.Snapshot
	Entities    []graphstore.Entity
	Relations   []graphstore.Relationship
	Communities []graphstore.Community
}

func dumpCorpus(t *testing.T, s graphstore.Store, corpus string) dump {
	t.Helper()
	ctx := t.Context()
	var d dump
	var err error
	if d.Stats, err = s.Stats(ctx, corpus); err != nil {
		t.Fatalf("Stats: %v", err)
	}
	if d.Snapshot, err = s.Snapshot(ctx, corpus); err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	if d.Entities, err = s.Entities(ctx, corpus, d.Snapshot.Keys); err != nil {
		t.Fatalf("Entities: %v", err)
	}
	if d.Relations, err = s.RelationshipsAmong(ctx, corpus, d.Snapshot.Keys); err != nil {
		t.Fatalf("RelationshipsAmong: %v", err)
	}
	if d.Communities, err = s.Communities(ctx, corpus, -1); err != nil {
		t.Fatalf("Communities: %v", err)
	}
	if len(d.Entities) != d.Stats.Entities || len(d.Relations) != d.Stats.Relationships {
		t.Fatalf("Stats %+v disagree with %d entities, %d relationships listed",
			d.Stats, len(d.Entities), len(d.Relations))
	}
	return d
}

func sameDump(t *testing.T, what string, got, want dump) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: graphs differ\n got: %+v\nwant: %+v", what, got, want)
	}
}

// sampleBatch is a small graph with overlapping mentions, used by several cases.
func sampleBatch() []graphstore.ChunkExtraction {
	return []graphstore.ChunkExtraction{
		chunk("c1", []graphstore.EntityMention{
			em("dopamine", "Dopamine", "chemical", "a neurotransmitter"),
			em("motivation", "Motivation", "concept", "drive to act"),
		}, rm("dopamine", "motivation", 8)),
		chunk("c2", []graphstore.EntityMention{
			em("dopamine", "dopamine", "chemical", "a monoamine"),
			em("reward", "Reward", "concept", ""),
		}, rm("dopamine", "reward", 5), rm("reward", "motivation", 2)),
		chunk("c3", []graphstore.EntityMention{
			em("dopamine", "Dopamine", "hormone", "a neurotransmitter"),
			em("striatum", "Striatum", "region", "part of the basal ganglia"),
		}, rm("striatum", "dopamine", 3), rm("dopamine", "motivation", 4)),
	}
}

func testNotFound(t *testing.T, s graphstore.Store) {
	ctx := t.Context()
	mustAbsent(t, s, "empty", "x")
	if _, err := s.Community(ctx, "empty", "c"); !errors.Is(err, graphstore.ErrNotFound) {
		t.Errorf("Community on empty corpus: %v, want ErrNotFound", err)
	}
	merge(t, s, "k", sampleBatch()...)
	mustAbsent(t, s, "k", "serotonin")
	if _, err := s.Community(ctx, "k", "nope"); !errors.Is(err, graphstore.ErrNotFound) {
		t.Errorf("Community(nope): %v, want ErrNotFound", err)
	}
	got, err := s.Entities(ctx, "k", []string{"reward", "serotonin", "dopamine", "reward"})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "Entities keys", keysOf(got), []string{"reward", "dopamine"})
	for _, name := range []string{"empty", "nothing-here"} {
		st, err := s.Stats(ctx, name)
		if err != nil || st != (graphstore.Stats{}) {
			t.Errorf("Stats(%s) = %+v, %v; want zero", name, st, err)
		}
		n, err := s.Neighborhood(ctx, name, []string{"x"}, 2, 0)
		if err != nil || len(n) != 0 {
			t.Errorf("Neighborhood(%s) = %v, %v; want empty", name, n, err)
		}
	}
}

func testInvalidInput(t *testing.T, s graphstore.Store) {
	ctx := t.Context()
	good := chunk("ok", []graphstore.EntityMention{em("a", "A", "t", "")})
	cases := []struct {
		name   string
		corpus string
		batch  []graphstore.ChunkExtraction
	}{
		{"empty corpus", "", []graphstore.ChunkExtraction{good}},
		{"empty chunk id", "k", []graphstore.ChunkExtraction{good, chunk("", nil)}},
		{"empty entity key", "k", []graphstore.ChunkExtraction{good, chunk("x", []graphstore.EntityMention{em("", "A", "", "")})}},
		{"empty relation end", "k", []graphstore.ChunkExtraction{good, chunk("x", nil, rm("a", "", 1))}},
		{"negative strength", "k", []graphstore.ChunkExtraction{good, chunk("x", nil, rm("a", "b", -1))}},
		{"NaN strength", "k", []graphstore.ChunkExtraction{good, chunk("x", nil, rm("a", "b", math.NaN()))}},
		{"infinite strength", "k", []graphstore.ChunkExtraction{good, chunk("x", nil, rm("a", "b", math.Inf(1)))}},
		{"strength too large", "k", []graphstore.ChunkExtraction{good, chunk("x", nil, rm("a", "b", graphstore.MaxStrength*2))}},
		{"key not UTF-8", "k", []graphstore.ChunkExtraction{good, chunk("x", []graphstore.EntityMention{em("\xff", "A", "", "")})}},
		{"name not UTF-8", "k", []graphstore.ChunkExtraction{good, chunk("x", []graphstore.EntityMention{em("b", "\xffB", "", "")})}},
		{"key too long", "k", []graphstore.ChunkExtraction{good, chunk("x", nil, rm("a", strings.Repeat("b", graphstore.MaxKeyLen+1), 1))}},
		{"chunk id too long", "k", []graphstore.ChunkExtraction{good, chunk(strings.Repeat("c", graphstore.MaxKeyLen+1), nil)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := s.Merge(ctx, c.corpus, c.batch); !errors.Is(err, graphstore.ErrInvalid) {
				t.Fatalf("Merge error = %v, want ErrInvalid", err)
			}
			// The valid chunk of the batch must not have been applied either.
			mustAbsent(t, s, "k", "a") //nolint:contextcheck // the helper uses the subtest's t.Context()
		})
	}
	merge(t, s, "k", chunk("c", []graphstore.EntityMention{em("a", "A", "", ""), em("b", "B", "", "")}))
	badHierarchies := []struct {
		name string
		cs   []graphstore.Community
	}{
		{"empty id", []graphstore.Community{{ID: "", Members: []string{"a"}}}},
		{"duplicate id", []graphstore.Community{{ID: "x"}, {ID: "x"}}},
		{"negative level", []graphstore.Community{{ID: "x", Level: -1}}},
		{"missing parent", []graphstore.Community{{ID: "x", Level: 1, ParentID: "p"}}},
		{"parent at wrong level", []graphstore.Community{{ID: "p", Level: 0}, {ID: "x", Level: 2, ParentID: "p"}}},
		{"entity twice at a level", []graphstore.Community{{ID: "x", Members: []string{"a"}}, {ID: "y", Members: []string{"a", "b"}}}},
		{"child ids disagree", []graphstore.Community{{ID: "p", ChildIDs: []string{"z"}}, {ID: "x", Level: 1, ParentID: "p"}}},
	}
	for _, c := range badHierarchies {
		t.Run("communities/"+c.name, func(t *testing.T) {
			if err := s.ReplaceCommunities(ctx, "k", c.cs); !errors.Is(err, graphstore.ErrInvalid) {
				t.Fatalf("ReplaceCommunities error = %v, want ErrInvalid", err)
			}
		})
	}
	if err := s.SetDescriptions(ctx, "k", map[string]string{"a": "\xff"}); !errors.Is(err, graphstore.ErrInvalid) {
		t.Errorf("SetDescriptions with non UTF-8 text = %v, want ErrInvalid", err)
	}
	if err := s.SetPageRank(ctx, "k", map[string]float64{"a": math.NaN()}); !errors.Is(err, graphstore.ErrInvalid) {
		t.Errorf("SetPageRank with NaN = %v, want ErrInvalid", err)
	}
	// The longest key allowed works, in keys and in chunk ids.
	long := strings.Repeat("k", graphstore.MaxKeyLen)
	merge(t, s, "k", chunk(long, []graphstore.EntityMention{em(long, "Long", "", "")}, rm(long, "a", 1)))
	eq(t, "long key chunks", entity(t, s, "k", long).ChunkIDs, []string{long})
	if _, err := s.Communities(ctx, "k", -2); !errors.Is(err, graphstore.ErrInvalid) {
		t.Errorf("Communities(-2) error = %v, want ErrInvalid", err)
	}
	testInvalidCorpus(t, s)
}

// testInvalidCorpus: every method that takes a corpus refuses a name that is empty,
// too long or not UTF-8, before reading or writing anything.
func testInvalidCorpus(t *testing.T, s graphstore.Store) {
	ctx := t.Context()
	calls := []struct {
		method string
		call   func(corpus string) error
	}{
		{"Merge", func(c string) error { return s.Merge(ctx, c, sampleBatch()) }},
		{"RemoveChunks", func(c string) error { return s.RemoveChunks(ctx, c, []string{"c1"}) }},
		{"Entity", func(c string) error { _, err := s.Entity(ctx, c, "a"); return err }},
		{"Entities", func(c string) error { _, err := s.Entities(ctx, c, []string{"a"}); return err }},
		{"SetDescriptions", func(c string) error { return s.SetDescriptions(ctx, c, map[string]string{"a": "x"}) }},
		{"RelationshipsOf", func(c string) error { _, err := s.RelationshipsOf(ctx, c, []string{"a"}, 0); return err }},
		{"RelationshipsAmong", func(c string) error { _, err := s.RelationshipsAmong(ctx, c, []string{"a"}); return err }},
		{"ChunkEntities", func(c string) error { _, err := s.ChunkEntities(ctx, c, []string{"c1"}); return err }},
		{"Contributions", func(c string) error { _, err := s.Contributions(ctx, c, []string{"c1"}); return err }},
		{"Neighborhood", func(c string) error { _, err := s.Neighborhood(ctx, c, []string{"a"}, 1, 0); return err }},
		{"Snapshot", func(c string) error { _, err := s.Snapshot(ctx, c); return err }},
		{"SetPageRank", func(c string) error { return s.SetPageRank(ctx, c, map[string]float64{"a": 1}) }},
		{"ReplaceCommunities", func(c string) error {
			return s.ReplaceCommunities(ctx, c, []graphstore.Community{{ID: "x", Members: []string{"a"}}})
		}},
		{"Communities", func(c string) error { _, err := s.Communities(ctx, c, -1); return err }},
		{"Community", func(c string) error { _, err := s.Community(ctx, c, "x"); return err }},
		{"Stats", func(c string) error { _, err := s.Stats(ctx, c); return err }},
		{"Levels", func(c string) error { _, err := s.Levels(ctx, c); return err }},
		{"DropCorpus", func(c string) error { return s.DropCorpus(ctx, c) }},
	}
	for _, name := range []string{"", strings.Repeat("k", graphstore.MaxKeyLen+1), "k\xff"} {
		for _, c := range calls {
			if err := c.call(name); !errors.Is(err, graphstore.ErrInvalid) {
				t.Errorf("%s(corpus %.12q) = %v, want ErrInvalid", c.method, name, err)
			}
		}
	}
	corpora, err := s.Corpora(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(corpora, "") || slices.ContainsFunc(corpora, func(c string) bool { return !utf8.ValidString(c) }) {
		t.Errorf("corpora after invalid writes: %q", corpora)
	}
}

func testIdempotentReplay(t *testing.T, s graphstore.Store) {
	batch := sampleBatch()
	merge(t, s, "k", batch...)
	first := dumpCorpus(t, s, "k")
	if first.Stats.Entities != 4 || first.Stats.Relationships != 4 || first.Stats.Chunks != 3 {
		t.Fatalf("Stats after first merge = %+v", first.Stats)
	}
	merge(t, s, "k", batch...)
	sameDump(t, "after replaying the batch", dumpCorpus(t, s, "k"), first)
	for _, c := range slices.Backward(batch) {
		merge(t, s, "k", c)
	}
	sameDump(t, "after replaying chunk by chunk in reverse", dumpCorpus(t, s, "k"), first)
	merge(t, s, "k", batch[1], batch[1]) // a chunk twice in one batch counts once
	sameDump(t, "after a chunk twice in one batch", dumpCorpus(t, s, "k"), first)
}

func testReplaceSemantics(t *testing.T, s graphstore.Store) {
	merge(t, s, "k",
		chunk("c1", []graphstore.EntityMention{em("a", "A", "", ""), em("b", "B", "", ""), em("c", "C", "", "")},
			rm("a", "b", 2), rm("b", "c", 3)),
		chunk("c2", []graphstore.EntityMention{em("a", "A", "", "")}))
	if st := stats(t, s, "k"); st.Entities != 3 || st.Relationships != 2 || st.Chunks != 2 {
		t.Fatalf("Stats = %+v", st)
	}
	// Re-extracting c1 with fewer entities drops its old contribution.
	merge(t, s, "k", chunk("c1", []graphstore.EntityMention{em("a", "A", "", ""), em("b", "B", "", "")}, rm("a", "b", 7)))
	mustAbsent(t, s, "k", "c")
	eq(t, "a.MentionCount", entity(t, s, "k", "a").MentionCount, 2)
	rels, err := s.RelationshipsOf(t.Context(), "k", []string{"b"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "relationships of b", relIDs(rels), []string{"a>b"})
	eq(t, "a>b weight", rels[0].Weight, 7.0)
	// c1 with nothing left removes b, keeps a (c2 still mentions it).
	merge(t, s, "k", chunk("c1", nil))
	mustAbsent(t, s, "k", "b")
	eq(t, "a.ChunkIDs", entity(t, s, "k", "a").ChunkIDs, []string{"c2"})
	if st := stats(t, s, "k"); st.Entities != 1 || st.Relationships != 0 || st.Chunks != 2 {
		t.Fatalf("Stats after emptying c1 = %+v", st)
	}
	snap, err := s.Snapshot(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "snapshot", snap, graphstore.Snapshot{Keys: []string{"a"}})
	// Replacing the chunk that gave the longest description falls back to the next.
	merge(t, s, "d",
		chunk("c1", []graphstore.EntityMention{em("x", "X", "", "the longest description")}, graphstore.RelationMention{SourceKey: "x", TargetKey: "y", Description: "long relation text"}),
		chunk("c2", []graphstore.EntityMention{em("x", "X", "", "short")}, graphstore.RelationMention{SourceKey: "x", TargetKey: "y", Description: "brief"}))
	merge(t, s, "d", chunk("c1", []graphstore.EntityMention{em("x", "X", "", "mid")}, graphstore.RelationMention{SourceKey: "x", TargetKey: "y", Description: "tiny"}))
	x := entity(t, s, "d", "x")
	eq(t, "x.Description", x.Description, "short")
	eq(t, "x.Descriptions", x.Descriptions, []string{"mid", "short"})
	xr, err := s.RelationshipsOf(t.Context(), "d", []string{"x"}, 0)
	if err != nil || len(xr) != 1 {
		t.Fatalf("RelationshipsOf(x) = %v, %v", xr, err)
	}
	eq(t, "x>y.Description", xr[0].Description, "brief")
	eq(t, "x>y.Descriptions", xr[0].Descriptions, []string{"brief", "tiny"})
}

func testRemoveChunks(t *testing.T, s graphstore.Store) {
	merge(t, s, "k", sampleBatch()...)
	before := dumpCorpus(t, s, "k")
	merge(t, s, "k", chunk("extra", []graphstore.EntityMention{em("dopamine", "DA", "chemical", "new desc"), em("x", "X", "", "")},
		rm("x", "dopamine", 1)))
	if err := s.RemoveChunks(t.Context(), "k", []string{"extra", "never-merged"}); err != nil {
		t.Fatalf("RemoveChunks: %v", err)
	}
	sameDump(t, "after removing the extra chunk", dumpCorpus(t, s, "k"), before)
	if err := s.RemoveChunks(t.Context(), "k", []string{"c1", "c2", "c3"}); err != nil {
		t.Fatalf("RemoveChunks: %v", err)
	}
	eq(t, "stats after removing all", stats(t, s, "k"), graphstore.Stats{})
	if err := s.RemoveChunks(t.Context(), "no-such-corpus", []string{"c1"}); err != nil {
		t.Errorf("RemoveChunks on missing corpus: %v", err)
	}
}

func testProvenance(t *testing.T, s graphstore.Store) {
	// Merged out of order, one chunk mentioning an entity twice and a pair twice.
	merge(t, s, "k",
		chunk("c3", []graphstore.EntityMention{em("a", "A", "", ""), em("b", "B", "", "")}, rm("a", "b", 0)),
		chunk("c1", []graphstore.EntityMention{em("a", "A", "", ""), em("a", "A", "", ""), em("b", "B", "", "")},
			rm("a", "b", 2), rm("a", "b", 5)),
	)
	merge(t, s, "k", chunk("c2", []graphstore.EntityMention{em("a", "A", "", "")}, rm("b", "a", 1.5)))
	a := entity(t, s, "k", "a")
	eq(t, "a.ChunkIDs", a.ChunkIDs, []string{"c1", "c2", "c3"})
	eq(t, "a.MentionCount", a.MentionCount, 3)
	b := entity(t, s, "k", "b")
	eq(t, "b.ChunkIDs", b.ChunkIDs, []string{"c1", "c2", "c3"}) // c2 implies b through b>a
	rels, err := s.RelationshipsOf(t.Context(), "k", []string{"a"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "relationships", relIDs(rels), []string{"a>b", "b>a"})
	// c1 counts its strongest mention (5), c3 an unspecified strength as 1.
	eq(t, "a>b weight", rels[0].Weight, 6.0)
	eq(t, "a>b chunks", rels[0].ChunkIDs, []string{"c1", "c3"})
	eq(t, "b>a weight", rels[1].Weight, 1.5)
	eq(t, "b>a chunks", rels[1].ChunkIDs, []string{"c2"})

	// The reverse index: what each chunk mentions (relationship ends included).
	ce, err := s.ChunkEntities(t.Context(), "k", []string{"c2", "c1", "nope"})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "ChunkEntities", ce, map[string][]string{"c1": {"a", "b"}, "c2": {"a", "b"}})
	if err := s.RemoveChunks(t.Context(), "k", []string{"c2"}); err != nil {
		t.Fatal(err)
	}
	ce, err = s.ChunkEntities(t.Context(), "k", []string{"c2"})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "ChunkEntities after removal", ce, map[string][]string{})

}

// testContributions checks that Contributions gives back what Contribute made of each
// stored chunk, and that Extraction turns it into an extraction Contribute maps to it.
func testContributions(t *testing.T, s graphstore.Store) {
	batch := sampleBatch()
	merge(t, s, "k", batch...)
	if err := s.RemoveChunks(t.Context(), "k", []string{"c3"}); err != nil {
		t.Fatal(err)
	}
	cts, err := s.Contributions(t.Context(), "k", []string{"c2", "c1", "c3", "nope", "c1"})
	if err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(maps.Keys(cts))
	eq(t, "chunks with a contribution", keys, []string{"c1", "c2"})
	for _, c := range batch[:2] {
		want, err := graphstore.Contribute(c)
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "Contributions["+c.ChunkID+"]", cts[c.ChunkID], want)
		back, err := graphstore.Contribute(graphstore.Extraction(cts[c.ChunkID]))
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "Contribute(Extraction("+c.ChunkID+"))", back, want)
	}
	if cts, err := s.Contributions(t.Context(), "nowhere", []string{"c1"}); err != nil || len(cts) != 0 {
		t.Errorf("Contributions of a missing corpus = %v, %v; want none", cts, err)
	}
}

// testBriefReads checks that a brief read (graphstore.Brief) gives every field but
// the lists as a full read does; the lists it may leave out.
func testBriefReads(t *testing.T, s graphstore.Store) {
	merge(t, s, "k",
		chunk("c1", []graphstore.EntityMention{em("a", "A", "person", "A leads."), em("b", "B", "org", "B builds.")},
			rm("a", "b", 2), rm("b", "a", 1)),
		chunk("c2", []graphstore.EntityMention{em("a", "A", "person", "A founded B."), em("c", "C", "", "")}, rm("a", "c", 1)),
	)
	if err := s.SetPageRank(t.Context(), "k", map[string]float64{"a": 0.5, "b": 0.3, "c": 0.2}); err != nil {
		t.Fatal(err)
	}
	noLists := func(e graphstore.Entity) graphstore.Entity {
		e.Descriptions, e.ChunkIDs, e.Communities = nil, nil, nil
		return e
	}
	keys := []string{"c", "a", "nope", "b", "a"}
	full, err := s.Entities(t.Context(), "k", keys)
	if err != nil {
		t.Fatal(err)
	}
	brief, err := s.Entities(t.Context(), "k", keys, graphstore.Brief)
	if err != nil {
		t.Fatal(err)
	}
	if len(full) != 3 || len(brief) != len(full) {
		t.Fatalf("entities: %d full, %d brief, want 3", len(full), len(brief))
	}
	for i := range full {
		eq(t, "brief entity "+full[i].Key, noLists(brief[i]), noLists(full[i]))
	}
	fullRels, err := s.RelationshipsAmong(t.Context(), "k", []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	briefRels, err := s.RelationshipsAmong(t.Context(), "k", []string{"a", "b", "c"}, graphstore.Brief)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "brief relationships", relIDs(briefRels), relIDs(fullRels))
	for i := range fullRels {
		f, b := fullRels[i], briefRels[i]
		f.Descriptions, f.ChunkIDs, b.Descriptions, b.ChunkIDs = nil, nil, nil, nil
		eq(t, "brief relationship "+relIDs(fullRels[i : i+1])[0], b, f)
	}
	if len(fullRels) != 3 || full[1].Description == "" || len(full[1].ChunkIDs) != 2 || len(fullRels[0].ChunkIDs) != 1 {
		t.Fatalf("the fixture is not what this test needs: %+v, %+v", full, fullRels)
	}
}

func testNameTypeDescription(t *testing.T, s graphstore.Store) {
	cases := []struct {
		name     string
		mentions [][]graphstore.EntityMention // one slice per chunk
		want     graphstore.Entity
	}{
		{
			name: "most chunks wins",
			mentions: [][]graphstore.EntityMention{
				{em("x", "Xa", "person", "short")},
				{em("x", "Xb", "org", "a longer one"), em("x", "Xa", "org", "")}, // Xa counted once here
				{em("x", "Xb", "org", "")},
				{em("x", "Xa", "", "")},
			},
			want: graphstore.Entity{Key: "x", Name: "Xa", Type: "org", Description: "a longer one",
				Descriptions: []string{"a longer one", "short"}, MentionCount: 4},
		},
		{
			name: "ties pick the smallest",
			mentions: [][]graphstore.EntityMention{
				{em("x", "Zed", "beta", "bbb")},
				{em("x", "Alpha", "alpha", "aaa")},
			},
			want: graphstore.Entity{Key: "x", Name: "Alpha", Type: "alpha", Description: "aaa",
				Descriptions: []string{"aaa", "bbb"}, MentionCount: 2},
		},
		{
			name:     "no name or type given",
			mentions: [][]graphstore.EntityMention{{em("x", "", "", "")}},
			want:     graphstore.Entity{Key: "x", Name: "x", MentionCount: 1},
		},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			corpus := fmt.Sprintf("k%d", i)
			var batch []graphstore.ChunkExtraction
			for j, ms := range c.mentions {
				batch = append(batch, chunk(fmt.Sprintf("c%d", j), ms))
			}
			merge(t, s, corpus, batch...)
			got := entity(t, s, corpus, "x")
			got.ChunkIDs, got.Communities = nil, nil
			eq(t, "entity", got, c.want)
		})
	}
	t.Run("descriptions capped", func(t *testing.T) {
		var batch []graphstore.ChunkExtraction
		for i := range graphstore.MaxDescriptions + 8 {
			batch = append(batch, chunk(fmt.Sprintf("c%02d", i), []graphstore.EntityMention{em("x", "X", "", fmt.Sprintf("d%02d", i))}))
		}
		merge(t, s, "cap", batch...)
		got := entity(t, s, "cap", "x")
		if len(got.Descriptions) != graphstore.MaxDescriptions || got.Descriptions[0] != "d00" ||
			!slices.IsSorted(got.Descriptions) {
			t.Fatalf("Descriptions = %v, want the %d smallest sorted", got.Descriptions, graphstore.MaxDescriptions)
		}
		eq(t, "Description", got.Description, "d00") // all the same length: the smallest
	})
}

// testTypeOther checks that TypeOther wins a Type only when no chunk gives another,
// for entities and relationships alike, as chunks come and go.
func testTypeOther(t *testing.T, s graphstore.Store) {
	const other = graphstore.TypeOther
	typed := func(id, etype, rtype string) graphstore.ChunkExtraction {
		return chunk(id, []graphstore.EntityMention{em("x", "X", etype, ""), em("y", "Y", other, "")},
			graphstore.RelationMention{SourceKey: "x", TargetKey: "y", Type: rtype, Strength: 1})
	}
	check := func(t *testing.T, corpus, wantX, wantRel string) {
		t.Helper()
		eq(t, "x.Type", entity(t, s, corpus, "x").Type, wantX)
		eq(t, "y.Type (only ever OTHER)", entity(t, s, corpus, "y").Type, other)
		ents, err := s.Entities(t.Context(), corpus, []string{"x"}, graphstore.Brief)
		if err != nil || len(ents) != 1 {
			t.Fatalf("Entities = %v, %v", ents, err)
		}
		eq(t, "x.Type (brief)", ents[0].Type, wantX)
		rels, err := s.RelationshipsOf(t.Context(), corpus, []string{"x"}, 0)
		if err != nil || len(rels) != 1 {
			t.Fatalf("RelationshipsOf = %v, %v", rels, err)
		}
		eq(t, "relationship Type", rels[0].Type, wantRel)
	}

	t.Run("evidence outvotes OTHER", func(t *testing.T) {
		merge(t, s, "o1",
			typed("c1", "PERSON", "WORKS_FOR"), typed("c2", "PERSON", "WORKS_FOR"),
			typed("c3", other, other), typed("c4", other, other), typed("c5", other, other))
		check(t, "o1", "PERSON", "WORKS_FOR")

		// Without the chunks that typed them, both fall back to OTHER...
		if err := s.RemoveChunks(t.Context(), "o1", []string{"c1", "c2"}); err != nil {
			t.Fatalf("RemoveChunks: %v", err)
		}
		check(t, "o1", other, other)
		// ...and one chunk of evidence types them again.
		merge(t, s, "o1", typed("c1", "PERSON", "WORKS_FOR"))
		check(t, "o1", "PERSON", "WORKS_FOR")
		// Replacing that chunk with an untyped one falls back again.
		merge(t, s, "o1", typed("c1", other, other))
		check(t, "o1", other, other)
	})
	t.Run("ties among the others pick the smallest", func(t *testing.T) {
		merge(t, s, "o2",
			typed("c1", "PERSON", "WORKS_FOR"), typed("c2", "ORGANIZATION", "LEADS"),
			typed("c3", other, other), typed("c4", other, other))
		check(t, "o2", "ORGANIZATION", "LEADS")
	})
	t.Run("types are compared byte for byte", func(t *testing.T) {
		// "other" is not TypeOther: the store never normalizes.
		merge(t, s, "o3",
			typed("c1", "other", "other"), typed("c2", "other", "other"),
			typed("c3", other, other), typed("c4", other, other), typed("c5", other, other))
		check(t, "o3", "other", "other")
	})
}

func testSummaries(t *testing.T, s graphstore.Store) {
	ctx := t.Context()
	merge(t, s, "k", chunk("c1", []graphstore.EntityMention{em("x", "X", "", "first"), em("y", "Y", "", "only")}))
	if err := s.SetDescriptions(ctx, "k", map[string]string{"x": "summary of x", "ghost": "ignored"}); err != nil {
		t.Fatalf("SetDescriptions: %v", err)
	}
	mustAbsent(t, s, "k", "ghost")
	eq(t, "summarized", entity(t, s, "k", "x").Description, "summary of x")
	eq(t, "untouched", entity(t, s, "k", "y").Description, "only")
	// A new chunk repeating a known description leaves the summary current.
	merge(t, s, "k", chunk("c2", []graphstore.EntityMention{em("x", "X", "", "first")}))
	eq(t, "after same description", entity(t, s, "k", "x").Description, "summary of x")
	// A new description makes it stale.
	merge(t, s, "k", chunk("c3", []graphstore.EntityMention{em("x", "X", "", "second, longer")}))
	eq(t, "after new description", entity(t, s, "k", "x").Description, "second, longer")
	if err := s.SetDescriptions(ctx, "k", map[string]string{"x": "new summary"}); err != nil {
		t.Fatal(err)
	}
	eq(t, "resummarized", entity(t, s, "k", "x").Description, "new summary")
	if err := s.SetDescriptions(ctx, "k", map[string]string{"x": ""}); err != nil {
		t.Fatal(err)
	}
	eq(t, "cleared", entity(t, s, "k", "x").Description, "second, longer")
}

func testImpliedAndSelfLoops(t *testing.T, s graphstore.Store) {
	merge(t, s, "k", chunk("c1", []graphstore.EntityMention{em("a", "A", "thing", "")},
		rm("a", "implied", 2), rm("a", "a", 9), rm("loop", "loop", 1)))
	got := entity(t, s, "k", "implied")
	eq(t, "implied entity", got, graphstore.Entity{Key: "implied", Name: "implied", MentionCount: 1, ChunkIDs: []string{"c1"}})
	mustAbsent(t, s, "k", "loop")
	eq(t, "stats", stats(t, s, "k"), graphstore.Stats{Entities: 2, Relationships: 1, Chunks: 1})
	// A later explicit mention names it; the implied one adds provenance only.
	merge(t, s, "k", chunk("c2", []graphstore.EntityMention{em("implied", "Implied", "kind", "now explicit")}))
	got = entity(t, s, "k", "implied")
	eq(t, "named", got.Name, "Implied")
	eq(t, "typed", got.Type, "kind")
	eq(t, "mentions", got.MentionCount, 2)
}

// neighborhoodGraph: a-b, a-c, d>b, c-d, e>d, d-f, g isolated; PageRank c > b.
func neighborhoodGraph(t *testing.T, s graphstore.Store) {
	merge(t, s, "k",
		chunk("c1", []graphstore.EntityMention{em("a", "A", "", ""), em("b", "B", "", "b from c1")}, rm("a", "b", 1)),
		chunk("c2", []graphstore.EntityMention{em("a", "A", "", ""), em("c", "C", "", "c from c2")}, rm("c", "a", 1)),
		chunk("c3", nil, rm("d", "b", 1), rm("c", "d", 1), rm("e", "d", 1), rm("d", "f", 1)),
		chunk("c4", []graphstore.EntityMention{em("g", "G", "", "")}),
	)
	if err := s.SetPageRank(t.Context(), "k", map[string]float64{"a": 0.1, "b": 0.2, "c": 0.3, "e": 0.05, "f": 0.05}); err != nil {
		t.Fatal(err)
	}
}

func testNeighborhood(t *testing.T, s graphstore.Store) {
	neighborhoodGraph(t, s)
	type hit struct {
		Key  string
		Dist int
		Path []string
	}
	cases := []struct {
		name         string
		start        []string
		depth, limit int
		want         []hit
	}{
		{"depth 1 by pagerank", []string{"a"}, 1, 0, []hit{{"c", 1, []string{"a", "c"}}, {"b", 1, []string{"a", "b"}}}},
		{"depth 2 smallest predecessor", []string{"a"}, 2, 0, []hit{
			{"c", 1, []string{"a", "c"}}, {"b", 1, []string{"a", "b"}}, {"d", 2, []string{"a", "b", "d"}}}},
		{"depth 3 ties by key", []string{"a"}, 3, 0, []hit{
			{"c", 1, []string{"a", "c"}}, {"b", 1, []string{"a", "b"}}, {"d", 2, []string{"a", "b", "d"}},
			{"e", 3, []string{"a", "b", "d", "e"}}, {"f", 3, []string{"a", "b", "d", "f"}}}},
		{"limit cuts the ordered list", []string{"a"}, 3, 3, []hit{
			{"c", 1, []string{"a", "c"}}, {"b", 1, []string{"a", "b"}}, {"d", 2, []string{"a", "b", "d"}}}},
		{"several starts excluded", []string{"d", "a", "missing"}, 1, 0, []hit{
			{"c", 1, []string{"a", "c"}}, {"b", 1, []string{"a", "b"}},
			{"e", 1, []string{"d", "e"}}, {"f", 1, []string{"d", "f"}}}},
		{"isolated", []string{"g"}, 3, 0, nil},
		{"depth 0", []string{"a"}, 0, 0, nil},
		{"unknown start", []string{"zzz"}, 2, 0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ns, err := s.Neighborhood(t.Context(), "k", c.start, c.depth, c.limit)
			if err != nil {
				t.Fatalf("Neighborhood: %v", err)
			}
			var got []hit
			for _, n := range ns {
				got = append(got, hit{n.Entity.Key, n.Distance, n.Path})
				if n.Entity.MentionCount == 0 || len(n.Entity.ChunkIDs) == 0 {
					t.Errorf("neighbor %q returned without its entity data: %+v", n.Entity.Key, n.Entity)
				}
				if d := map[string]string{"b": "b from c1", "c": "c from c2"}[n.Entity.Key]; n.Entity.Description != d {
					t.Errorf("neighbor %q Description = %q, want %q", n.Entity.Key, n.Entity.Description, d)
				}
				if len(n.Entity.Descriptions) > 0 {
					t.Errorf("neighbor %q returned with Descriptions, which a walk leaves out: %q", n.Entity.Key, n.Entity.Descriptions)
				}
			}
			eq(t, "neighbors", got, c.want)
		})
	}
}

func testRelationships(t *testing.T, s graphstore.Store) {
	merge(t, s, "k",
		chunk("c1", nil, rm("a", "b", 3), rm("b", "a", 1), rm("a", "c", 3), rm("d", "a", 5), rm("c", "d", 9)),
		chunk("c2", nil, rm("b", "c", 2)),
	)
	cases := []struct {
		name  string
		of    []string // RelationshipsOf keys; nil: use among
		among []string
		limit int
		want  []string
	}{
		{name: "of a", of: []string{"a"}, want: []string{"d>a", "a>b", "a>c", "b>a"}},
		{name: "of a limited", of: []string{"a"}, limit: 2, want: []string{"d>a", "a>b"}},
		{name: "of a and c, each once", of: []string{"a", "c"}, want: []string{"c>d", "d>a", "a>b", "a>c", "b>c", "b>a"}},
		{name: "of unknown", of: []string{"zzz"}, want: []string{}},
		{name: "among a b c", among: []string{"c", "b", "a"}, want: []string{"a>b", "a>c", "b>c", "b>a"}},
		{name: "among a d", among: []string{"a", "d"}, want: []string{"d>a"}},
		{name: "among single", among: []string{"a"}, want: []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []graphstore.Relationship
			var err error
			if c.of != nil {
				got, err = s.RelationshipsOf(t.Context(), "k", c.of, c.limit)
			} else {
				got, err = s.RelationshipsAmong(t.Context(), "k", c.among)
			}
			if err != nil {
				t.Fatal(err)
			}
			eq(t, "relationships", relIDs(got), c.want)
		})
	}
}

func testSnapshot(t *testing.T, s graphstore.Store) {
	batch := []graphstore.ChunkExtraction{
		chunk("c1", []graphstore.EntityMention{em("b", "B", "", ""), em("lonely", "L", "", "")}, rm("a", "b", 2)),
		chunk("c2", nil, rm("b", "a", 3), rm("c", "a", 1)),
		chunk("c3", nil, rm("c", "b", 0.5), rm("a", "b", 4)),
	}
	merge(t, s, "fwd", batch...)
	for _, c := range slices.Backward(batch) {
		merge(t, s, "rev", c)
	}
	fwd, err := s.Snapshot(t.Context(), "fwd")
	if err != nil {
		t.Fatal(err)
	}
	want := graphstore.Snapshot{
		Keys: []string{"a", "b", "c", "lonely"},
		Edges: []graphstore.Edge{
			{Source: 0, Target: 1, Weight: 9}, // a>b 2+4 and b>a 3
			{Source: 0, Target: 2, Weight: 1},
			{Source: 1, Target: 2, Weight: 0.5},
		},
	}
	eq(t, "snapshot", fwd, want)
	rev, err := s.Snapshot(t.Context(), "rev")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "snapshot merged in reverse", rev, fwd)
	again, err := s.Snapshot(t.Context(), "fwd")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "second snapshot", again, fwd)
}

func testPageRankAndCommunities(t *testing.T, s graphstore.Store) {
	ctx := t.Context()
	neighborhoodGraph(t, s) // a-b, a-c, d>b, c-d, e>d, d-f, g
	eq(t, "pagerank", entity(t, s, "k", "c").PageRank, 0.3)
	if err := s.SetPageRank(ctx, "k", map[string]float64{"c": 0.7, "ghost": 1}); err != nil {
		t.Fatal(err)
	}
	eq(t, "pagerank updated", entity(t, s, "k", "c").PageRank, 0.7)
	eq(t, "pagerank kept", entity(t, s, "k", "b").PageRank, 0.2)
	mustAbsent(t, s, "k", "ghost")

	in := []graphstore.Community{
		{ID: "C0-ab", Level: 0, ParentID: "C1", Members: []string{"b", "a"}},
		{ID: "C1", Level: 1, Members: []string{"d", "c", "b", "a"}},
		{ID: "C0-cd", Level: 0, ParentID: "C1", Members: []string{"c", "d"}},
		{ID: "C1-g", Level: 1, Members: []string{"g"}},
	}
	if err := s.ReplaceCommunities(ctx, "k", in); err != nil {
		t.Fatalf("ReplaceCommunities: %v", err)
	}
	want := []graphstore.Community{
		{ID: "C0-ab", Level: 0, ParentID: "C1", Members: []string{"a", "b"}, RelationshipCount: 1},
		{ID: "C0-cd", Level: 0, ParentID: "C1", Members: []string{"c", "d"}, RelationshipCount: 1},
		{ID: "C1", Level: 1, ChildIDs: []string{"C0-ab", "C0-cd"}, Members: []string{"a", "b", "c", "d"}, RelationshipCount: 4},
		{ID: "C1-g", Level: 1, Members: []string{"g"}},
	}
	all, err := s.Communities(ctx, "k", -1)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "all communities", all, want)
	lvl1, err := s.Communities(ctx, "k", 1)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "level 1", lvl1, want[2:])
	one, err := s.Community(ctx, "k", "C1")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "Community(C1)", one, want[2])
	eq(t, "a.Communities", entity(t, s, "k", "a").Communities, []string{"C0-ab", "C1"})
	eq(t, "g.Communities", entity(t, s, "k", "g").Communities, []string{"", "C1-g"})
	eq(t, "e.Communities", entity(t, s, "k", "e").Communities, []string(nil))
	st := stats(t, s, "k")
	if st.Communities != 4 || st.Levels != 2 {
		t.Errorf("Stats = %+v, want 4 communities on 2 levels", st)
	}

	// Replacing drops the old hierarchy entirely.
	if err := s.ReplaceCommunities(ctx, "k", []graphstore.Community{{ID: "only", Members: []string{"e", "d"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Community(ctx, "k", "C1"); !errors.Is(err, graphstore.ErrNotFound) {
		t.Errorf("old community after replace: %v, want ErrNotFound", err)
	}
	eq(t, "a.Communities after replace", entity(t, s, "k", "a").Communities, []string(nil))
	eq(t, "e.Communities after replace", entity(t, s, "k", "e").Communities, []string{"only"})
	if st := stats(t, s, "k"); st.Communities != 1 || st.Levels != 1 {
		t.Errorf("Stats after replace = %+v", st)
	}
	if err := s.ReplaceCommunities(ctx, "k", nil); err != nil {
		t.Fatal(err)
	}
	if st := stats(t, s, "k"); st.Communities != 0 || st.Levels != 0 {
		t.Errorf("Stats after clearing = %+v", st)
	}
}

func testDropCorpus(t *testing.T, s graphstore.Store) {
	ctx := t.Context()
	merge(t, s, "one", sampleBatch()...)
	merge(t, s, "two", sampleBatch()...)
	merge(t, s, "two", chunk("extra", []graphstore.EntityMention{em("only-two", "", "", "")}))
	two := dumpCorpus(t, s, "two")
	mustAbsent(t, s, "one", "only-two") // corpora do not see each other
	got, err := s.Corpora(ctx)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "corpora", got, []string{"one", "two"})
	if err := s.DropCorpus(ctx, "one"); err != nil {
		t.Fatalf("DropCorpus: %v", err)
	}
	if err := s.DropCorpus(ctx, "one"); err != nil {
		t.Fatalf("DropCorpus again: %v", err)
	}
	eq(t, "dropped stats", stats(t, s, "one"), graphstore.Stats{})
	mustAbsent(t, s, "one", "dopamine")
	sameDump(t, "other corpus after drop", dumpCorpus(t, s, "two"), two)
	if got, err = s.Corpora(ctx); err != nil {
		t.Fatal(err)
	}
	eq(t, "corpora after drop", got, []string{"two"})
}

// randomBatch builds chunk n of a deterministic workload with overlapping entities.
func workloadChunk(n int) graphstore.ChunkExtraction {
	key := func(i int) string { return fmt.Sprintf("e%02d", i%23) }
	var ents []graphstore.EntityMention
	var rels []graphstore.RelationMention
	for j := range 4 {
		k := key(n*3 + j*5)
		ents = append(ents, em(k, fmt.Sprintf("E%d", (n+j)%3), fmt.Sprintf("t%d", n%2), fmt.Sprintf("desc %d", n%7)))
		if j > 0 {
			rels = append(rels, rm(key(n*3+(j-1)*5), k, float64(1+(n+j)%4)*0.1))
		}
	}
	return chunk(fmt.Sprintf("chunk-%03d", n), ents, rels...)
}

func testConcurrentMerge(t *testing.T, s graphstore.Store) {
	const workers, perWorker = 8, 12
	var serial []graphstore.ChunkExtraction
	for n := range workers * perWorker {
		serial = append(serial, workloadChunk(n))
	}
	merge(t, s, "serial", serial...)

	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				n := w*perWorker + i
				// Each worker also replays a chunk of its neighbour, as redelivery would.
				batch := []graphstore.ChunkExtraction{workloadChunk(n), workloadChunk(((w+1)%workers)*perWorker + i)}
				if err := s.Merge(t.Context(), "parallel", batch); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent Merge: %v", err)
	}
	sameDump(t, "concurrent vs serial", dumpCorpus(t, s, "parallel"), dumpCorpus(t, s, "serial"))
}

func testCancellation(t *testing.T, s graphstore.Store) {
	merge(t, s, "k", sampleBatch()...)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	calls := []struct {
		name string
		call func() error
	}{
		{"Merge", func() error { return s.Merge(ctx, "k", []graphstore.ChunkExtraction{workloadChunk(1)}) }},
		{"RemoveChunks", func() error { return s.RemoveChunks(ctx, "k", []string{"c1"}) }},
		{"Entity", func() error { _, err := s.Entity(ctx, "k", "dopamine"); return err }},
		{"Entities", func() error { _, err := s.Entities(ctx, "k", []string{"dopamine"}); return err }},
		{"Neighborhood", func() error { _, err := s.Neighborhood(ctx, "k", []string{"dopamine"}, 2, 0); return err }},
		{"RelationshipsOf", func() error { _, err := s.RelationshipsOf(ctx, "k", []string{"dopamine"}, 0); return err }},
		{"Snapshot", func() error { _, err := s.Snapshot(ctx, "k"); return err }},
		{"SetPageRank", func() error { return s.SetPageRank(ctx, "k", map[string]float64{"dopamine": 1}) }},
		{"ReplaceCommunities", func() error { return s.ReplaceCommunities(ctx, "k", []graphstore.Community{{ID: "x"}}) }},
		{"Stats", func() error { _, err := s.Stats(ctx, "k"); return err }},
		{"Levels", func() error { _, err := s.Levels(ctx, "k"); return err }},
		{"DropCorpus", func() error { return s.DropCorpus(ctx, "k") }},
		{"Ping", func() error { return s.Ping(ctx) }},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			if err := c.call(); !errors.Is(err, context.Canceled) {
				t.Fatalf("error = %v, want context.Canceled", err)
			}
		})
	}
	// Nothing the cancelled calls would have written is there.
	eq(t, "stats", stats(t, s, "k"), graphstore.Stats{Entities: 4, Relationships: 4, Chunks: 3})
	eq(t, "pagerank", entity(t, s, "k", "dopamine").PageRank, 0.0)
}

func testClose(t *testing.T, s graphstore.Store) {
	ctx := t.Context()
	merge(t, s, "k", sampleBatch()...)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := s.Ping(ctx); !errors.Is(err, graphstore.ErrClosed) {
		t.Errorf("Ping after Close = %v, want ErrClosed", err)
	}
	if err := s.Merge(ctx, "k", sampleBatch()); !errors.Is(err, graphstore.ErrClosed) {
		t.Errorf("Merge after Close = %v, want ErrClosed", err)
	}
	if _, err := s.Entity(ctx, "k", "dopamine"); !errors.Is(err, graphstore.ErrClosed) {
		t.Errorf("Entity after Close = %v, want ErrClosed", err)
	}
}

func testPersistence(t *testing.T, s graphstore.Store, reopen func(*testing.T, graphstore.Store) graphstore.Store) {
	ctx := t.Context()
	merge(t, s, "k", sampleBatch()...)
	merge(t, s, "other", workloadChunk(1), workloadChunk(2))
	if err := s.SetPageRank(ctx, "k", map[string]float64{"dopamine": 0.5}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetDescriptions(ctx, "k", map[string]string{"dopamine": "summary"}); err != nil {
		t.Fatal(err)
	}
	if err := s.ReplaceCommunities(ctx, "k", []graphstore.Community{{ID: "c", Members: []string{"dopamine", "reward"}}}); err != nil {
		t.Fatal(err)
	}
	before, other := dumpCorpus(t, s, "k"), dumpCorpus(t, s, "other")
	s = reopen(t, s)
	sameDump(t, "after reopen", dumpCorpus(t, s, "k"), before)
	sameDump(t, "other corpus after reopen", dumpCorpus(t, s, "other"), other)
	eq(t, "summary after reopen", entity(t, s, "k", "dopamine").Description, "summary")
}

func testCloseWhileBusy(t *testing.T, s graphstore.Store) {
	merge(t, s, "k", sampleBatch()...)
	ops := []func(ctx context.Context, i int) error{
		func(ctx context.Context, i int) error {
			return s.Merge(ctx, "k", []graphstore.ChunkExtraction{workloadChunk(i % 50)})
		},
		func(ctx context.Context, _ int) error { _, err := s.Entity(ctx, "k", "dopamine"); return err },
		func(ctx context.Context, _ int) error {
			_, err := s.Neighborhood(ctx, "k", []string{"dopamine"}, 2, 0)
			return err
		},
		func(ctx context.Context, _ int) error { _, err := s.Snapshot(ctx, "k"); return err },
	}
	var started, done sync.WaitGroup
	errs := make(chan error, len(ops))
	for _, op := range ops {
		started.Add(1)
		done.Go(func() {
			first := true
			for i := 0; ; i++ {
				err := op(t.Context(), i)
				if first {
					started.Done()
					first = false
				}
				if errors.Is(err, graphstore.ErrClosed) {
					return
				}
				if err != nil {
					errs <- fmt.Errorf("operation during Close: %w", err)
					return
				}
			}
		})
	}
	started.Wait() // every operation has run at least once, most are still looping
	if err := s.Close(); err != nil {
		t.Errorf("Close while busy: %v", err)
	}
	done.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
