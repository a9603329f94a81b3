package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/pipeline"
)

// TestDeleteCommand: `graphrag delete` publishes one deletion event per id on the
// corpus's document subject and says what each will do; -all publishes a corpus drop;
// ids and -all together are refused.
func TestDeleteCommand(t *testing.T) {
	srv := bustest.StartServer(t)
	url := srv.ClientURL()
	run := func(args ...string) (string, error) {
		var out, errw bytes.Buffer
		err := dispatch(context.Background(), append([]string{"delete", "-nats-url", url}, args...), &out, &errw)
		return out.String() + errw.String(), err
	}
	out, err := run("-corpus", "notes", "a.md", "b.md")
	if err != nil {
		t.Fatalf("delete: %v\n%s", err, out)
	}
	if strings.Count(out, "not indexed: nothing to delete") != 2 || !strings.Contains(out, "a.md:") || !strings.Contains(out, "b.md:") {
		t.Errorf("output:\n%s", out)
	}
	if out, err := run("-corpus", "notes", "-all"); err != nil || !strings.Contains(out, "drop ordered") {
		t.Errorf("delete -all: %v\n%s", err, out)
	}
	if out, err := run("-corpus", "notes", "-all", "a.md"); err == nil {
		t.Errorf("ids and -all together were accepted:\n%s", out)
	}
	if out, err := run("-corpus", "notes"); err == nil {
		t.Errorf("no ids and no -all was accepted:\n%s", out)
	}
	if out, err := run("-corpus", "Not A Corpus", "a.md"); err == nil {
		t.Errorf("a bad corpus name was accepted:\n%s", out)
	}
	b, err := bus.New(bustest.Connect(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	msgs := bustest.Messages(t, b, pipeline.StreamName(events.KindDocuments), events.Subject(events.KindDocuments, "notes"))
	if len(msgs) != 3 {
		t.Fatalf("%d events on the subject, want 3", len(msgs))
	}
	var kinds []string
	for _, m := range msgs {
		e, err := events.DecodeDocumentEvent(m)
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, e.SchemaName())
	}
	if kinds[0] != events.SchemaDocumentDeleted || kinds[2] != events.SchemaCorpusDropped {
		t.Errorf("events %v", kinds)
	}
}
