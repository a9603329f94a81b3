package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/pipeline"
)

// TestPublishNothing: a publish that publishes nothing (no file it can read) fails and
// says so, instead of exiting 0; one whose documents are all unchanged succeeds.
func TestPublishNothing(t *testing.T) {
	url := bustest.StartServer(t).ClientURL()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "report.docx"), []byte("PK..."), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := dispatch(t.Context(), []string{"publish", "-nats-url", url, "-corpus", "notes", dir}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "nothing published") {
		t.Errorf("publishing a directory of unreadable files: %v, want an error\n%s", err, out.String())
	}
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("# A\n\nSome text."), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 2 { // published, then unchanged
		if err := dispatch(t.Context(), []string{"publish", "-nats-url", url, "-corpus", "notes", dir}, &out, &out); err != nil {
			t.Errorf("publishing a readable file: %v\n%s", err, out.String())
		}
	}
}

// TestPublishFileNamesAsTheyAre: a file's path is its document id with its spaces,
// accents and script; two names that differ by one accent are two documents; a name
// written decomposed (macOS) and the same name composed are one id, refused as a
// collision that names both files; and `graphrag delete` with the path deletes the
// document publish made of it.
func TestPublishFileNamesAsTheyAre(t *testing.T) {
	srv := bustest.StartServer(t)
	url := srv.ClientURL()
	dir := t.TempDir()
	files := []string{"My Notes/Réunion 2024 (final).md", "Réunion.md", "Rèunion.md", "会议/记录 第1次.md", "Re\u0301union.md"}
	for _, f := range files {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("# "+f+"\n\nOrla Venn keeps the archive."), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	err := dispatch(t.Context(), []string{"publish", "-nats-url", url, "-corpus", "notes", dir}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "1 files were not published") {
		t.Errorf("publish: %v, want the collision of the decomposed name\n%s", err, out.String())
	}
	collision := fmt.Sprintf("skipped %s: document id %q is already %s's", filepath.Join(dir, "Réunion.md"), "Réunion.md", filepath.Join(dir, "Re\u0301union.md"))
	if !strings.Contains(out.String(), collision) {
		t.Errorf("output does not name both files of the collision (%q):\n%s", collision, out.String())
	}
	b, err := bus.New(bustest.Connect(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range bustest.Messages(t, b, pipeline.StreamName(events.KindDocuments), events.Subject(events.KindDocuments, "notes")) {
		e, err := events.DecodeDocumentEvent(m)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.(*events.Document).ID)
	}
	want := []string{"My Notes/Réunion 2024 (final).md", "Réunion.md", "Rèunion.md", "会议/记录 第1次.md"}
	if !slices.Equal(ids, want) {
		t.Errorf("published ids %q, want %q", ids, want)
	}

	out.Reset()
	if err := dispatch(t.Context(), []string{"delete", "-nats-url", url, "-corpus", "notes", "My Notes/Réunion 2024 (final).md", "./Re\u0301union.md"}, &out, &out); err != nil {
		t.Fatalf("delete by path: %v\n%s", err, out.String())
	}
	msgs := bustest.Messages(t, b, pipeline.StreamName(events.KindDocuments), events.Subject(events.KindDocuments, "notes"))
	var deleted []string
	for _, m := range msgs[len(msgs)-2:] {
		e, err := events.DecodeDocumentEvent(m)
		if err != nil {
			t.Fatal(err)
		}
		deleted = append(deleted, e.(*events.DocumentDeleted).ID)
	}
	if !slices.Equal(deleted, []string{"My Notes/Réunion 2024 (final).md", "Réunion.md"}) {
		t.Errorf("deleted ids %q", deleted)
	}
	if !strings.Contains(out.String(), "./Re\u0301union.md (id \"Réunion.md\"): ") {
		t.Errorf("delete does not say which id a path named:\n%s", out.String())
	}
}
