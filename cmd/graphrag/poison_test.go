package main

import (
	"context"
	"testing"

	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/schema"
)

// acronymDocument is the opening of a public guideline on acute lymphoblastic
// leukemia (issue 33): its entity "ALL" is a stopword in lower case, and once stopped
// community detection of the corpus for good.
const acronymDocument = `About ALL What is ALL? What are lymphocytes? What is blood? What's in this book? What can
you do to get the best care? Acute lymphoblastic leukemia (ALL) is the most common cancer
diagnosed in children. It is a fastgrowing cancer that starts in lymphocytes, a type of white
blood cell.
`

// TestAcronymDocumentCompletes: the corpus of the acronym document completes with
// a detection run (and a report for every community), nothing quarantined, and the entity ALL has its record.
func TestAcronymDocumentCompletes(t *testing.T) {
	p := testPlatform(t, t.TempDir())
	startStack(t, p, fastConfig())
	checkAcronymDocument(t, p, "z")
}

func checkAcronymDocument(t *testing.T, p *platform.Platform, corpus string) {
	t.Helper()
	ev := events.Document{Schema: events.SchemaDocument, Corpus: corpus, ID: "all.md", Title: "all", Text: acronymDocument}
	if _, err := pipeline.PublishDocument(context.Background(), p.Bus, ev); err != nil {
		t.Fatal(err)
	}
	st := waitIndexed(t, p, corpus)
	if st.Graph.Detections == 0 || st.Graph.Unreported != 0 || st.Graph.Failures != 0 {
		t.Fatalf("graph state %+v: want a detection run, every community reported, no failure", st.Graph)
	}
	if st.Quarantined != 0 {
		t.Errorf("quarantined %+v: every record has a valid vector now", st.QuarantinedRecords)
	}
	recs, err := p.Vectors.Attrs(context.Background(), schema.Collection(corpus, schema.Entities), []string{"all"})
	if err != nil || len(recs) != 1 {
		t.Errorf("record of entity all: %v %v", recs, err)
	}
	if st.Graph.Communities > 0 {
		n, err := p.Vectors.Count(context.Background(), schema.Collection(corpus, schema.Communities))
		if err != nil || n < st.Graph.Communities {
			t.Errorf("reports: %d %v, want %d", n, err, st.Graph.Communities)
		}
	}
}
