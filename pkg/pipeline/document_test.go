package pipeline

import (
	"errors"
	"slices"
	"testing"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/schema"
)

func TestChunkIDs(t *testing.T) {
	set := ChunkSet{Version: "17", Hashes: "aaaaaaaaaaaa" + "bbbbbbbbbbbb"}
	got := set.ChunkIDs("notes/a@b.md")
	want := []string{"notes/a@b.md:0:aaaaaaaaaaaa@17", "notes/a@b.md:1:bbbbbbbbbbbb@17"}
	if !slices.Equal(got, want) || set.Len() != 2 {
		t.Fatalf("ChunkIDs = %q (len %d), want %q", got, set.Len(), want)
	}
	legacy := ChunkSet{IDs: []string{"d:0:cccccccccccc"}}
	if ids := legacy.ChunkIDs("d"); !slices.Equal(ids, legacy.IDs) || legacy.Len() != 1 {
		t.Errorf("legacy ChunkIDs = %q", ids)
	}
	for id, want := range map[string]string{
		"notes/a@b.md:0:aaaaaaaaaaaa@17": "notes/a@b.md:0:aaaaaaaaaaaa",
		"a@b:0:cccccccccccc":             "a@b:0:cccccccccccc", // unversioned, '@' in the document id
		"d:1:cccccccccccc":               "d:1:cccccccccccc",
		"d:1:cccccccccccc@":              "d:1:cccccccccccc@",
	} {
		if got := ChunkIdentity(id); got != want {
			t.Errorf("ChunkIdentity(%q) = %q, want %q", id, got, want)
		}
	}
}

func TestSuperseded(t *testing.T) {
	old := ChunkSet{Version: "3", Hashes: "aaaaaaaaaaaa"}
	cur := ChunkSet{Version: "5", Hashes: "bbbbbbbbbbbb"}
	rec := DocumentRecord{Chunks: cur, Retire: []ChunkSet{old}}
	if got := rec.Superseded(ChunkSet{Version: "9", Hashes: "cccccccccccc"}); len(got) != 2 || !got[0].Equal(old) || !got[1].Equal(cur) {
		t.Errorf("a new version inherits %+v, want the list and the current chunks", got)
	}
	if got := rec.Superseded(cur); len(got) != 1 || !got[0].Equal(old) {
		t.Errorf("the same chunks again inherit %+v, want the list only", got)
	}
	if got := (DocumentRecord{Deleted: true}).Superseded(ChunkSet{}); len(got) != 0 {
		t.Errorf("a deleted record hands on %+v", got)
	}
}

// TestDocumentRecordStore: records are written only by compare-and-set, and a record
// written before versions existed reads as an indexed document with explicit chunk ids.
func TestDocumentRecordStore(t *testing.T) {
	b := newBus(t)
	kv, err := b.KV(t.Context(), schema.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	rec, rev, err := LoadDocument(ctx, kv, "demo", "a")
	if err != nil || rev != 0 || rec.Known() {
		t.Fatalf("an unknown document: %+v at %d, %v", rec, rev, err)
	}
	r1, err := StoreDocument(ctx, kv, "demo", DocumentRecord{ID: "a", Seq: 4, State: StateWriting}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := StoreDocument(ctx, kv, "demo", DocumentRecord{ID: "a", Seq: 3}, 0); !errors.Is(err, bus.ErrConflict) {
		t.Errorf("a second create: %v, want ErrConflict", err)
	}
	if _, err := StoreDocument(ctx, kv, "demo", DocumentRecord{ID: "a", Seq: 6}, r1); err != nil {
		t.Fatal(err)
	}
	if _, err := StoreDocument(ctx, kv, "demo", DocumentRecord{ID: "a", Seq: 5}, r1); !errors.Is(err, bus.ErrConflict) {
		t.Errorf("an update at an old revision: %v, want ErrConflict", err)
	}
	if rec, _, err := LoadDocument(ctx, kv, "demo", "a"); err != nil || rec.Seq != 6 || rec.UpdatedAt.IsZero() {
		t.Errorf("record = %+v, %v", rec, err)
	}
	if err := kv.Put(ctx, schema.DocumentKey("demo", "old"), []byte(`{"content_hash":"h","chunk_ids":["old:0:aaaaaaaaaaaa"]}`)); err != nil {
		t.Fatal(err)
	}
	old, _, err := LoadDocument(ctx, kv, "demo", "old")
	if err != nil || old.State != StateIndexed || !slices.Equal(old.Chunks.ChunkIDs("old"), []string{"old:0:aaaaaaaaaaaa"}) || old.Version() != "" {
		t.Errorf("legacy record = %+v, %v", old, err)
	}
	docs, err := ListDocuments(ctx, kv, "demo")
	if err != nil || len(docs) != 2 {
		t.Errorf("ListDocuments = %+v, %v", docs, err)
	}
	if cur, err := IsCurrent(ctx, kv, "demo", "old", ""); err != nil || !cur {
		t.Errorf("an unversioned event is current: %v, %v", cur, err)
	}
	if cur, err := IsCurrent(ctx, kv, "demo", "a", "4"); err != nil || cur {
		t.Errorf("version 4 of a record without chunks is current: %v, %v", cur, err)
	}
}
