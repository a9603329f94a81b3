package extractsettings

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/chunking"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// ChunkReader reads chunk records (a vectorstore.Store).
type ChunkReader interface {
	Get(ctx context.Context, coll string, ids []string) ([]vectorstore.Record, error)
}

// Reindexed says what Reindex published.
type Reindexed struct {
	Corpus string `json:"corpus"`
	// SettingsVersion is the version of the settings when the chunks were published:
	// the extractor reads the current one when it extracts each.
	SettingsVersion int `json:"settings_version"`
	// Documents and Chunks count the indexed documents and their chunks published
	// again; Skipped the chunks left alone (low information or refused by the store:
	// no settings change their extraction).
	Documents int `json:"documents"`
	Chunks    int `json:"chunks"`
	Skipped   int `json:"skipped"`
}

// reindexBatch is how many chunk records are read at a time.
const reindexBatch = 256

// Reindex publishes again, to the extractor, every extracted chunk of every indexed
// document of a corpus, read back from the chunk collection: the same chunk ids and
// document versions, so that the grapher replaces each chunk's contribution when it
// merges the new extraction. A document replaced or deleted meanwhile is left to its
// new version (the stages drop chunks of a version that is no longer current). The
// message ids carry the settings version: publishing again under the same version
// within the bus's de-duplication window publishes nothing new.
func Reindex(ctx context.Context, b *bus.Bus, kv bus.KV, chunks ChunkReader, corpus string) (Reindexed, error) {
	out := Reindexed{Corpus: corpus}
	if err := events.ValidateCorpus(corpus); err != nil {
		return out, fmt.Errorf("%w: corpus: %w", ErrInvalid, err)
	}
	rec, err := Load(ctx, kv, corpus)
	if err != nil {
		return out, err
	}
	out.SettingsVersion = rec.Version
	docs, err := pipeline.ListDocuments(ctx, kv, corpus)
	if err != nil {
		return out, err
	}
	coll := schema.Collection(corpus, schema.Chunks)
	for _, d := range docs {
		if d.Deleted || d.State != pipeline.StateIndexed || d.ID == "" {
			continue
		}
		ids := d.Chunks.ChunkIDs(d.ID)
		if len(ids) == 0 {
			continue
		}
		out.Documents++
		for lo := 0; lo < len(ids); lo += reindexBatch {
			recs, err := chunks.Get(ctx, coll, ids[lo:min(len(ids), lo+reindexBatch)])
			if errors.Is(err, vectorstore.ErrNotFound) {
				break // no collection: nothing to extract
			}
			if err != nil {
				return out, fmt.Errorf("reading the chunks of %s: %w", d.ID, err)
			}
			for _, r := range recs {
				c, ok := chunkEvent(corpus, d, len(ids), r)
				if !ok {
					out.Skipped++
					continue
				}
				data, err := events.Encode(c)
				if err != nil {
					return out, fmt.Errorf("chunk %s: %w", r.ID, err)
				}
				msgID := c.MsgID() + ":settings:" + strconv.Itoa(rec.Version)
				if _, err := b.Publish(ctx, events.Subject(events.KindChunks, corpus), data, bus.WithMsgID(msgID)); err != nil {
					return out, fmt.Errorf("publishing chunk %s: %w", r.ID, err)
				}
				out.Chunks++
			}
		}
	}
	return out, nil
}

// chunkEvent is the chunk event the chunker published for a chunk record, or false
// for a chunk that is not extracted (its Skip is set).
func chunkEvent(corpus string, d pipeline.DocumentRecord, total int, r vectorstore.Record) (*events.Chunk, bool) {
	a := r.Attrs
	if a[schema.ChunkSkip] != "" {
		return nil, false
	}
	pos, err := strconv.Atoi(a[schema.ChunkPosition])
	if err != nil || pos < 0 || pos >= total {
		pos = 0
	}
	title, section := a[schema.ChunkTitle], a[schema.ChunkSection]
	_, body := schema.SplitChunkText(title, section, r.Text)
	var aliases []string
	if s := a[schema.ChunkSubjectAliases]; s != "" {
		aliases = strings.Split(s, "\n")
	}
	tokens, _ := chunking.CountTokens(body) // informational: 0 if it cannot be counted
	return &events.Chunk{Schema: events.SchemaChunk, Corpus: corpus, ID: r.ID, DocumentID: d.ID, DocumentTitle: title,
		Subject: a[schema.ChunkSubject], SubjectAliases: aliases, Position: pos, Total: total, Section: section,
		Text: body, Tokens: tokens, DocumentVersion: d.Version()}, true
}
