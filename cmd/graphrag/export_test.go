package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/export"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/platform/filelock"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
)

// TestExportCommandFromStores: graphrag export opens the embedded stores of a data
// directory and writes the files; bad flags are refused before anything is opened.
func TestExportCommandFromStores(t *testing.T) {
	dir := exportStores(t)
	out := filepath.Join(t.TempDir(), "out")
	var stdout bytes.Buffer
	if err := dispatch(t.Context(), []string{"export", "-data-dir", dir, "-corpus", "notes", "-format", "jsonl", "-out", out, "-log-level", "error"}, &stdout, io.Discard); err != nil {
		t.Fatalf("graphrag export: %v", err)
	}
	if !strings.Contains(stdout.String(), "2 entities, 1 relationships") {
		t.Errorf("output %q", stdout.String())
	}
	b, err := os.ReadFile(filepath.Join(out, export.ChunksJSONL))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		DocumentID string   `json:"document_id"`
		Entities   []string `json:"entities"`
	}
	if err := json.Unmarshal(b, &c); err != nil || c.DocumentID != "a" || len(c.Entities) != 2 {
		t.Errorf("chunks.jsonl %s: %v", b, err)
	}
	for _, args := range [][]string{
		{"export", "-corpus", "Bad!", "-out", out},
		{"export", "-corpus", "notes", "-format", "csv", "-out", out},
		{"export", "-corpus", "notes"},
	} {
		if err := dispatch(t.Context(), args, io.Discard, io.Discard); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// TestExportCommandNothingToExport: an export from a data dir that does not exist, of a
// corpus the stores do not hold, or from stores a running platform holds fails and says
// why, instead of writing an empty export (and a fresh store) and exiting 0.
func TestExportCommandNothingToExport(t *testing.T) {
	dir := exportStores(t)
	missing := filepath.Join(t.TempDir(), "data")
	runExport := func(dataDir, corpus string) error {
		return dispatch(t.Context(), []string{"export", "-data-dir", dataDir, "-corpus", corpus, "-out", filepath.Join(t.TempDir(), "out"), "-log-level", "error"}, io.Discard, io.Discard)
	}
	if err := runExport(missing, "notes"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("export from a missing data dir: %v", err)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("export created the missing data dir")
	}
	if err := runExport(t.TempDir(), "notes"); err == nil || !strings.Contains(err.Error(), "holds no store") {
		t.Errorf("export from an empty data dir: %v", err)
	}
	if err := runExport(dir, "demo"); err == nil || !strings.Contains(err.Error(), "corpus demo does not exist") || !strings.Contains(err.Error(), "-api") {
		t.Errorf("export of a corpus the stores do not hold: %v", err)
	}

	// A running platform holds the lock (flock(1) stands for it): the message points at -api.
	flock, err := exec.LookPath("flock")
	if err != nil {
		t.Skip("flock(1) is not installed")
	}
	cmd := exec.CommandContext(t.Context(), flock, "-x", filepath.Join(dir, "graph.db"), "sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for range 1000 { // until flock holds the lock (a safety bound, not a speed goal)
		if _, held := filelock.HolderOf(filepath.Join(dir, "graph.db")); held {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := runExport(dir, "notes"); err == nil || !strings.Contains(err.Error(), "locked by another process") || !strings.Contains(err.Error(), "-api") {
		t.Errorf("export from stores in use: %v", err)
	}
}

// exportStores writes a data dir whose embedded stores hold a corpus "notes" of one
// chunk with two entities and a relationship.
func exportStores(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	g, err := boltgraph.Open(filepath.Join(dir, "graph.db"))
	if err != nil {
		t.Fatal(err)
	}
	err = g.Merge(t.Context(), "notes", []graphstore.ChunkExtraction{{ChunkID: "a:0:aaaaaaaaaaaa", DocumentID: "a",
		Entities:  []graphstore.EntityMention{{Key: "tom arden", Name: "Tom Arden", Type: "PERSON"}, {Key: "gullhead lighthouse", Name: "Gullhead Lighthouse", Type: "PLACE"}},
		Relations: []graphstore.RelationMention{{SourceKey: "tom arden", TargetKey: "gullhead lighthouse", Type: "KEEPS"}}}})
	if err != nil {
		t.Fatal(err)
	}
	_ = g.Close()
	v, err := embedded.Open(filepath.Join(dir, "vectors"))
	if err != nil {
		t.Fatal(err)
	}
	coll := schema.Collection("notes", schema.Chunks)
	vec, _ := hashembed.New(384).Embed(t.Context(), []string{"Tom Arden keeps Gullhead Lighthouse."})
	if err := v.EnsureCollection(t.Context(), vectorstore.CollectionSpec{Name: coll, Dim: 384, Lexical: true}); err != nil {
		t.Fatal(err)
	}
	if err := v.Upsert(t.Context(), coll, []vectorstore.Record{{ID: "a:0:aaaaaaaaaaaa", Vector: vec[0], Text: "Tom Arden keeps Gullhead Lighthouse.",
		Attrs: map[string]string{schema.ChunkDocumentID: "a", schema.ChunkTitle: "A"}}}); err != nil {
		t.Fatal(err)
	}
	_ = v.Close()
	return dir
}
