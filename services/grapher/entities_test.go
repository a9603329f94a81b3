package grapher

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// upsertCounter counts the grapher's upserts per collection.
type upsertCounter struct {
	VectorStore
	mu    sync.Mutex
	calls map[string]int
}

func (u *upsertCounter) Upsert(ctx context.Context, coll string, recs []vectorstore.Record) error {
	u.mu.Lock()
	u.calls[coll]++
	u.mu.Unlock()
	return u.VectorStore.Upsert(ctx, coll, recs)
}

func (u *upsertCounter) count(coll string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.calls[coll]
}

// A detection run embeds its changed entities in a few large writes, not one per read
// batch: at 859k entities, writes of 256 were most of a 45-minute run. Entities whose
// text did not change are not written again, and the collection has no lexical index
// (nothing searches entity descriptions by words).
func TestEmbedEntitiesWritesInGroups(t *testing.T) {
	ctx := t.Context()
	counter := &upsertCounter{calls: map[string]int{}}
	tg := newTestGrapherWrapped(t, func(v VectorStore) VectorStore { counter.VectorStore = v; return counter })
	const corpus = "groups"
	if err := tg.g.Merge(ctx, corpus, triangles("g", 2000)); err != nil { // 6,000 entities
		t.Fatal(err)
	}
	if err := tg.s.Detect(ctx, corpus); err != nil {
		t.Fatal(err)
	}
	coll := schema.Collection(corpus, schema.Entities)
	n, err := tg.vs.Count(ctx, coll)
	if err != nil || n != 6000 {
		t.Fatalf("entity records = %d, %v; want 6000", n, err)
	}
	if got, want := counter.count(coll), (6000+entityWriteGroup-1)/entityWriteGroup; got != want {
		t.Errorf("entity upserts = %d; want %d (groups of %d)", got, want, entityWriteGroup)
	}
	if err := tg.s.Detect(ctx, corpus); err != nil {
		t.Fatal(err)
	}
	if got := counter.count(coll); got != (6000+entityWriteGroup-1)/entityWriteGroup {
		t.Errorf("a second run over unchanged entities wrote again: %d upserts in all", got)
	}
	if _, err := tg.vs.SearchText(ctx, coll, "g", 5, vectorstore.Filter{}); !errors.Is(err, vectorstore.ErrUnsupported) {
		t.Errorf("entity collection searched by words: err = %v; want ErrUnsupported (no lexical index)", err)
	}
}

// recordingEmbedder is the offline embedder, keeping the texts it was given.
type recordingEmbedder struct {
	llm.Embedder
	mu    sync.Mutex
	texts []string
}

func (r *recordingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	r.texts = append(r.texts, texts...)
	r.mu.Unlock()
	return r.Embedder.Embed(ctx, texts)
}

func (r *recordingEmbedder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.texts
	r.texts = nil
	return out
}

// With -entity-embed name an entity is embedded by name and type, once: a description
// that grows as documents mention the entity again does not make it embedded again. With
// the default, -entity-embed description, every entity whose description changed is.
func TestEntityEmbeddedOnceAsItsDescriptionGrows(t *testing.T) {
	mention := func(doc, desc string) graphstore.ChunkExtraction {
		ce := graphstore.ChunkExtraction{ChunkID: doc + "-c", DocumentID: doc}
		for _, k := range []string{"ada", "bert", "cleo"} {
			ce.Entities = append(ce.Entities, graphstore.EntityMention{Key: k, Name: k, Type: "PERSON", Description: desc + " " + k + "."})
		}
		ce.Relations = []graphstore.RelationMention{{SourceKey: "ada", TargetKey: "bert", Type: "R", Strength: 1},
			{SourceKey: "bert", TargetKey: "cleo", Type: "R", Strength: 1}, {SourceKey: "ada", TargetKey: "cleo", Type: "R", Strength: 1}}
		return ce
	}
	for _, tc := range []struct {
		embed      string
		first      []string
		secondRuns int
	}{
		{EntityEmbedName, []string{"ada (person)", "bert (person)", "cleo (person)"}, 0},
		{EntityEmbedDescription, []string{"ada (person): A sentence about ada.", "bert (person): A sentence about bert.", "cleo (person): A sentence about cleo."}, 3},
	} {
		t.Run(tc.embed, func(t *testing.T) {
			ctx := t.Context()
			rec := &recordingEmbedder{Embedder: hashembed.New(32)}
			tg := newTestGrapherEmbedding(t, nil, func(c *Config) { c.EntityEmbed = tc.embed }, rec)
			rec.take() // the dimension probe
			const corpus = "grow"
			if err := tg.g.Merge(ctx, corpus, []graphstore.ChunkExtraction{mention("d1", "A sentence about")}); err != nil {
				t.Fatal(err)
			}
			if err := tg.s.Detect(ctx, corpus); err != nil {
				t.Fatal(err)
			}
			got := rec.take()
			slices.Sort(got)
			if !slices.Equal(got, tc.first) {
				t.Errorf("first run embedded %q, want %q", got, tc.first)
			}
			if err := tg.g.Merge(ctx, corpus, []graphstore.ChunkExtraction{mention("d2", "A much longer sentence, from another document, about")}); err != nil {
				t.Fatal(err)
			}
			if err := tg.s.Detect(ctx, corpus); err != nil {
				t.Fatal(err)
			}
			if again := rec.take(); len(again) != tc.secondRuns {
				t.Errorf("after the descriptions grew, %d texts embedded (%q), want %d", len(again), again, tc.secondRuns)
			}
		})
	}
}
