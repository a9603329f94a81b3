package extractor

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/offlinextract"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// docMsg is the delivery of a document-subject event at a stream sequence.
func docMsg(t *testing.T, seq, deliveries uint64, e events.Event) *bus.Message {
	t.Helper()
	b, err := events.Encode(e)
	if err != nil {
		t.Fatal(err)
	}
	return &bus.Message{Subject: events.Subject(events.KindDocuments, "demo"), Data: b, StreamSeq: seq, Deliveries: deliveries}
}

func doc(text string) *events.Document {
	return &events.Document{Schema: events.SchemaDocument, Corpus: "demo", ID: "d", Title: "D", Text: text, ContentHash: events.Hash(text)}
}

// chunkIDs lists the chunk records of the demo corpus.
func chunkIDs(t *testing.T, f fixture) []string {
	t.Helper()
	vs := f.svc.deps.Vectors.(vectorstore.Store)
	ids, _, err := vs.List(t.Context(), schema.Collection("demo", schema.Chunks), "", 1000)
	if errors.Is(err, vectorstore.ErrNotFound) {
		return nil // no collection: no chunk was ever written
	}
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestChunkerVersions drives the chunker through the cases the stream can produce:
// versions in and out of order, a redelivery of a superseded version that had written
// chunks before it crashed, an unchanged re-publication, a deletion, a deletion of an
// unknown id and a corpus drop.
func TestChunkerVersions(t *testing.T) {
	f := newFixture(t, nil)
	f.svc.dim = 64
	ctx := t.Context()
	handle := func(m *bus.Message) {
		t.Helper()
		if err := f.svc.handleDocument(ctx, "demo", m); err != nil {
			t.Fatal(err)
		}
	}
	record := func() pipeline.DocumentRecord {
		t.Helper()
		rec, _, err := pipeline.LoadDocument(ctx, f.svc.state, "demo", "d")
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	v5 := doc("Version five. Ada Quillane met Tomas Reyburn in Marrow Bay.")
	handle(docMsg(t, 5, 1, v5))
	if ids := chunkIDs(t, f); len(ids) != 1 || pipeline.ChunkIdentity(ids[0]) == ids[0] || ids[0][len(ids[0])-2:] != "@5" {
		t.Fatalf("after version 5: %v", ids)
	}
	// Version 3 arrives after 5 on its first delivery: dropped without a write.
	handle(docMsg(t, 3, 1, doc("Version three.")))
	if rec := record(); rec.Seq != 5 || rec.Version() != "5" || rec.State != pipeline.StateIndexed {
		t.Fatalf("record after a late version: %+v", rec)
	}
	// Version 4 crashed after writing its chunk (simulated: its record is in the store),
	// then is redelivered: it removes what it wrote.
	v4 := doc("Version four, a different text.")
	stale := &version{doc: v4, text: v4.Text, set: pipeline.ChunkSet{Version: "4"}}
	if err := stale.split(f.svc.cfg); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.writeChunks(ctx, "demo", schema.Collection("demo", schema.Chunks), stale, offlineSubject(v4), stale.chunks); err != nil {
		t.Fatal(err)
	}
	if n := len(chunkIDs(t, f)); n != 2 {
		t.Fatalf("%d chunks after the simulated crash, want 2", n)
	}
	handle(docMsg(t, 4, 2, v4))
	if ids := chunkIDs(t, f); len(ids) != 1 || ids[0][len(ids[0])-2:] != "@5" {
		t.Fatalf("after the redelivery of version 4: %v", ids)
	}
	// Version 6 with version 5's text adopts its chunks: nothing is written.
	handle(docMsg(t, 6, 1, doc(v5.Text)))
	if rec, ids := record(), chunkIDs(t, f); rec.Seq != 6 || rec.Version() != "5" || len(ids) != 1 || ids[0][len(ids[0])-2:] != "@5" {
		t.Fatalf("after an unchanged version: %+v, %v", rec, ids)
	}
	// Version 7 replaces it; the deletion at 8 removes it; version 7 redelivered after
	// the deletion writes nothing.
	handle(docMsg(t, 7, 1, doc("Version seven. Storm Hester reached Gullhead Point.")))
	handle(docMsg(t, 8, 1, &events.DocumentDeleted{Schema: events.SchemaDocumentDeleted, Corpus: "demo", ID: "d"}))
	handle(docMsg(t, 7, 2, doc("Version seven. Storm Hester reached Gullhead Point.")))
	if rec, ids := record(), chunkIDs(t, f); !rec.Deleted || rec.Seq != 8 || rec.State != pipeline.StateDeleted || len(ids) != 0 {
		t.Fatalf("after the deletion: %+v, %v", rec, ids)
	}
	// A deletion of an id never seen leaves a tombstone that orders a late version.
	handle(docMsg(t, 10, 1, &events.DocumentDeleted{Schema: events.SchemaDocumentDeleted, Corpus: "demo", ID: "ghost"}))
	late := doc("A late ghost.")
	late.ID = "ghost"
	handle(docMsg(t, 9, 1, late))
	if ids := chunkIDs(t, f); len(ids) != 0 {
		t.Fatalf("a version older than its id's deletion was indexed: %v", ids)
	}
	// Version 11 indexes d again; a corpus drop at 12 deletes it and removes the records;
	// version 13 after the drop is indexed, a late version 11 redelivered is not.
	handle(docMsg(t, 11, 1, doc("Version eleven. The Lantern Tide Festival.")))
	handle(docMsg(t, 12, 1, &events.CorpusDropped{Schema: events.SchemaCorpusDropped, Corpus: "demo"}))
	if ids := chunkIDs(t, f); len(ids) != 0 {
		t.Fatalf("after the drop: %v", ids)
	}
	if docs, err := pipeline.ListDocuments(ctx, f.svc.state, "demo"); err != nil || len(docs) != 0 {
		t.Fatalf("records after the drop: %+v, %v", docs, err)
	}
	handle(docMsg(t, 11, 2, doc("Version eleven. The Lantern Tide Festival.")))
	handle(docMsg(t, 13, 1, doc("Version thirteen. The Harbour School.")))
	if ids := chunkIDs(t, f); len(ids) != 1 || ids[0][len(ids[0])-3:] != "@13" {
		t.Fatalf("after the drop and version 13: %v", ids)
	}
	// The grapher was told to remove the chunks of exactly the versions that were
	// indexed and then retired: 5 (replaced by 7), 7 (deleted), 11 (dropped).
	var versions []string
	for _, x := range extractionEvents(t, f) {
		if x.Method == events.MethodRemoved && !slices.Contains(versions, x.DocumentVersion) {
			versions = append(versions, x.DocumentVersion)
		}
	}
	slices.Sort(versions)
	if !slices.Equal(versions, []string{"11", "5", "7"}) {
		t.Errorf("removals of versions %v, want 5, 7 and 11", versions)
	}
}

func offlineSubject(d *events.Document) offlinextract.DocumentSubject {
	return offlinextract.Subject(d.Title, d.Text)
}

func extractionEvents(t *testing.T, f fixture) []events.Extraction {
	t.Helper()
	var out []events.Extraction
	for _, data := range bustest.Messages(t, f.bus, pipeline.StreamName(events.KindExtractions), events.Subject(events.KindExtractions, "demo")) {
		var x events.Extraction
		if err := events.Decode(data, &x); err != nil {
			t.Fatal(err)
		}
		out = append(out, x)
	}
	return out
}

// beforeWriteKV runs before just once, ahead of the first write of key: a handler
// running on another replica that wins the race to that moment.
type beforeWriteKV struct {
	bus.KV
	key    string
	before func()
}

func (k *beforeWriteKV) hook(key string) {
	if key == k.key && k.before != nil {
		f := k.before
		k.before = nil
		f()
	}
}

func (k *beforeWriteKV) Create(ctx context.Context, key string, value []byte) (uint64, error) {
	k.hook(key)
	return k.KV.Create(ctx, key, value)
}

func (k *beforeWriteKV) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	k.hook(key)
	return k.KV.Update(ctx, key, value, rev)
}

// TestDropOvertakesClaim: an event at seq 7 of a document with no record (never seen,
// or dropped before) decides to claim it; before its write, the corpus drop at seq 8
// is handled entirely by another replica, whose list of documents cannot name one
// that has no record yet. The drop must still win: the document ends with no record
// and no chunks. Before the fix, a deletion checked for a later drop only before its
// claim and left a record at seq 7 (TestLifecycleProperty's "record at seq 77, the
// last event is 78").
func TestDropOvertakesClaim(t *testing.T) {
	deletion := &events.DocumentDeleted{Schema: events.SchemaDocumentDeleted, Corpus: "demo", ID: "d"}
	for name, ev := range map[string]events.Event{"deletion": deletion, "publication": doc("Version seven. The Harbour School.")} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, nil)
			f.svc.dim = 64
			ctx := t.Context()
			drop := docMsg(t, 8, 1, &events.CorpusDropped{Schema: events.SchemaCorpusDropped, Corpus: "demo"})
			f.svc.state = &beforeWriteKV{KV: f.svc.state, key: schema.DocumentKey("demo", "d"), before: func() {
				if err := f.svc.handleDocument(ctx, "demo", drop); err != nil {
					t.Error(err)
				}
			}}
			if err := f.svc.handleDocument(ctx, "demo", docMsg(t, 7, 1, ev)); err != nil {
				t.Fatal(err)
			}
			if docs, err := pipeline.ListDocuments(ctx, f.svc.state, "demo"); err != nil || len(docs) != 0 {
				t.Fatalf("records after the drop at 8: %+v, %v", docs, err)
			}
			if ids := chunkIDs(t, f); len(ids) != 0 {
				t.Fatalf("chunks after the drop at 8: %v", ids)
			}
		})
	}
}
