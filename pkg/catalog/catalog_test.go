package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/blevesearch/bleve_index_api.AnalysisWorker"))
}

type fixture struct {
	b       *bus.Bus
	graph   *boltgraph.Store
	vectors *embedded.Store
	cat     *Catalog
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	b, err := bus.New(bustest.Connect(t, bustest.StartServer(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := pipeline.Provision(t.Context(), b, pipeline.DefaultTopology()); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	g, err := boltgraph.Open(filepath.Join(dir, "graph.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	v, err := embedded.Open(filepath.Join(dir, "vectors"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = v.Close() })
	return &fixture{b: b, graph: g, vectors: v, cat: New(b, g, v)}
}

func (f *fixture) publish(t *testing.T, corpus, id, title, text string) {
	t.Helper()
	if _, err := pipeline.PublishDocument(t.Context(), f.b, events.Document{Corpus: corpus, ID: id, Title: title, Text: text}); err != nil {
		t.Fatal(err)
	}
}

// chunk is a stand-in for the extractor's chunker: it writes one chunk per document
// (with the title as the chunker writes it) and the document's record in the
// chunker's format, and refuses documents whose text says "poison" (dead-lettered).
func (f *fixture) chunk(ctx context.Context, corpus string, m *bus.Message) error {
	var d events.Document
	if err := events.Decode(m.Data, &d); err != nil {
		return bus.Permanent(err)
	}
	if strings.Contains(d.Text, "poison") {
		return bus.Permanentf("document %s: chunking: poisoned text", d.ID)
	}
	coll := schema.Collection(corpus, schema.Chunks)
	if err := f.vectors.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: coll, Dim: 16, Lexical: true}); err != nil {
		return err
	}
	vecs, err := hashembed.New(16).Embed(ctx, []string{d.Text})
	if err != nil {
		return err
	}
	id := d.ID + ":0:" + d.ContentHash[:12]
	if err := f.vectors.Upsert(ctx, coll, []vectorstore.Record{{ID: id, Vector: vecs[0], Text: d.Text,
		Attrs: map[string]string{schema.ChunkDocumentID: d.ID, schema.ChunkTitle: d.Title}}}); err != nil {
		return err
	}
	kv, err := f.b.KV(ctx, schema.StateBucket)
	if err != nil {
		return err
	}
	rec, _ := json.Marshal(map[string]any{"content_hash": d.ContentHash, "chunk_ids": []string{id}})
	return kv.Put(ctx, schema.DocumentKey(corpus, d.ID), rec)
}

// runChunker runs the stand-in chunker until every document event of corpus is handled.
func (f *fixture) runChunker(t *testing.T, corpus string) {
	t.Helper()
	cfg := pipeline.DefaultStageConfig()
	cfg.MaxDeliver, cfg.Backoff = 1, []time.Duration{10 * time.Millisecond}
	r := pipeline.NewRunner(f.b, pipeline.StageChunker, events.KindDocuments, cfg, f.chunk, nil)
	if err := r.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Stop(context.Background()) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := pipeline.GetStatus(t.Context(), f.b, corpus)
		if err != nil {
			t.Fatal(err)
		}
		if s := st.Stages[0]; s.Pending == 0 && s.InFlight == 0 && s.Total > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the chunker did not finish: %+v", st.Stages[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func byID(docs []Document) map[string]Document {
	m := map[string]Document{}
	for _, d := range docs {
		m[d.ID] = d
	}
	return m
}

func TestEmptyPlatform(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	if cs, err := f.cat.Corpora(ctx, nil); err != nil || len(cs) != 0 {
		t.Errorf("Corpora = %+v, %v: want none", cs, err)
	}
	st, err := f.cat.Status(ctx, "demo")
	if err != nil || st.State != StateEmpty || len(st.Stages) != len(pipeline.Stages) || st.DeadLetters == nil {
		t.Errorf("Status = %+v, %v: want empty with every stage and no dead letters", st, err)
	}
	if _, err := f.cat.Corpus(ctx, "demo"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Corpus of nothing: %v, want ErrNotFound", err)
	}
	if p, err := f.cat.Documents(ctx, "demo", "", 10); err != nil || len(p.Documents) != 0 || p.Next != "" {
		t.Errorf("Documents = %+v, %v: want an empty page", p, err)
	}
}

// TestDocumentLifecycle: published documents are pending, then indexed once chunked
// (with the title their chunks were written with), or failed with the dead letter's
// reason; a new version is pending again; status groups the dead letters.
func TestDocumentLifecycle(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	f.publish(t, "demo", "notes/a.md", "Alpha", "Alpha text about lighthouses.")
	f.publish(t, "demo", "notes/b.md", "Beta", "Beta text about keepers.")
	f.publish(t, "demo", "bad.txt", "Bad", "poison pill")

	page, err := f.cat.Documents(ctx, "demo", "", 10)
	if err != nil {
		t.Fatal(err)
	}
	docs := byID(page.Documents)
	if len(docs) != 3 {
		t.Fatalf("listed %+v, want the three published documents", page.Documents)
	}
	for id, d := range docs {
		if d.State != DocumentPending || d.Title == "" || d.ContentHash == "" || d.Updated.IsZero() {
			t.Errorf("%s before chunking: %+v, want pending with title, hash and time", id, d)
		}
	}
	if st, err := f.cat.Status(ctx, "demo"); err != nil || st.State != StateIndexing {
		t.Errorf("status before chunking: %+v, %v: want indexing", st, err)
	}

	f.runChunker(t, "demo")
	page, err = f.cat.Documents(ctx, "demo", "", 10)
	if err != nil {
		t.Fatal(err)
	}
	docs = byID(page.Documents)
	a := docs["notes/a.md"]
	if a.State != DocumentIndexed || a.Title != "Alpha" || a.Chunks != 1 || a.ContentHash != events.Hash("Alpha text about lighthouses.") {
		t.Errorf("notes/a.md after chunking: %+v, want indexed, titled, one chunk, its hash", a)
	}
	bad := docs["bad.txt"]
	if bad.State != DocumentFailed || !strings.Contains(bad.Reason, "poisoned text") || bad.Title != "Bad" {
		t.Errorf("bad.txt: %+v, want failed with the dead letter's reason", bad)
	}

	st, err := f.cat.Status(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if st.State != StateFailed || len(st.DeadLetters) != 1 || st.DeadLetters[0].Stage != pipeline.StageChunker || st.DeadLetters[0].Count != 1 ||
		!strings.Contains(st.DeadLetters[0].Reason, "poisoned text") {
		t.Errorf("status = %+v, want failed with one chunker dead letter", st)
	}
	ps, err := pipeline.GetStatus(ctx, f.b, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(st.Stages, ps.Stages) || st.Complete != ps.Complete || st.Graph != ps.Graph {
		t.Errorf("status numbers %+v differ from pipeline.GetStatus %+v", st.Status, ps)
	}
	raw, _ := json.Marshal(st)
	for _, field := range []string{`"corpus":"demo"`, `"stages":`, `"graph":`, `"complete":`, `"state":"failed"`, `"dead_letters":`, `"detection":`} {
		if !strings.Contains(string(raw), field) {
			t.Errorf("status JSON %s lacks %s", raw, field)
		}
	}

	// A new version waits as pending; the old record is still there.
	f.publish(t, "demo", "notes/a.md", "Alpha v2", "Alpha text, second edition.")
	d, err := f.cat.Document(ctx, "demo", "notes/a.md")
	if err != nil || d.State != DocumentPending || d.Title != "Alpha v2" || d.ContentHash != events.Hash("Alpha text, second edition.") {
		t.Errorf("a new version: %+v, %v: want pending with the new title and hash", d, err)
	}
	if _, err := f.cat.Document(ctx, "demo", "never"); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown document: %v, want ErrNotFound", err)
	}

	cs, err := f.cat.Corpora(ctx, nil)
	if err != nil || len(cs) != 1 {
		t.Fatalf("Corpora = %+v, %v", cs, err)
	}
	if c := cs[0]; c.Name != "demo" || c.Documents != 3 || c.Chunks != 2 || c.State != StateIndexing {
		t.Errorf("corpus = %+v, want demo with the 3 documents the listing lists, 2 chunks, indexing (a version waits)", c)
	}
	if cs, err := f.cat.Corpora(ctx, func(string) bool { return false }); err != nil || len(cs) != 0 {
		t.Errorf("Corpora filtered out: %+v, %v", cs, err)
	}
}

// TestDocumentPages: pages follow each other without gap or repeat; bad cursors and
// limits are the caller's error.
func TestDocumentPages(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	var want []string
	for i := range 7 {
		id := fmt.Sprintf("doc-%d", i)
		want = append(want, id)
		f.publish(t, "pages", id, "", "Text number "+id)
	}
	f.runChunker(t, "pages")
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		p, err := f.cat.Documents(ctx, "pages", cursor, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Documents) > 3 || pages > 3 {
			t.Fatalf("page %d: %d documents", pages, len(p.Documents))
		}
		for _, d := range p.Documents {
			got = append(got, d.ID)
			if d.State != DocumentIndexed {
				t.Errorf("%+v: want indexed", d)
			}
		}
		if p.Next == "" {
			break
		}
		cursor = p.Next
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("pages listed %v, want %v", got, want)
	}
	for _, tc := range []struct {
		cursor string
		limit  int
	}{{"", 0}, {"", MaxPage + 1}, {"zz", 10}, {"doc.pages.x", 10}} {
		if _, err := f.cat.Documents(ctx, "pages", tc.cursor, tc.limit); !errors.Is(err, ErrInvalid) {
			t.Errorf("cursor %q limit %d: %v, want ErrInvalid", tc.cursor, tc.limit, err)
		}
	}
}

// TestCorporaSources: a corpus is listed whether it has published documents, chunks
// or a graph, with the graph's counts.
func TestCorporaSources(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	f.publish(t, "published", "d", "", "some text")
	if err := f.graph.Merge(ctx, "graphonly", []graphstore.ChunkExtraction{{ChunkID: "c", DocumentID: "d",
		Entities:  []graphstore.EntityMention{{Key: "a", Name: "A", Type: "T"}, {Key: "b", Name: "B", Type: "T"}},
		Relations: []graphstore.RelationMention{{SourceKey: "a", TargetKey: "b", Type: "R"}}}}); err != nil {
		t.Fatal(err)
	}
	cs, err := f.cat.Corpora(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
		if c.Name == "graphonly" && (c.Entities != 2 || c.Relationships != 1 || c.State != StateEmpty) {
			t.Errorf("graphonly = %+v, want 2 entities, 1 relationship, nothing published", c)
		}
		if c.Name == "published" && c.State != StateIndexing {
			t.Errorf("published = %+v, want indexing", c)
		}
	}
	if !slices.Equal(names, []string{"graphonly", "published"}) {
		t.Errorf("corpora %v, want graphonly and published", names)
	}
}

// TestDeletedNotCounted: a deleted document is not counted (its record stays, marked
// deleted), and a corpus whose every document and chunk is gone (dropped) is not
// listed, although its events stay in the document stream.
func TestDeletedNotCounted(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	f.publish(t, "demo", "a", "A", "Alpha text.")
	f.publish(t, "demo", "b", "B", "Beta text.")
	f.publish(t, "gone", "x", "X", "Gone text.")
	f.runChunker(t, "demo")
	f.runChunker(t, "gone")
	kv, err := f.b.KV(ctx, schema.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	// What the chunker leaves of a deleted document: a record marked deleted, no chunk.
	tomb, _ := json.Marshal(pipeline.DocumentRecord{ID: "b", Deleted: true, State: pipeline.StateDeleted})
	if err := kv.Put(ctx, schema.DocumentKey("demo", "b"), tomb); err != nil {
		t.Fatal(err)
	}
	// And of a dropped corpus: no record, no chunk.
	if err := kv.Delete(ctx, schema.DocumentKey("gone", "x")); err != nil {
		t.Fatal(err)
	}
	for corpus, ids := range map[string][]string{"demo": {"b"}, "gone": {"x"}} {
		coll := schema.Collection(corpus, schema.Chunks)
		list, _, err := f.vectors.List(ctx, coll, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range list {
			if slices.Contains(ids, documentOfChunk(id)) {
				if err := f.vectors.Delete(ctx, coll, []string{id}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	page, err := f.cat.Documents(ctx, "demo", "", 10)
	if err != nil || len(page.Documents) != 1 {
		t.Fatalf("documents of demo: %+v, %v: want a alone", page, err)
	}
	cs, err := f.cat.Corpora(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].Name != "demo" || cs[0].Documents != 1 {
		t.Errorf("corpora %+v: want demo alone, with the 1 document its listing lists", cs)
	}
	if names, err := f.cat.Names(ctx); err != nil || !slices.Equal(names, []string{"demo"}) {
		t.Errorf("names %v, %v: want demo alone", names, err)
	}
	if _, err := f.cat.Corpus(ctx, "gone"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the dropped corpus: %v, want ErrNotFound", err)
	}
	f.publish(t, "pending", "p", "P", "Pending text.")
	for corpus, want := range map[string]bool{"demo": true, "pending": true, "gone": false, "never": false} {
		if got, err := f.cat.Exists(ctx, corpus); err != nil || got != want {
			t.Errorf("Exists(%s) = %v, %v; want %v", corpus, got, err, want)
		}
	}
	if _, err := f.cat.Exists(ctx, "Bad!"); !errors.Is(err, ErrInvalid) {
		t.Errorf("Exists of a bad name: %v, want ErrInvalid", err)
	}
}

func TestDocumentOfChunk(t *testing.T) {
	for chunk, want := range map[string]string{
		"notes/a.md:0:abcdefabcdef": "notes/a.md",
		"a:b:c:12:abcdefabcdef":     "a:b:c",
		"odd":                       "odd",
	} {
		if got := documentOfChunk(chunk); got != want {
			t.Errorf("documentOfChunk(%q) = %q, want %q", chunk, got, want)
		}
	}
}

func TestStateOf(t *testing.T) {
	drained := []pipeline.StageStatus{{Stage: pipeline.StageChunker, Total: 3, Done: 3}}
	busy := []pipeline.StageStatus{{Stage: pipeline.StageChunker, Total: 3, Done: 1, Pending: 2}}
	for _, tc := range []struct {
		name string
		st   pipeline.Status
		dead uint64
		want string
	}{
		{"nothing published", pipeline.Status{State: pipeline.StateEmpty, Stages: []pipeline.StageStatus{{}}}, 0, StateEmpty},
		{"messages wait", pipeline.Status{State: pipeline.StateIndexing, Stages: busy}, 0, StateIndexing},
		{"communities not current", pipeline.Status{State: pipeline.StateIndexing, Stages: drained, Graph: pipeline.GraphState{Dirty: true}}, 0, StateIndexing},
		{"model down", pipeline.Status{State: pipeline.StatePaused, Stages: busy}, 0, StatePaused},
		{"complete", pipeline.Status{State: pipeline.StateComplete, Stages: drained, Complete: true}, 0, StateComplete},
		{"drained with dead letters", pipeline.Status{State: pipeline.StateComplete, Stages: drained, Complete: true}, 1, StateFailed},
		{"reports missing", pipeline.Status{State: pipeline.StateReportsMissing, Stages: drained}, 0, StateFailed},
	} {
		if got := stateOf(tc.st, tc.dead); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestDetectionOfFailingRuns: detection says since when, how often and why its runs
// fail, and when the next try is; nothing while they succeed.
func TestDetectionOfFailingRuns(t *testing.T) {
	since := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	next := since.Add(time.Minute)
	d := detectionOf(pipeline.GraphState{Dirty: true, FailingSince: since, Failures: 3, LastError: "store unavailable", NextRetry: next})
	if !strings.HasPrefix(d.Failing, "community detection failing since 2026-03-01T12:00:00Z (3 runs): store unavailable") || d.NextRetry == nil || !d.NextRetry.Equal(next) {
		t.Errorf("failing detection %+v", d)
	}
	if d := detectionOf(pipeline.GraphState{Detections: 2}); d.Failing != "" || d.NextRetry != nil {
		t.Errorf("succeeding detection %+v, want no failure", d)
	}
}

// TestCreated: a corpus began with its first document event, or with the first after
// its last drop; a corpus with none has the zero time.
func TestCreated(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	if got, err := f.cat.Created(ctx, "demo"); err != nil || !got.IsZero() {
		t.Errorf("before anything was published: %v, %v; want the zero time", got, err)
	}
	before := time.Now()
	f.publish(t, "demo", "a", "A", "Alpha text.")
	f.publish(t, "demo", "b", "B", "Beta text.")
	first, err := f.cat.Created(ctx, "demo")
	if err != nil || first.Before(before.Add(-time.Second)) || first.After(time.Now()) {
		t.Fatalf("created %v, %v: want the time a was published (after %v)", first, err, before)
	}
	stream := pipeline.StreamName(events.KindDocuments)
	m, err := f.b.FirstMessage(ctx, stream, events.Subject(events.KindDocuments, "demo"), 0)
	if err != nil || !m.Time.Equal(first) {
		t.Fatalf("first message %+v, %v: want it stored at %v", m, err, first)
	}
	// A drop after b: the corpus begins again with c.
	kv, err := f.b.KV(ctx, schema.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := json.Marshal(pipeline.CorpusRecord{DroppedAt: m.Seq + 1})
	if err := kv.Put(ctx, schema.CorpusKey("demo"), rec); err != nil {
		t.Fatal(err)
	}
	f.publish(t, "demo", "c", "C", "Gamma text.")
	again, err := f.cat.Created(ctx, "demo")
	if err != nil || !again.After(first) {
		t.Errorf("after a drop: %v, %v; want after %v", again, err, first)
	}
	if _, err := f.cat.Created(ctx, "Bad!"); !errors.Is(err, ErrInvalid) {
		t.Errorf("a bad name: %v, want ErrInvalid", err)
	}
}
