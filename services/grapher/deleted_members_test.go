package grapher

import (
	"fmt"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// A report names its community's members. When a member leaves because the last
// document mentioning it was deleted, the community differs by one member, which
// community.Stabilize tolerates; keeping its id would keep the report, and with it
// the deleted document's entity name, in the report collection. The community must
// get a new id (and a report written without the entity), warm start or cold.
func TestDeletedMemberDoesNotKeepTheReport(t *testing.T) {
	for _, warm := range []bool{false, true} {
		t.Run(fmt.Sprintf("warm=%t", warm), func(t *testing.T) {
			testDeletedMemberDoesNotKeepTheReport(t, warm)
		})
	}
}

func testDeletedMemberDoesNotKeepTheReport(t *testing.T, warm bool) {
	ctx := t.Context()
	tg := newTestGrapherConfigured(t, nil, func(c *Config) { c.WarmStart = warm })
	const corpus = "deleted"
	coll := schema.Collection(corpus, schema.Communities)
	// Document "g" names ten entities; document "v" names the same ten and one more,
	// "g 10", that no other document mentions.
	victim := clique("g", 1, 0, 11)
	victim.ChunkID, victim.DocumentID = "v-c0", "v"
	if err := tg.g.Merge(ctx, corpus, []graphstore.ChunkExtraction{clique("g", 0, 0, 10), victim}); err != nil {
		t.Fatal(err)
	}
	if err := tg.s.Detect(ctx, corpus); err != nil {
		t.Fatal(err)
	}
	cs, err := tg.g.Communities(ctx, corpus, -1)
	if err != nil {
		t.Fatal(err)
	}
	// The summarizer's part: a report per community naming its members.
	vec := make([]float32, 32)
	vec[0] = 1
	var reports []vectorstore.Record
	for _, c := range cs {
		reports = append(reports, vectorstore.Record{ID: c.ID, Vector: vec, Text: "Members: " + strings.Join(c.Members, ", "),
			Attrs: map[string]string{schema.ReportMembers: fmt.Sprint(len(c.Members))}})
	}
	if len(reports) == 0 || !strings.Contains(reports[0].Text, "g 10") {
		t.Fatalf("communities %+v: want one holding g 10", cs)
	}
	if err := tg.vs.Upsert(ctx, coll, reports); err != nil {
		t.Fatal(err)
	}

	if err := tg.g.RemoveChunks(ctx, corpus, []string{victim.ChunkID}); err != nil {
		t.Fatal(err)
	}
	if err := tg.s.Detect(ctx, corpus); err != nil {
		t.Fatal(err)
	}
	for _, id := range listAll(t, tg.vs, coll) {
		recs, err := tg.vs.Get(ctx, coll, []string{id})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(recs[0].Text, "g 10") {
			t.Errorf("report %s still names the deleted entity g 10: %q", id, recs[0].Text)
		}
	}
	after := currentCommunityIDs(t, tg.g, corpus)
	for _, c := range cs {
		for _, id := range after {
			if id == c.ID {
				t.Errorf("community %s kept its id after losing its deleted member", id)
			}
		}
	}
	if len(after) == 0 {
		t.Fatal("no community left: the ten entities of document g should still form one")
	}
}
