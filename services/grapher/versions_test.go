package grapher

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
)

// TestMergeOnlyCurrentVersions: the merger merges an extraction only while its document
// version is current; an extraction of a superseded version (one that finishes after the
// new version took over) is removed instead of landing, also after the merger has seen
// the old version current; a removal takes a chunk's contribution out and makes the
// merger read the record again.
func TestMergeOnlyCurrentVersions(t *testing.T) {
	ctx := t.Context()
	b, err := bus.New(bustest.Connect(t, bustest.StartServer(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := pipeline.Provision(ctx, b, pipeline.DefaultTopology()); err != nil {
		t.Fatal(err)
	}
	kv, err := b.KV(ctx, schema.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	g, err := boltgraph.Open(filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	m := newMerger(g, newVersionCache(kv, 10), 8, time.Millisecond)
	m.start()
	t.Cleanup(m.stop)

	setCurrent := func(version string, deleted bool) {
		rec, rev, err := pipeline.LoadDocument(ctx, kv, "demo", "d")
		if err != nil {
			t.Fatal(err)
		}
		rec.ID, rec.Seq, rec.Deleted = "d", rec.Seq+1, deleted
		rec.Chunks = pipeline.ChunkSet{Version: version, Hashes: "aaaaaaaaaaaa" + "bbbbbbbbbbbb"}
		if deleted {
			rec.Chunks = pipeline.ChunkSet{}
		}
		if _, err := pipeline.StoreDocument(ctx, kv, "demo", rec, rev); err != nil {
			t.Fatal(err)
		}
	}
	chunkID := func(pos int, version string) string {
		return pipeline.ChunkSet{Version: version, Hashes: "aaaaaaaaaaaa" + "bbbbbbbbbbbb"}.ChunkIDs("d")[pos]
	}
	extraction := func(pos int, version, entity string) mergeOp {
		return mergeOp{docID: "d", version: version, ce: graphstore.ChunkExtraction{ChunkID: chunkID(pos, version), DocumentID: "d",
			Entities: []graphstore.EntityMention{{Key: entity, Name: entity}}}}
	}
	removals := func(version string) []mergeOp {
		return []mergeOp{
			{docID: "d", version: version, remove: true, ce: graphstore.ChunkExtraction{ChunkID: chunkID(0, version)}},
			{docID: "d", version: version, remove: true, ce: graphstore.ChunkExtraction{ChunkID: chunkID(1, version)}},
		}
	}
	apply := func(m *merger, ops ...mergeOp) {
		t.Helper()
		for _, op := range ops {
			if err := m.apply(context.Background(), "demo", op); err != nil {
				t.Fatal(err)
			}
		}
	}
	keys := func() []string {
		t.Helper()
		s, err := g.Snapshot(ctx, "demo")
		if err != nil {
			t.Fatal(err)
		}
		return s.Keys
	}

	setCurrent("1", false)
	apply(m, extraction(0, "1", "alpha"))
	if got := keys(); !slices.Equal(got, []string{"alpha"}) {
		t.Fatalf("after version 1: %v", got)
	}
	// Version 2 takes over. A grapher that has not seen version 1 (a restart) gets
	// version 1's extraction of chunk 1 late: it reads the record and drops it.
	setCurrent("2", false)
	fresh := newMerger(g, newVersionCache(kv, 10), 8, time.Millisecond)
	fresh.start()
	apply(fresh, extraction(1, "1", "stale"))
	fresh.stop()
	if got := keys(); slices.Contains(got, "stale") {
		t.Fatalf("an extraction of a superseded version landed: %v", got)
	}
	// The merger that saw version 1 current merges the late extraction (the chunker's
	// removals of version 1 follow, since it published them after version 2 took over),
	// then version 2's; after the removals, nothing of version 1 is left, and a
	// redelivered extraction of version 1 no longer lands.
	apply(m, extraction(1, "1", "stale"), extraction(0, "2", "beta"))
	apply(m, removals("1")...)
	apply(m, extraction(1, "1", "stale"))
	if got := keys(); !slices.Equal(got, []string{"beta"}) {
		t.Fatalf("after version 2 and the removal of version 1: %v", got)
	}
	// Deleted: version 2's removals take it out; a late extraction of it does not land.
	setCurrent("", true)
	apply(m, removals("2")...)
	apply(m, extraction(0, "2", "beta"))
	if got := keys(); len(got) != 0 {
		t.Fatalf("after the deletion: %v", got)
	}
	st, err := g.Stats(ctx, "demo")
	if err != nil || st.Chunks != 0 {
		t.Fatalf("contributions left after the deletion: %+v, %v", st, err)
	}
	// An extraction written before versions existed is merged as before.
	apply(m, mergeOp{docID: "old", ce: graphstore.ChunkExtraction{ChunkID: "old:0:cccccccccccc", DocumentID: "old",
		Entities: []graphstore.EntityMention{{Key: "legacy", Name: "legacy"}}}})
	if got := keys(); !slices.Equal(got, []string{"legacy"}) {
		t.Fatalf("unversioned extraction: %v", got)
	}
}
