package catalog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// record is what the catalog needs of the chunker's record of a document.
type record struct {
	id, title, contentHash string
	chunks                 int
	firstChunk             string // to read the title from when the record lacks it
	updated                time.Time
	deleted                bool
}

// documentRecord reads the chunker's record of a document under key
// (pipeline.DocumentRecord); ok is false when there is none. The document id is the
// prefix of its chunk ids for a record written before records named it.
func documentRecord(ctx context.Context, b *bus.Bus, key string) (record, bool, error) {
	e, err := b.ReadKV(ctx, schema.StateBucket, key)
	if errors.Is(err, bus.ErrNotFound) {
		return record{}, false, nil
	}
	if err != nil {
		return record{}, false, fmt.Errorf("reading document record %s: %w", key, err)
	}
	r, err := pipeline.DecodeDocument(e.Value)
	if err != nil {
		return record{}, false, fmt.Errorf("%s: %w", key, err)
	}
	out := record{id: r.ID, title: r.Title, contentHash: r.ContentHash, chunks: r.Chunks.Len(), updated: r.UpdatedAt.UTC(), deleted: r.Deleted}
	if out.updated.IsZero() {
		out.updated = e.Created.UTC()
	}
	if len(r.Chunks.IDs) > 0 && out.id == "" {
		out.id = documentOfChunk(r.Chunks.IDs[0])
	}
	if ids := r.Chunks.ChunkIDs(out.id); len(ids) > 0 {
		out.firstChunk = ids[0]
	}
	return out, true, nil
}

// documentOfChunk is the document id a chunk id begins with: chunk ids are
// "<document id>:<position>:<content hash>" (chunking.Split).
func documentOfChunk(chunkID string) string {
	s := chunkID
	for range 2 {
		i := strings.LastIndexByte(s, ':')
		if i < 0 {
			return chunkID
		}
		s = s[:i]
	}
	return s
}

// titleReader reads the title of documents whose record lacks it from their first
// chunk's record in the chunk collection (schema.ChunkTitle), one read per page.
type titleReader struct {
	c       *Catalog
	corpus  string
	byChunk map[string][]*Document
}

func (t *titleReader) want(d *Document, firstChunk string) {
	if d.Title != "" || firstChunk == "" {
		return
	}
	if t.byChunk == nil {
		t.byChunk = map[string][]*Document{}
	}
	t.byChunk[firstChunk] = append(t.byChunk[firstChunk], d)
}

func (t *titleReader) read(ctx context.Context) error {
	if len(t.byChunk) == 0 {
		return nil
	}
	ids := make([]string, 0, len(t.byChunk))
	for id := range t.byChunk {
		ids = append(ids, id)
	}
	recs, err := t.c.vectors.Attrs(ctx, schema.Collection(t.corpus, schema.Chunks), ids)
	if errors.Is(err, vectorstore.ErrNotFound) {
		return nil // the chunks are gone with their collection: no title to read
	}
	if err != nil {
		return fmt.Errorf("reading document titles of %s: %w", t.corpus, err)
	}
	for id, a := range recs {
		for _, d := range t.byChunk[id] {
			d.Title = a[schema.ChunkTitle]
		}
	}
	return nil
}
