package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/export"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
)

// TestExportCommandFromStores: graphrag export opens the embedded stores of a data
// directory and writes the files; bad flags are refused before anything is opened.
func TestExportCommandFromStores(t *testing.T) {
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
