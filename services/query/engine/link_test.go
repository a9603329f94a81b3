package engine

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// fixedEmbedder embeds every text to the same unit vector.
type fixedEmbedder []float32

func (f fixedEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = f
	}
	return out, nil
}

// Embedding links are kept only within EntityMargin of the best one: a model that scores
// everything high (E5) must not turn the ten nearest descriptions into links.
func TestEntityLinkMargin(t *testing.T) {
	_, st := newBridgeEngine(t)
	ctx := t.Context()
	coll := schema.Collection("demo", schema.Entities)
	if err := st.Vectors.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: coll, Dim: 2}); err != nil {
		t.Fatal(err)
	}
	at := func(cos float64) []float32 { return []float32{float32(cos), float32(math.Sqrt(1 - cos*cos))} }
	if err := st.Vectors.Upsert(ctx, coll, []vectorstore.Record{
		{ID: "stephen king", Vector: at(0.93), Text: "Stephen King"},
		{ID: "emilio estevez", Vector: at(0.92), Text: "Emilio Estevez"},
		{ID: "brunswick county", Vector: at(0.85), Text: "Brunswick County"},
		{ID: "north carolina", Vector: at(0.80), Text: "North Carolina"},
	}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		margin float64
		want   []string
	}{
		{0.02, []string{"emilio estevez", "stephen king"}},
		{0.1, []string{"brunswick county", "emilio estevez", "stephen king"}},
		{1, []string{"brunswick county", "emilio estevez", "north carolina", "stephen king"}},
	} {
		cfg := DefaultConfig()
		cfg.EntityMinSim, cfg.EntityMargin = 0.3, tc.margin
		e, err := New(cfg, Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: fixedEmbedder{1, 0},
			Logger: querytest.Logger()})
		if err != nil {
			t.Fatal(err)
		}
		linked, err := e.link(ctx, "demo", "an unnamed horror picture", []float32{1, 0})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range linked {
			if l.by == "embedding" {
				got = append(got, l.key)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("margin %v: embedding links %v, want %v", tc.margin, got, tc.want)
		}
	}
}

// With the offline hashing embedder an entity is linked by its name only: its cosine
// counts shared words, which the lexical list already weighs, and an entity whose
// description repeats the question's words (a document title) would be linked by it.
func TestOfflineLinksByNameOnly(t *testing.T) {
	_, st := newBridgeEngine(t)
	ctx := t.Context()
	coll := schema.Collection("demo", schema.Entities)
	if err := st.Vectors.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: coll, Dim: 2}); err != nil {
		t.Fatal(err)
	}
	if err := st.Vectors.Upsert(ctx, coll, []vectorstore.Record{{ID: "stephen king", Vector: []float32{1, 0}, Text: "Stephen King"}}); err != nil {
		t.Fatal(err)
	}
	for _, offline := range []bool{false, true} {
		e, err := New(DefaultConfig(), Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: fixedEmbedder{1, 0},
			OfflineEmbedder: offline, Logger: querytest.Logger()})
		if err != nil {
			t.Fatal(err)
		}
		linked, err := e.link(ctx, "demo", "an unnamed horror picture filmed near Leland, North Carolina", []float32{1, 0})
		if err != nil {
			t.Fatal(err)
		}
		byEmbedding := slices.ContainsFunc(linked, func(l linkedEntity) bool { return l.by == "embedding" })
		if byEmbedding == offline {
			t.Errorf("offline %v: links %+v; want an embedding link only with a semantic embedder", offline, linked)
		}
		if offline && !slices.ContainsFunc(linked, func(l linkedEntity) bool { return strings.HasPrefix(l.key, "leland") }) {
			t.Errorf("offline: links %+v, want the entity the question names", linked)
		}
	}
}
