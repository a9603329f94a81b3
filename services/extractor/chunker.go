package extractor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/chunking"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// Chunk record attributes in the vector store.
const (
	AttrDocument = "document_id"
	AttrTitle    = "title"
	AttrSection  = "section"
	AttrPosition = "position"
	AttrSkip     = "skip"
)

// docRecord remembers which chunks the current version of a document has, so that a new
// version can retire the chunks that disappeared.
type docRecord struct {
	ContentHash string   `json:"content_hash"`
	ChunkIDs    []string `json:"chunk_ids"`
}

func docKey(corpus, docID string) string { return "doc." + corpus + "." + events.Hash(docID)[:32] }

func (s *Service) handleDocument(ctx context.Context, corpus string, m *bus.Message) error {
	var d events.Document
	if err := events.Decode(m.Data, &d); err != nil {
		return bus.Permanent(fmt.Errorf("decoding document: %w", err))
	}
	if d.Corpus != corpus {
		return bus.Permanent(&events.FieldError{Field: "corpus", Problem: fmt.Sprintf("%q does not match subject corpus %q", d.Corpus, corpus)})
	}
	text := d.Text
	if d.Object != nil {
		b, err := s.deps.Bus.GetObject(ctx, bus.ObjectRef{Bucket: d.Object.Bucket, Name: d.Object.Name, Size: uint64(d.Object.Size), Digest: d.Object.Digest})
		if errors.Is(err, bus.ErrNotFound) {
			return bus.Permanent(fmt.Errorf("document %s: object %s/%s not found", d.ID, d.Object.Bucket, d.Object.Name))
		}
		if err != nil {
			return fmt.Errorf("document %s: fetching object: %w", d.ID, err)
		}
		text = string(b)
		d.ContentHash = events.Hash(text)
	}
	chunks, err := chunking.Split(d.ID, text, chunking.WithSize(s.cfg.ChunkTokens), chunking.WithOverlap(s.cfg.ChunkOverlap))
	if err != nil {
		return bus.Permanent(fmt.Errorf("document %s: chunking: %w", d.ID, err))
	}

	kv, err := s.deps.Bus.KV(ctx, pipeline.StateBucket)
	if err != nil {
		return err
	}
	prev, err := loadDocRecord(ctx, kv, corpus, d.ID)
	if err != nil {
		return err
	}

	coll := vectorstore.CollectionName(corpus, "chunks")
	if err := s.deps.Vectors.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: coll, Dim: s.dim, Lexical: true}); err != nil {
		return fmt.Errorf("ensuring chunk collection: %w", err)
	}
	ids := make([]string, len(chunks))
	for lo := 0; lo < len(chunks); lo += chunkBatch {
		batch := chunks[lo:min(len(chunks), lo+chunkBatch)]
		if err := s.writeChunks(ctx, corpus, coll, &d, batch, len(chunks)); err != nil {
			return err
		}
		for i, c := range batch {
			ids[lo+i] = c.ID
		}
	}
	s.chunks.Add(ctx, int64(len(chunks)))

	// Retire the chunks of the previous version that this one no longer has.
	stale := difference(prev.ChunkIDs, ids)
	if len(stale) > 0 {
		if err := s.deps.Vectors.Delete(ctx, coll, stale); err != nil {
			return fmt.Errorf("document %s: deleting %d stale chunks: %w", d.ID, len(stale), err)
		}
		for _, id := range stale {
			tomb := &events.Extraction{Schema: events.SchemaExtraction, Corpus: corpus, ChunkID: id, DocumentID: d.ID,
				Method: "removed", Skipped: "removed: the document was replaced"}
			if err := s.publish(ctx, events.KindExtractions, corpus, tomb, tomb.MsgID()+":"+d.ContentHash[:16]); err != nil {
				return err
			}
		}
	}
	b, _ := json.Marshal(docRecord{ContentHash: d.ContentHash, ChunkIDs: ids})
	if _, err := kv.Put(ctx, docKey(corpus, d.ID), b); err != nil {
		return fmt.Errorf("document %s: recording chunks: %w", d.ID, err)
	}
	s.log.DebugContext(ctx, "document chunked", "corpus", corpus, "document", d.ID, "chunks", len(chunks), "stale", len(stale))
	return nil
}

// chunkBatch is how many chunks are embedded, written and published at a time: a
// large document's chunks are never all embedded and indexed at once (a 20 MB
// document has ~8,800 chunks; one vector-store batch of them peaked at ~1 GB).
const chunkBatch = 128

// writeChunks embeds one batch of a document's chunks, writes them to the chunk
// collection and then publishes their events, so that a chunk event never precedes its
// record. A redelivered document writes the same records and message ids again.
func (s *Service) writeChunks(ctx context.Context, corpus, coll string, d *events.Document, batch []chunking.Chunk, total int) error {
	texts := make([]string, len(batch))
	skips := make([]string, len(batch))
	for i, c := range batch {
		texts[i] = ChunkText(d.Title, c.Section, c.Text)
		if sc := chunking.Information(c.Text); chunking.LowInformation(sc, s.cfg.MinInformation) {
			skips[i] = fmt.Sprintf("low information (score %.2f < %.2f: %s)", sc.Value, s.cfg.MinInformation, sc.Reason)
		}
	}
	vecs, err := s.deps.Embedder.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("document %s: embedding chunks: %w", d.ID, err)
	}
	recs := make([]vectorstore.Record, len(batch))
	for i, c := range batch {
		recs[i] = vectorstore.Record{ID: c.ID, Vector: vecs[i], Text: texts[i], Attrs: map[string]string{
			AttrDocument: d.ID, AttrTitle: d.Title, AttrSection: c.Section, AttrPosition: strconv.Itoa(c.Position), AttrSkip: skips[i],
		}}
	}
	if err := s.deps.Vectors.Upsert(ctx, coll, recs); err != nil {
		return fmt.Errorf("document %s: writing chunks: %w", d.ID, err)
	}
	for i, c := range batch {
		ev := &events.Chunk{Schema: events.SchemaChunk, Corpus: corpus, ID: c.ID, DocumentID: d.ID, DocumentTitle: d.Title,
			Position: c.Position, Total: total, Section: c.Section, Text: c.Text, Tokens: c.Tokens, Skip: skips[i]}
		if err := s.publish(ctx, events.KindChunks, corpus, ev, ev.MsgID()); err != nil {
			return err
		}
		if skips[i] != "" {
			s.skipped.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", "low_information")))
		}
	}
	return nil
}

// ChunkText is what is embedded, indexed and extracted for a chunk: a header with the
// document title and section path, then the chunk. The header puts the chunk's subject
// into both the dense and the lexical index (contextual chunk headers).
func ChunkText(title, section, text string) string {
	var h []string
	if title != "" {
		h = append(h, title)
	}
	if section != "" && section != title {
		h = append(h, section)
	}
	if len(h) == 0 {
		return text
	}
	return strings.Join(h, " › ") + "\n\n" + text
}

func loadDocRecord(ctx context.Context, kv jetstream.KeyValue, corpus, docID string) (docRecord, error) {
	var r docRecord
	e, err := kv.Get(ctx, docKey(corpus, docID))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("reading document record: %w", err)
	}
	if err := json.Unmarshal(e.Value(), &r); err != nil {
		return r, fmt.Errorf("decoding document record: %w", err)
	}
	return r, nil
}

func difference(a, b []string) []string {
	in := make(map[string]bool, len(b))
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if !in[x] {
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

func (s *Service) publish(ctx context.Context, k events.Kind, corpus string, e events.Event, msgID string) error {
	b, err := events.Encode(e)
	if err != nil {
		return bus.Permanent(err)
	}
	if _, err := s.deps.Bus.Publish(ctx, events.Subject(k, corpus), b, bus.WithMsgID(msgID)); err != nil {
		return fmt.Errorf("publishing %s: %w", e.SchemaName(), err)
	}
	return nil
}
