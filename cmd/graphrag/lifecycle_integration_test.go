//go:build integration

package main

import (
	"context"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// The document lifecycle on Neo4j and Milvus (ADR 0022, issues #13 and #17).

// realFlags are the platform flags of the integration run's Neo4j and Milvus.
func realFlags(t *testing.T) []string {
	t.Helper()
	env := needEnv(t, "GRAPHRAG_TEST_NEO4J_URI", "GRAPHRAG_TEST_MILVUS_ADDR")
	return append(neo4jFlags(env["GRAPHRAG_TEST_NEO4J_URI"]), "-vector-store", "milvus", "-milvus-address", env["GRAPHRAG_TEST_MILVUS_ADDR"])
}

// realStores opens the Neo4j graph store and the Milvus vector store.
func realStores(t *testing.T) (graphstore.Store, vectorstore.Store, []string) {
	t.Helper()
	flags := realFlags(t)
	p := testPlatform(t, t.TempDir(), flags...)
	return p.Graph, p.Vectors, flags
}

// TestLifecycleOnNeo4jAndMilvus: a burst of versions interleaved with deletions of 10
// ids goes to three extractor processes that share Milvus, one of them killed with
// SIGKILL mid-burst; the grapher and summarizer write to Neo4j and Milvus. Every store
// (chunk records, vectors and postings in Milvus, the graph in Neo4j, the entity
// records) ends equal to a pipeline on the same servers given only the winning events.
func TestLifecycleOnNeo4jAndMilvus(t *testing.T) {
	g, v, flags := realStores(t)
	milvus := flags[len(flags)-4:]
	bin := buildExtractor(t)
	corpus := uniqueCorpus("life")
	h := newLifecycleHarnessOn(t, 0, g, v)
	procs := make([]*scalingReplica, 3)
	for i := range procs {
		procs[i] = startExtractorProcess(t, bin, h.srv.ClientURL(), i, h.cfg.ChunkTokens, h.cfg.ChunkOverlap, milvus...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	for _, p := range procs {
		p.waitReady(ctx, t)
	}
	var evs []lifecycleEvent
	for n := range 300 {
		doc := n % 10
		id := "doc-" + strconv.Itoa(doc)
		if n%7 == 3 || (n >= 290 && doc%3 == 0) {
			evs = append(evs, lifecycleEvent{ID: id})
			continue
		}
		evs = append(evs, lifecycleEvent{ID: id, Title: "Survey " + strconv.Itoa(doc), Text: versionText(doc, n)})
	}
	h.publishBurst(corpus, evs)
	for {
		st, err := pipeline.GetStatus(ctx, h.b, corpus)
		if err != nil {
			t.Fatal(err)
		}
		ch := scalingStage(t, st, pipeline.StageChunker)
		if ch.Done >= 20 && ch.Pending > 0 {
			t.Logf("killing replica 0 at %s", crashStatusLine(st))
			break
		}
		if ch.Pending == 0 && ch.InFlight == 0 {
			t.Fatalf("the burst was handled before the kill: %s", crashStatusLine(st))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := procs[0].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = procs[0].cmd.Wait()
	h.waitDone(corpus, 15*time.Minute)
	h.checkRecords(corpus, evs)
	got := h.dump(corpus)

	// The reference: the winning publications alone, in a fresh pipeline on the same
	// servers under another corpus name.
	refCorpus := uniqueCorpus("liferef")
	ref := newLifecycleHarnessOn(t, 1, g, v)
	var pubs []lifecycleEvent
	for _, e := range finalEvents(evs) {
		if e.Text != "" {
			pubs = append(pubs, e)
		}
	}
	ref.publishBurst(refCorpus, pubs)
	ref.waitDone(refCorpus, 15*time.Minute)
	if d := diffDumps(got, ref.dump(refCorpus)); d != "" {
		t.Fatalf("the corpus on Neo4j and Milvus differs from the winning events alone:\n%s", d)
	}
	t.Logf("%d chunks, %d entities, %d relationships, %d communities", len(got.Chunks), len(got.Entities), len(got.Relationships), len(got.Communities))
	if len(got.Chunks) == 0 {
		t.Fatal("nothing indexed: the test compares nothing")
	}
}

// TestDeleteAndRestoreOnNeo4jAndMilvus runs the deletion cascade of the sample corpus
// (and of the HotpotQA development set when GRAPHRAG_TEST_HOTPOTQA is set) with the four
// services on Neo4j and Milvus: nothing of the deleted document is left in either,
// shared entities keep the other documents' mentions, and publishing it again restores
// both exactly.
func TestDeleteAndRestoreOnNeo4jAndMilvus(t *testing.T) {
	p := testPlatform(t, t.TempDir(), realFlags(t)...)
	st := startStack(t, p, coldConfig()) // deleteAndRestore compares communities
	const victim = "06_quillane_reyburn_collaboration.md"
	docs := sampleDocs(t)
	var qs []datasetQuestion
	for _, d := range docs {
		qs = append(qs, datasetQuestion{Question: d.Title, Gold: []string{d.ID}})
	}
	deleteAndRestore(t, p, st, uniqueCorpus("del"), docs, qs, func(corpusDump) string { return victim })
	if dir := os.Getenv("GRAPHRAG_TEST_HOTPOTQA"); dir != "" {
		hdocs, hqs := readDataset(t, dir)
		deleteAndRestore(t, p, st, uniqueCorpus("hotdel"), hdocs, hqs, func(d corpusDump) string { return sharingVictim(d, hqs) })
	}
}
