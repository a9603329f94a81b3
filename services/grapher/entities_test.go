package grapher

import (
	"context"
	"errors"
	"sync"
	"testing"

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
