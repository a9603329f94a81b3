package querytest

import (
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/normalize"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
)

// Dim is the dimension of the fixture's embeddings.
const Dim = 384

// Stores are embedded stores and the offline embedder, writable, closed at the end of
// the test that opened them.
type Stores struct {
	Graph    *boltgraph.Store
	Vectors  *embedded.Store
	Embedder *hashembed.Embedder
}

// Open opens empty stores in t's temporary directory.
func Open(t testing.TB) Stores {
	t.Helper()
	dir := t.TempDir()
	g, err := boltgraph.Open(filepath.Join(dir, "graph.db"))
	if err != nil {
		t.Fatalf("opening graph store: %v", err)
	}
	t.Cleanup(func() { _ = g.Close() })
	v, err := embedded.Open(filepath.Join(dir, "vectors"))
	if err != nil {
		t.Fatalf("opening vector store: %v", err)
	}
	t.Cleanup(func() { _ = v.Close() })
	return Stores{Graph: g, Vectors: v, Embedder: hashembed.New(Dim)}
}

// Passage is a chunk of a fixture corpus. Text is stored as given; Title and
// Section are its record's attributes.
type Passage struct{ ID, Doc, Title, Section, Text string }

// WriteChunks embeds passages and writes them to corpus's chunk collection (created with
// BM25) as the extractor would.
func (s Stores) WriteChunks(t testing.TB, corpus string, passages []Passage) {
	t.Helper()
	ctx := t.Context()
	coll := schema.Collection(corpus, schema.Chunks)
	if err := s.Vectors.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: coll, Dim: Dim, Lexical: true}); err != nil {
		t.Fatalf("creating chunks collection: %v", err)
	}
	texts := make([]string, len(passages))
	for i, p := range passages {
		texts[i] = p.Text
	}
	vecs, err := s.Embedder.Embed(ctx, texts)
	if err != nil {
		t.Fatalf("embedding passages: %v", err)
	}
	recs := make([]vectorstore.Record, len(passages))
	for i, p := range passages {
		recs[i] = vectorstore.Record{ID: p.ID, Vector: vecs[i], Text: p.Text, Attrs: map[string]string{schema.ChunkDocumentID: p.Doc, schema.ChunkTitle: p.Title}}
		if p.Section != "" {
			recs[i].Attrs[schema.ChunkSection] = p.Section
		}
	}
	if err := s.Vectors.Upsert(ctx, coll, recs); err != nil {
		t.Fatalf("writing chunks: %v", err)
	}
}

// WriteEntities embeds the entities named by mentions by their name and type and writes
// them to corpus's entity collection, as the grapher does (its default -entity-embed
// name).
func (s Stores) WriteEntities(t testing.TB, corpus string, mentions []graphstore.EntityMention) {
	t.Helper()
	ctx := t.Context()
	coll := schema.Collection(corpus, schema.Entities)
	if err := s.Vectors.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: coll, Dim: Dim}); err != nil {
		t.Fatalf("creating the entity collection: %v", err)
	}
	texts := make([]string, len(mentions))
	for i, m := range mentions {
		texts[i] = m.Name + " (" + strings.ToLower(m.Type) + ")"
	}
	vecs, err := s.Embedder.Embed(ctx, texts)
	if err != nil {
		t.Fatalf("embedding entities: %v", err)
	}
	recs := make([]vectorstore.Record, len(mentions))
	for i, m := range mentions {
		recs[i] = vectorstore.Record{ID: m.Key, Vector: vecs[i], Text: texts[i]}
	}
	if err := s.Vectors.Upsert(ctx, coll, recs); err != nil {
		t.Fatalf("writing entities: %v", err)
	}
}

// Mention is an entity mention keyed by THE normalization, as the grapher keys it.
func Mention(name, typ, desc string) graphstore.EntityMention {
	return graphstore.EntityMention{Key: normalize.Name(name), Name: name, Type: typ, Description: desc}
}

// Relation is a relationship mention between two named entities, of strength 1.
func Relation(src, dst, typ, desc string) graphstore.RelationMention {
	return graphstore.RelationMention{SourceKey: normalize.Name(src), TargetKey: normalize.Name(dst), Type: typ, Description: desc, Strength: 1}
}

// DemoCorpus is the corpus Demo indexes.
const DemoCorpus = "demo"

// DemoPassages are the three passages of Demo: c1 and c2 about Ada Lovelace (document
// d1), c3 about Charles Babbage (d2).
var DemoPassages = []Passage{
	{ID: "c1", Doc: "d1", Title: "Ada Lovelace", Text: "Ada Lovelace\n\nAda Lovelace wrote the first published algorithm, a method for computing Bernoulli numbers on the Analytical Engine."},
	{ID: "c2", Doc: "d1", Title: "Ada Lovelace", Text: "Ada Lovelace\n\nLovelace worked with Charles Babbage and translated a memoir by Luigi Menabrea, adding extensive notes."},
	{ID: "c3", Doc: "d2", Title: "Charles Babbage", Text: "Charles Babbage\n\nCharles Babbage designed the Analytical Engine, a mechanical general-purpose computer with a mill and a store."},
}

// Demo returns stores holding a tiny indexed corpus "demo" about the Analytical Engine:
// DemoPassages, and a graph of three entities (Ada Lovelace, Charles Babbage, Analytical
// Engine) related as the passages say, its entities embedded. It has no communities.
func Demo(t testing.TB) Stores {
	t.Helper()
	s := Open(t)
	s.WriteChunks(t, DemoCorpus, DemoPassages)
	ada := Mention("Ada Lovelace", "PERSON", "Mathematician who wrote the first published algorithm.")
	babbage := Mention("Charles Babbage", "PERSON", "Inventor who designed the Analytical Engine.")
	engine := Mention("Analytical Engine", "ARTIFACT", "A mechanical general-purpose computer.")
	err := s.Graph.Merge(t.Context(), DemoCorpus, []graphstore.ChunkExtraction{
		{ChunkID: "c1", DocumentID: "d1", Entities: []graphstore.EntityMention{ada, engine},
			Relations: []graphstore.RelationMention{Relation("Ada Lovelace", "Analytical Engine", "WROTE_PROGRAM_FOR", "Lovelace wrote an algorithm for the engine.")}},
		{ChunkID: "c2", DocumentID: "d1", Entities: []graphstore.EntityMention{ada, babbage},
			Relations: []graphstore.RelationMention{Relation("Ada Lovelace", "Charles Babbage", "WORKED_WITH", "Lovelace worked with Babbage.")}},
		{ChunkID: "c3", DocumentID: "d2", Entities: []graphstore.EntityMention{babbage, engine},
			Relations: []graphstore.RelationMention{Relation("Charles Babbage", "Analytical Engine", "DESIGNED", "Babbage designed the engine.")}},
	})
	if err != nil {
		t.Fatalf("merging graph: %v", err)
	}
	s.WriteEntities(t, DemoCorpus, []graphstore.EntityMention{ada, babbage, engine})
	return s
}

// Logger discards everything.
func Logger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
