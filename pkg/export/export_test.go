package export

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"go.uber.org/goleak"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/normalize"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/blevesearch/bleve_index_api.AnalysisWorker"))
}

type stores struct {
	graph   *boltgraph.Store
	vectors *embedded.Store
}

const corpus = "demo"

func mention(name, typ, desc string) graphstore.EntityMention {
	return graphstore.EntityMention{Key: normalize.Name(name), Name: name, Type: typ, Description: desc}
}

func relation(src, dst, typ, desc string) graphstore.RelationMention {
	return graphstore.RelationMention{SourceKey: normalize.Name(src), TargetKey: normalize.Name(dst), Type: typ, Description: desc, Strength: 2}
}

// fixture is a small indexed corpus: four chunks of two documents, five entities
// (one with XML-hostile text), four relationships, a two-level community hierarchy
// with reports for all but one community.
func fixture(t *testing.T) stores {
	t.Helper()
	ctx := t.Context()
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
	ada, babbage, engine := mention("Ada Lovelace", "PERSON", "Wrote the first algorithm."), mention("Charles Babbage", "PERSON", "Designed the engine."),
		mention("Analytical Engine", "ARTIFACT", `A "mill" & a <store>.`)
	keeper, light := mention("Tom Keeper", "PERSON", "Keeps the light."), mention("Gullhead Lighthouse", "PLACE", "A lighthouse.")
	err = g.Merge(ctx, corpus, []graphstore.ChunkExtraction{
		{ChunkID: "d1:0:aaaaaaaaaaaa", DocumentID: "d1", Entities: []graphstore.EntityMention{ada, engine},
			Relations: []graphstore.RelationMention{relation("Ada Lovelace", "Analytical Engine", "PROGRAMMED", "Ada wrote for it.")}},
		{ChunkID: "d1:1:bbbbbbbbbbbb", DocumentID: "d1", Entities: []graphstore.EntityMention{ada, babbage},
			Relations: []graphstore.RelationMention{relation("Ada Lovelace", "Charles Babbage", "WORKED_WITH", "They worked together.")}},
		{ChunkID: "d1:2:cccccccccccc", DocumentID: "d1", Entities: []graphstore.EntityMention{babbage, engine},
			Relations: []graphstore.RelationMention{relation("Charles Babbage", "Analytical Engine", "DESIGNED", "He designed it.")}},
		{ChunkID: "d2:0:dddddddddddd", DocumentID: "d2", Entities: []graphstore.EntityMention{keeper, light},
			Relations: []graphstore.RelationMention{relation("Tom Keeper", "Gullhead Lighthouse", "KEEPS", "He keeps it.")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	k := normalize.Name
	err = g.ReplaceCommunities(ctx, corpus, []graphstore.Community{
		{ID: "top", Level: 1, Members: []string{k("Ada Lovelace"), k("Charles Babbage"), k("Analytical Engine"), k("Tom Keeper"), k("Gullhead Lighthouse")}},
		{ID: "engine", Level: 0, ParentID: "top", Members: []string{k("Ada Lovelace"), k("Charles Babbage"), k("Analytical Engine")}},
		{ID: "light", Level: 0, ParentID: "top", Members: []string{k("Tom Keeper"), k("Gullhead Lighthouse")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	emb := hashembed.New(16)
	chunkColl := schema.Collection(corpus, schema.Chunks)
	if err := v.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: chunkColl, Dim: 16, Lexical: true}); err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{"d1:0:aaaaaaaaaaaa": "Ada Lovelace wrote for the Analytical Engine.", "d1:1:bbbbbbbbbbbb": "Ada worked with Charles Babbage.",
		"d1:2:cccccccccccc": "Babbage designed the engine.", "d2:0:dddddddddddd": "Tom Keeper keeps Gullhead Lighthouse."}
	var recs []vectorstore.Record
	for id, text := range texts {
		vec, _ := emb.Embed(ctx, []string{text})
		doc, title := "d1", "Engines"
		if strings.HasPrefix(id, "d2") {
			doc, title = "d2", "Lighthouses"
		}
		recs = append(recs, vectorstore.Record{ID: id, Vector: vec[0], Text: text, Attrs: map[string]string{schema.ChunkDocumentID: doc, schema.ChunkTitle: title,
			schema.ChunkPosition: id[3:4]}})
	}
	if err := v.Upsert(ctx, chunkColl, recs); err != nil {
		t.Fatal(err)
	}
	repColl := schema.Collection(corpus, schema.Communities)
	if err := v.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: repColl, Dim: 16, Lexical: true}); err != nil {
		t.Fatal(err)
	}
	var reps []vectorstore.Record
	for id, title := range map[string]string{"top": "Engines and lights", "engine": "The Analytical Engine"} {
		rj, _ := json.Marshal(schema.Report{Title: title, Summary: "About " + title + ".", Findings: []schema.Finding{{Summary: "A finding", Explanation: "Because."}}, Rating: 7.5, RatingExplanation: "Important."})
		vec, _ := emb.Embed(ctx, []string{title})
		reps = append(reps, vectorstore.Record{ID: id, Vector: vec[0], Text: title, Attrs: map[string]string{schema.ReportJSON: string(rj), schema.ReportTitle: title, schema.ReportMethod: "extractive/v1"}})
	}
	if err := v.Upsert(ctx, repColl, reps); err != nil {
		t.Fatal(err)
	}
	return stores{graph: g, vectors: v}
}

func export(t *testing.T, s stores, f Format) (string, Summary) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), string(f))
	sum, err := Write(t.Context(), s.graph, s.vectors, corpus, f, Dir(dir))
	if err != nil {
		t.Fatalf("exporting %s: %v", f, err)
	}
	return dir, sum
}

func readLines[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v T
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s: line %q: %v", path, sc.Text(), err)
		}
		out = append(out, v)
	}
	return out
}

func TestJSONL(t *testing.T) {
	s := fixture(t)
	dir, sum := export(t, s, JSONL)
	want := Summary{Entities: 5, Relationships: 4, Communities: 3, Reports: 2, Chunks: 4,
		Files: []string{EntitiesJSONL, RelationshipsJSONL, CommunitiesJSONL, ChunksJSONL}}
	if !slices.Equal(sum.Files, want.Files) || sum.Entities != want.Entities || sum.Relationships != want.Relationships ||
		sum.Communities != want.Communities || sum.Reports != want.Reports || sum.Chunks != want.Chunks {
		t.Errorf("summary %+v, want %+v", sum, want)
	}
	ents := readLines[entityLine](t, filepath.Join(dir, EntitiesJSONL))
	var ada entityLine
	for _, e := range ents {
		if e.Name == "Ada Lovelace" {
			ada = e
		}
	}
	if ada.Degree != 2 || ada.Mentions != 2 || len(ada.ChunkIDs) != 2 || len(ada.Communities) != 2 || ada.Communities[0] != "top" || ada.Communities[1] != "engine" {
		t.Errorf("Ada = %+v, want degree 2, two chunks, communities top (level 0, the root) then engine", ada)
	}
	comms := readLines[communityLine](t, filepath.Join(dir, CommunitiesJSONL))
	reported := 0
	for _, c := range comms {
		if c.Report != nil {
			reported++
			if len(c.Report.Findings) != 1 || c.Report.Rating != 7.5 || c.Report.Method != "extractive/v1" {
				t.Errorf("community %s report %+v", c.ID, c.Report)
			}
		}
		if c.ID == "top" && (c.Level != 0 || !slices.Equal(c.Children, []string{"engine", "light"}) || len(c.Members) != 5) {
			t.Errorf("top = %+v", c)
		}
	}
	if len(comms) != 3 || reported != 2 {
		t.Errorf("%d communities, %d reported: want 3 and 2", len(comms), reported)
	}
	chunks := readLines[chunkLine](t, filepath.Join(dir, ChunksJSONL))
	for _, c := range chunks {
		if c.DocumentID == "" || c.Title == "" || len(c.Entities) != 2 {
			t.Errorf("chunk %+v: want its document, title and two entities", c)
		}
	}
	if len(chunks) != 4 {
		t.Errorf("%d chunks, want 4", len(chunks))
	}
}

// graphmlDoc is enough of GraphML to check a file with encoding/xml.
type graphmlDoc struct {
	Keys []struct {
		ID   string `xml:"id,attr"`
		For  string `xml:"for,attr"`
		Name string `xml:"attr.name,attr"`
	} `xml:"key"`
	Graph struct {
		Default string `xml:"edgedefault,attr"`
		Nodes   []struct {
			ID   string `xml:"id,attr"`
			Data []struct {
				Key   string `xml:"key,attr"`
				Value string `xml:",chardata"`
			} `xml:"data"`
		} `xml:"node"`
		Edges []struct {
			Source string `xml:"source,attr"`
			Target string `xml:"target,attr"`
		} `xml:"edge"`
	} `xml:"graph"`
}

func TestGraphML(t *testing.T) {
	s := fixture(t)
	dir, sum := export(t, s, GraphML)
	if !slices.Equal(sum.Files, []string{GraphMLFile, CommunitiesJSONL, ChunksJSONL}) {
		t.Errorf("files %v", sum.Files)
	}
	b, err := os.ReadFile(filepath.Join(dir, GraphMLFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc graphmlDoc
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("GraphML does not parse: %v", err)
	}
	if doc.Graph.Default != "directed" || len(doc.Graph.Nodes) != 5 || len(doc.Graph.Edges) != 4 {
		t.Fatalf("graph: %s edges, %d nodes, %d edges", doc.Graph.Default, len(doc.Graph.Nodes), len(doc.Graph.Edges))
	}
	declared := map[string]bool{}
	for _, k := range doc.Keys {
		declared[k.ID] = true
	}
	for _, n := range doc.Graph.Nodes {
		for _, d := range n.Data {
			if !declared[d.Key] {
				t.Errorf("node %s uses undeclared key %s", n.ID, d.Key)
			}
			if d.Key == "description" && n.ID == normalize.Name("Analytical Engine") && d.Value != `A "mill" & a <store>.` {
				t.Errorf("description read back as %q", d.Value)
			}
		}
	}
}

func TestParquetInGo(t *testing.T) {
	s := fixture(t)
	dir, sum := export(t, s, Parquet)
	if !slices.Equal(sum.Files, []string{EntitiesParquet, RelationshipsParquet, CommunitiesParquet, CommunityReportsParquet, TextUnitsParquet}) {
		t.Errorf("files %v", sum.Files)
	}
	comms := readParquet[pqCommunity](t, filepath.Join(dir, CommunitiesParquet))
	for _, c := range comms {
		switch c.ID {
		case "top":
			if c.Level != 0 || c.Parent != -1 || len(c.Children) != 2 || c.Title != "Engines and lights" || c.Size != 5 || len(c.RelationshipIDs) != 4 {
				t.Errorf("top = %+v: want GraphRAG's level 0, no parent, two children, four relationships", c)
			}
		case "light":
			if c.Level != 1 || c.Parent != comms[0].Community || c.Title != "Community 2" || len(c.TextUnitIDs) != 1 {
				t.Errorf("light = %+v: want level 1 under top, a title from its number, one text unit", c)
			}
		}
	}
	units := readParquet[pqTextUnit](t, filepath.Join(dir, TextUnitsParquet))
	if len(units) != 4 || units[0].NTokens == 0 || units[0].DocumentID != "d1" || len(units[0].RelationshipIDs) != 1 {
		t.Errorf("text units %+v", units)
	}
}

func readParquet[T any](t *testing.T, path string) []T {
	t.Helper()
	rows, err := parquet.ReadFile[T](path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return rows
}

func TestZipAndErrors(t *testing.T) {
	s := fixture(t)
	var buf bytes.Buffer
	z := Zip(&buf)
	if _, err := Write(t.Context(), s.graph, s.vectors, corpus, JSONL, z); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	if !slices.Equal(names, []string{EntitiesJSONL, RelationshipsJSONL, CommunitiesJSONL, ChunksJSONL}) {
		t.Errorf("archive holds %v", names)
	}
	if _, err := ParseFormat("csv"); !errors.Is(err, ErrFormat) {
		t.Errorf("ParseFormat(csv) = %v", err)
	}
	// An empty corpus exports empty files, not an error.
	sum, err := Write(t.Context(), s.graph, s.vectors, "empty", Parquet, Dir(t.TempDir()))
	if err != nil || sum.Entities != 0 || sum.Chunks != 0 || len(sum.Files) != 5 {
		t.Errorf("empty corpus: %+v, %v", sum, err)
	}
}

// TestReadersOfOtherLibraries reads the GraphML and Parquet exports with networkx and
// pyarrow (scripts/export-check, a venv under ~/.cache), and with Microsoft GraphRAG's
// own loaders when they are installed.
func TestReadersOfOtherLibraries(t *testing.T) {
	if testing.Short() {
		t.Skip("installs Python packages")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed: the export readers cannot run")
	}
	s := fixture(t)
	root := t.TempDir()
	var sum Summary
	for _, f := range []Format{GraphML, Parquet} {
		var err error
		if sum, err = Write(t.Context(), s.graph, s.vectors, corpus, f, Dir(filepath.Join(root, string(f)))); err != nil {
			t.Fatal(err)
		}
	}
	want, _ := json.Marshal(sum)
	out, err := exec.CommandContext(t.Context(), "../../scripts/export-check/run.sh", root, string(want)).CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 3 {
		t.Skipf("the Python readers could not be installed from PyPI: %s", out)
	}
	if err != nil {
		t.Fatalf("the readers refused the export: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
