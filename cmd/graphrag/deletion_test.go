package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/graphrag/graphrag/cmd/graphrag/internal/stack"
	"github.com/graphrag/graphrag/pkg/docread"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/services/query/ask"
)

// Deletion as an event (issue #13): a deleted document leaves nothing in any store,
// the documents it shared entities with keep their mentions exactly, retrieval for
// questions about other documents does not change, and publishing it again restores
// the corpus exactly.

// datasetDoc and datasetQuestion are the lines of an eval dataset (docs/evaluation.md).
type datasetDoc struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

type datasetQuestion struct {
	Question string   `json:"question"`
	Gold     []string `json:"gold"`
}

// TestDeleteAndRestoreSample deletes one document of the sample corpus (one whose
// entities other documents mention too) and checks the cascade against a pipeline that
// never saw it.
func TestDeleteAndRestoreSample(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end, twice")
	}
	docs := sampleDocs(t)
	const victim = "06_quillane_reyburn_collaboration.md"
	var qs []datasetQuestion
	for _, d := range docs {
		// A question per document, answered by its title: retrieval ranks its own
		// document first, and the others' ranks must not move when the victim goes.
		qs = append(qs, datasetQuestion{Question: d.Title, Gold: []string{d.ID}})
	}
	// Communities are compared too, with a pipeline that never saw the victim and
	// before and after the restore: history independence is the property under test,
	// which only cold detection promises (-detect-warm=false; ADR 0042). The default's
	// guarantees are TestDeleteAndRestoreWarm's.
	cfg := coldConfig()
	p := testPlatform(t, t.TempDir())
	st := startStack(t, p, cfg)
	after := deleteAndRestore(t, p, st, "demo", docs, qs, func(corpusDump) string { return victim })

	// Against a pipeline given every document but the victim.
	q := testPlatform(t, t.TempDir())
	startStack(t, q, cfg)
	var rest []datasetDoc
	for _, d := range docs {
		if d.ID != victim {
			rest = append(rest, d)
		}
	}
	publishDataset(t, q, "demo", rest)
	if d := diffDumps(after, dumpCorpus(context.Background(), t, q.Graph, q.Vectors, "demo")); d != "" {
		t.Fatalf("after the deletion the corpus differs from one that never had the document:\n%s", d)
	}
}

// coldConfig is fastConfig with cold community detection (-detect-warm=false), whose
// hierarchy depends on the graph alone: for tests that compare communities with those
// of a pipeline with another history.
func coldConfig() stack.Config {
	cfg := fastConfig()
	cfg.Grapher.WarmStart = false
	return cfg
}

// sharingVictim picks, among the passages that are no question's gold passage, the one
// that shares the most entities with other passages: the hardest to delete cleanly.
func sharingVictim(d corpusDump, qs []datasetQuestion) string {
	gold := map[string]bool{}
	for _, q := range qs {
		for _, g := range q.Gold {
			gold[g] = true
		}
	}
	docOf := map[string]string{}
	for _, c := range d.Chunks {
		docOf[c.ID] = c.Attrs[schema.ChunkDocumentID]
	}
	shared := map[string]int{}
	for _, e := range d.Entities {
		docs := map[string]bool{}
		for _, c := range e.Chunks {
			docs[docOf[c]] = true
		}
		if len(docs) < 2 {
			continue
		}
		for doc := range docs {
			shared[doc]++
		}
	}
	best := ""
	for doc, n := range shared {
		if !gold[doc] && (best == "" || n > shared[best] || (n == shared[best] && doc < best)) {
			best = doc
		}
	}
	return best
}

// deleteAndRestore indexes docs, deletes the document pick chooses, checks that nothing of it is left and
// that the rest is untouched, deletes an unknown id, publishes victim again and checks
// that the corpus is restored exactly. It returns the dump after the deletion.
func deleteAndRestore(t *testing.T, p *platform.Platform, st *stack.Stack, corpus string, docs []datasetDoc, qs []datasetQuestion, pick func(corpusDump) string) corpusDump {
	t.Helper()
	return deleteAndRestoreWith(t, p, st, corpus, docs, qs, pick, diffDumps)
}

// deleteAndRestoreWith is deleteAndRestore comparing the corpus with diff: diffDumps
// for a cold pipeline, whose communities depend on the graph alone.
func deleteAndRestoreWith(t *testing.T, p *platform.Platform, st *stack.Stack, corpus string, docs []datasetDoc, qs []datasetQuestion,
	pick func(corpusDump) string, diff func(a, b corpusDump) string) corpusDump {
	t.Helper()
	ctx := context.Background()
	publishDataset(t, p, corpus, docs)
	before := dumpCorpus(ctx, t, p.Graph, p.Vectors, corpus)
	victim := pick(before)
	var questions []datasetQuestion
	for _, q := range qs {
		if !slices.Contains(q.Gold, victim) && len(questions) < 20 {
			questions = append(questions, q)
		}
	}
	rankedBefore := rankAll(t, st, corpus, questions)

	var victimText string
	for _, d := range docs {
		if d.ID == victim {
			victimText = d.Title + " " + d.Text
		}
	}
	gone := map[string]bool{}
	for _, c := range before.Chunks {
		if c.Attrs[schema.ChunkDocumentID] == victim {
			gone[c.ID] = true
		}
	}
	if len(gone) == 0 {
		t.Fatalf("document %s has no chunks to delete", victim)
	}
	del, err := pipeline.PublishDeletion(ctx, p.Bus, corpus, victim, "test")
	if err != nil || del.Known != pipeline.KnownIndexed {
		t.Fatalf("PublishDeletion = %+v, %v", del, err)
	}
	waitIndexed(t, p, corpus)
	after := dumpCorpus(ctx, t, p.Graph, p.Vectors, corpus)
	checkDeleted(t, before, after, gone)
	checkNoPostings(t, p, corpus, victim, victimText)
	shared := checkSharedEntities(t, before, after, gone)
	t.Logf("deleted %s: %d chunks; %d of the entities it mentioned are shared with other documents and kept; %d entities, %d relationships, %d communities left",
		victim, len(gone), shared, len(after.Entities), len(after.Relationships), len(after.Communities))
	// The gold passages of questions about other documents keep their ranks (the
	// victim's own place, if it had one, is taken by the next document, and lower
	// ranks may reorder as corpus statistics and the graph change).
	rankedAfter := rankAll(t, st, corpus, questions)
	for i, q := range questions {
		without := slices.DeleteFunc(slices.Clone(rankedBefore[i]), func(d string) bool { return d == victim })
		if got, want := goldRanks(rankedAfter[i], q.Gold), goldRanks(without, q.Gold); !slices.Equal(got, want) {
			t.Errorf("question %q: gold passages %v at ranks %v, before the deletion %v (%v, before %v)", q.Question, q.Gold, got, want,
				rankedAfter[i], rankedBefore[i])
		}
	}

	unknown, err := pipeline.PublishDeletion(ctx, p.Bus, corpus, "no-such-document", "")
	if err != nil || unknown.Known != pipeline.KnownUnknown {
		t.Fatalf("deleting an unknown id: %+v, %v", unknown, err)
	}
	again, err := pipeline.PublishDeletion(ctx, p.Bus, corpus, victim, "")
	if err != nil || again.Known != pipeline.KnownDeleted {
		t.Fatalf("deleting again: %+v, %v", again, err)
	}
	waitIndexed(t, p, corpus)
	if d := diff(dumpCorpus(ctx, t, p.Graph, p.Vectors, corpus), after); d != "" {
		t.Fatalf("deleting an unknown id and deleting twice changed the corpus:\n%s", d)
	}

	for _, d := range docs {
		if d.ID == victim {
			publishDataset(t, p, corpus, []datasetDoc{d})
		}
	}
	if d := diff(dumpCorpus(ctx, t, p.Graph, p.Vectors, corpus), before); d != "" {
		t.Fatalf("publishing the document again did not restore the corpus:\n%s", d)
	}
	if ranked := rankAll(t, st, corpus, questions); !slices.EqualFunc(ranked, rankedBefore, slices.Equal) {
		t.Errorf("retrieval after the restore differs from before the deletion")
	}
	return after
}

// checkDeleted: no chunk of the deleted document is left, and no entity or
// relationship cites one.
func checkDeleted(t *testing.T, before, after corpusDump, gone map[string]bool) {
	t.Helper()
	if len(after.Chunks) != len(before.Chunks)-len(gone) {
		t.Errorf("%d chunks after deleting %d of %d", len(after.Chunks), len(gone), len(before.Chunks))
	}
	for _, c := range after.Chunks {
		if gone[c.ID] {
			t.Errorf("chunk %s of the deleted document is left", c.ID)
		}
	}
	for _, e := range after.Entities {
		for _, c := range e.Chunks {
			if gone[c] {
				t.Errorf("entity %s still cites chunk %s of the deleted document", e.Key, c)
			}
		}
	}
	for _, r := range after.Relationships {
		for _, c := range r.Chunks {
			if gone[c] {
				t.Errorf("relationship %s>%s still cites chunk %s of the deleted document", r.Source, r.Target, c)
			}
		}
	}
	keys := make([]string, len(after.Entities))
	for i, e := range after.Entities {
		keys[i] = e.Key
	}
	if !slices.Equal(keys, after.EntityRecords) {
		t.Errorf("entity records (%d) differ from the graph's entities (%d)", len(after.EntityRecords), len(keys))
	}
}

// checkSharedEntities: an entity or relationship the deleted document mentioned is gone
// if it had no other mention, and otherwise keeps exactly the other documents' mentions;
// nothing else changes. It returns how many shared entities were kept.
func checkSharedEntities(t *testing.T, before, after corpusDump, gone map[string]bool) int {
	t.Helper()
	rest := func(chunks []string) []string {
		return slices.DeleteFunc(slices.Clone(chunks), func(c string) bool { return gone[c] })
	}
	afterE := map[string]dumpEntity{}
	for _, e := range after.Entities {
		afterE[e.Key] = e
	}
	shared := 0
	for _, e := range before.Entities {
		left := rest(e.Chunks)
		got, ok := afterE[e.Key]
		switch {
		case len(left) == 0 && ok:
			t.Errorf("entity %s was only mentioned by the deleted document and is left", e.Key)
		case len(left) > 0 && !ok:
			t.Errorf("entity %s lost the mentions of other documents %v", e.Key, left)
		case ok && (!slices.Equal(got.Chunks, left) || got.MentionCount != len(left)):
			t.Errorf("entity %s: mentions %v (%d), want %v", e.Key, got.Chunks, got.MentionCount, left)
		case ok && len(left) < len(e.Chunks):
			shared++
		}
	}
	if len(after.Entities) > len(before.Entities) {
		t.Errorf("%d entities after the deletion, %d before", len(after.Entities), len(before.Entities))
	}
	afterR := map[string]dumpRelationship{}
	for _, r := range after.Relationships {
		afterR[r.Source+">"+r.Target] = r
	}
	for _, r := range before.Relationships {
		left := rest(r.Chunks)
		got, ok := afterR[r.Source+">"+r.Target]
		switch {
		case len(left) == 0 && ok:
			t.Errorf("relationship %s>%s was only mentioned by the deleted document and is left", r.Source, r.Target)
		case len(left) > 0 && (!ok || !slices.Equal(got.Chunks, left)):
			t.Errorf("relationship %s>%s: mentions %v, want %v", r.Source, r.Target, got.Chunks, left)
		case ok && len(left) == len(r.Chunks) && got.Weight != r.Weight:
			t.Errorf("relationship %s>%s the deleted document never mentioned: weight %s, before %s", r.Source, r.Target, got.Weight, r.Weight)
		}
	}
	return shared
}

// checkNoPostings: neither a lexical nor a dense search finds a chunk of the deleted
// document, and none of its chunk ids reads back.
func checkNoPostings(t *testing.T, p *platform.Platform, corpus, victim, text string) {
	t.Helper()
	ctx := context.Background()
	coll := schema.Collection(corpus, schema.Chunks)
	query := strings.Join(strings.Fields(text)[:min(30, len(strings.Fields(text)))], " ")
	hits, err := p.Vectors.SearchText(ctx, coll, query, 50, vectorstoreFilter(victim))
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) > 0 {
		t.Errorf("a lexical search still finds %d chunks of the deleted document (%s)", len(hits), hits[0].ID)
	}
	vecs, err := p.Embedder.Embed(ctx, []string{query})
	if err != nil {
		t.Fatal(err)
	}
	dense, err := p.Vectors.Search(ctx, coll, vecs[0], 50, vectorstoreFilter(victim))
	if err != nil {
		t.Fatal(err)
	}
	if len(dense) > 0 {
		t.Errorf("a dense search still finds %d chunks of the deleted document", len(dense))
	}
}

// goldRanks returns the 1-based rank of each gold document in ranked (0: not there).
func goldRanks(ranked, gold []string) []int {
	out := make([]int, len(gold))
	for i, g := range gold {
		out[i] = slices.Index(ranked, g) + 1
	}
	return out
}

// rankAll retrieves each question's context and returns its documents in rank order.
func rankAll(t *testing.T, st *stack.Stack, corpus string, qs []datasetQuestion) [][]string {
	t.Helper()
	out := make([][]string, len(qs))
	for i, q := range qs {
		c, _, err := st.Asker.Retrieve(context.Background(), ask.Request{Corpus: corpus, Query: q.Question, TopK: 10})
		if err != nil {
			t.Fatalf("retrieving %q: %v", q.Question, err)
		}
		seen := map[string]bool{}
		for _, ch := range c.Chunks {
			if !seen[ch.DocumentID] {
				seen[ch.DocumentID] = true
				out[i] = append(out[i], ch.DocumentID)
			}
		}
	}
	return out
}

// publishDataset publishes documents and waits until the corpus is indexed.
func publishDataset(t *testing.T, p *platform.Platform, corpus string, docs []datasetDoc) {
	t.Helper()
	for _, d := range docs {
		if _, err := pipeline.PublishDocument(context.Background(), p.Bus, events.Document{Corpus: corpus, ID: d.ID, Title: d.Title, Text: d.Text}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if st, err := pipeline.WaitComplete(ctx, p.Bus, corpus, 200*time.Millisecond, nil); err != nil {
		t.Fatalf("indexing did not complete: %v (%s)", err, crashStatusLine(st))
	}
}

// sampleDocs reads the sample corpus the way `graphrag publish` does.
func sampleDocs(t *testing.T) []datasetDoc {
	t.Helper()
	files, _ := collect([]string{"../../examples/corpus"})
	var out []datasetDoc
	for _, f := range files {
		doc, err := docread.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, datasetDoc{ID: docread.ID(f.rel), Title: doc.Title, Text: doc.Text})
	}
	return out
}

func readDataset(t *testing.T, dir string) ([]datasetDoc, []datasetQuestion) {
	t.Helper()
	return readJSONLines[datasetDoc](t, filepath.Join(dir, "corpus.jsonl")), readJSONLines[datasetQuestion](t, filepath.Join(dir, "questions.jsonl"))
}

func readJSONLines[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// vectorstoreFilter restricts a search to the chunks of one document.
func vectorstoreFilter(docID string) vectorstore.Filter {
	return vectorstore.Filter{Attrs: map[string]string{schema.ChunkDocumentID: docID}}
}
