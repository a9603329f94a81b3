package querytest

import (
	"strconv"
	"testing"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/normalize"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// Report is a community report of a fixture corpus.
type Report struct {
	ID, Title, Summary string
	Level              int
	Rating             float64
	Members            []string // entity names
}

// DemoReports are the two level-0 communities of DemoWithReports.
var DemoReports = []Report{
	{ID: "k1", Title: "Ada Lovelace and the first algorithm", Level: 0, Rating: 8, Members: []string{"Ada Lovelace", "Analytical Engine"},
		Summary: "Ada Lovelace wrote the first published algorithm for the Analytical Engine. Her notes computed Bernoulli numbers."},
	{ID: "k2", Title: "Charles Babbage's engines", Level: 0, Rating: 6, Members: []string{"Charles Babbage"},
		Summary: "Charles Babbage designed the Analytical Engine. He worked with Ada Lovelace."},
}

// DemoWithReports is Demo with a level of communities (DemoReports) and their reports,
// written as the grapher and the summarizer would.
func DemoWithReports(t testing.TB) Stores {
	t.Helper()
	s := Demo(t)
	s.WriteReports(t, DemoCorpus, DemoReports)
	return s
}

// WriteReports stores reports as the hierarchy of corpus (graph store) and as indexed
// reports (vector store, with BM25), as the grapher and the summarizer write them.
func (s Stores) WriteReports(t testing.TB, corpus string, reports []Report) {
	t.Helper()
	ctx := t.Context()
	cs := make([]graphstore.Community, len(reports))
	texts := make([]string, len(reports))
	for i, r := range reports {
		cs[i] = graphstore.Community{ID: r.ID, Level: r.Level}
		for _, m := range r.Members {
			cs[i].Members = append(cs[i].Members, normalize.Name(m))
		}
		texts[i] = schema.Report{Title: r.Title, Summary: r.Summary}.Text()
	}
	if err := s.Graph.ReplaceCommunities(ctx, corpus, cs); err != nil {
		t.Fatalf("writing communities: %v", err)
	}
	coll := schema.Collection(corpus, schema.Communities)
	if err := s.Vectors.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: coll, Dim: Dim, Lexical: true}); err != nil {
		t.Fatalf("creating the reports collection: %v", err)
	}
	vecs, err := s.Embedder.Embed(ctx, texts)
	if err != nil {
		t.Fatalf("embedding reports: %v", err)
	}
	recs := make([]vectorstore.Record, len(reports))
	for i, r := range reports {
		recs[i] = vectorstore.Record{ID: r.ID, Vector: vecs[i], Text: texts[i], Attrs: map[string]string{
			schema.ReportLevel: strconv.Itoa(r.Level), schema.ReportTitle: r.Title,
			schema.ReportRating: strconv.FormatFloat(r.Rating, 'f', -1, 64)}}
	}
	if err := s.Vectors.Upsert(ctx, coll, recs); err != nil {
		t.Fatalf("writing reports: %v", err)
	}
}
