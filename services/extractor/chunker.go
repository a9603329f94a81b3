package extractor

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/chunking"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/offlinextract"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// The chunker orders the versions of a document by the stream sequence of their events
// (docs/adr/0022-document-versions.md). The document's record (pipeline.DocumentRecord)
// is written only by compare-and-set, and an event takes the document over only if its
// sequence is higher than the record's. Chunk ids carry the version, so the chunks of
// two versions never share an id: a version's chunks are written only by handlers of
// that version, and removed either by the handler that supersedes it (from the record's
// Retire list) or by a handler of that version that finds itself superseded after a
// write. No store write of a superseded version survives, whatever the interleaving of
// replicas, redeliveries and crashes.

// handleDocument dispatches an event of the document subject.
func (s *Service) handleDocument(ctx context.Context, corpus string, m *bus.Message) error {
	ev, err := events.DecodeDocumentEvent(m.Data)
	if err != nil {
		return bus.Permanent(fmt.Errorf("decoding document event: %w", err))
	}
	var evCorpus string
	switch e := ev.(type) {
	case *events.Document:
		evCorpus = e.Corpus
	case *events.DocumentDeleted:
		evCorpus = e.Corpus
	case *events.CorpusDropped:
		evCorpus = e.Corpus
	}
	if evCorpus != corpus {
		return bus.Permanent(&events.FieldError{Field: "corpus", Problem: fmt.Sprintf("%q does not match subject corpus %q", evCorpus, corpus)})
	}
	switch e := ev.(type) {
	case *events.DocumentDeleted:
		return s.deleteDocument(ctx, corpus, m.StreamSeq, e.ID, false)
	case *events.CorpusDropped:
		return s.dropCorpus(ctx, corpus, m.StreamSeq)
	default:
		return s.indexDocument(ctx, corpus, m, ev.(*events.Document))
	}
}

// version is one version of a document being indexed: its chunks and their set.
type version struct {
	doc    *events.Document
	text   string
	chunks []chunking.Chunk
	set    pipeline.ChunkSet
	fp     string
}

// indexDocument makes the version published at m.StreamSeq current, unless a later
// event owns the document already. A new version costs five reads and writes of its
// record: the claim (read, compare-and-set), the corpus's drop, the check after the
// last batch, the final compare-and-set.
func (s *Service) indexDocument(ctx context.Context, corpus string, m *bus.Message, d *events.Document) error {
	seq := m.StreamSeq
	ctx = llm.WithCacheScope(ctx, schema.CacheScope(corpus, d.ID))
	v, claimed, err := s.claim(ctx, corpus, m, d)
	if err != nil || !claimed {
		return err
	}
	// A drop published after this version but handled before our claim listed the
	// documents without us (or removed the record we found missing): apply it now.
	if dropped, err := s.droppedSince(ctx, corpus, seq); err != nil || dropped {
		if err != nil {
			return err
		}
		return s.applyDrop(ctx, corpus, d.ID)
	}
	if v == nil {
		s.log.DebugContext(ctx, "document unchanged", "corpus", corpus, "document", d.ID, "seq", seq)
		return nil
	}
	rec, rev, done, err := s.writeVersion(ctx, corpus, v)
	if err != nil || done {
		return err
	}
	return s.finishFrom(ctx, corpus, d.ID, seq, rec, rev)
}

// claim makes the event at m.StreamSeq the owner of the document's record, unless a
// later one owns it (then it handles the event as superseded and returns false). It
// returns the version to write, or nil when the event adopted the current chunks (the
// same content and chunking) or finds its own version already indexed.
func (s *Service) claim(ctx context.Context, corpus string, m *bus.Message, d *events.Document) (*version, bool, error) {
	seq := m.StreamSeq
	var v *version
	for {
		rec, rev, err := pipeline.LoadDocument(ctx, s.state, corpus, d.ID)
		if err != nil {
			return nil, false, err
		}
		if rec.Seq > seq {
			return nil, false, s.dropStale(ctx, corpus, m, d, rec)
		}
		if rev != 0 && rec.Seq == seq && rec.State == pipeline.StateIndexed {
			return nil, false, s.finishFrom(ctx, corpus, d.ID, seq, rec, rev) // a redelivery of a finished version
		}
		if v == nil {
			if v, err = s.prepare(ctx, d, seq); err != nil {
				return nil, false, err
			}
		}
		adopt := rev != 0 && rec.Seq < seq && !rec.Deleted && rec.State == pipeline.StateIndexed && rec.Fingerprint == v.fp
		if !adopt {
			if err := v.split(s.cfg); err != nil {
				return nil, false, err
			}
			if rev != 0 && rec.Seq == seq && rec.Chunks.Equal(v.set) {
				return v, true, nil // our own claim (a redelivery): write what it names
			}
		}
		next := pipeline.DocumentRecord{ID: d.ID, Seq: seq, State: pipeline.StateWriting, Chunks: v.set,
			Retire: rec.Superseded(v.set), Fingerprint: v.fp, Title: d.Title, ContentHash: d.ContentHash}
		if adopt {
			// Same content, same chunking: the current chunks are this version's too.
			next.Chunks, next.Retire, next.State = rec.Chunks, nil, pipeline.StateIndexed
		}
		_, err = pipeline.StoreDocument(ctx, s.state, corpus, next, rev)
		if errors.Is(err, bus.ErrConflict) {
			continue // another handler wrote the record: decide again on what it wrote
		}
		if err != nil {
			return nil, false, err
		}
		if adopt {
			return nil, true, nil
		}
		return v, true, nil
	}
}

// prepare reads the text of a document event and fingerprints it; split chunks it.
func (s *Service) prepare(ctx context.Context, d *events.Document, seq uint64) (*version, error) {
	text, err := s.documentText(ctx, d)
	if err != nil {
		return nil, err
	}
	v := &version{doc: d, text: text, set: pipeline.ChunkSet{Version: strconv.FormatUint(seq, 10)}}
	v.fp = events.Hash(d.Title, d.ContentType, d.ContentHash, strconv.Itoa(s.cfg.ChunkTokens), strconv.Itoa(s.cfg.ChunkOverlap),
		strconv.FormatFloat(s.cfg.MinInformation, 'g', -1, 64))[:32]
	return v, nil
}

// split chunks the version's text once.
func (v *version) split(cfg Config) error {
	if v.chunks != nil {
		return nil
	}
	chunks, err := chunking.Split(v.doc.ID, v.text, chunking.WithSize(cfg.ChunkTokens), chunking.WithOverlap(cfg.ChunkOverlap))
	if err != nil {
		return bus.Permanent(fmt.Errorf("document %s: chunking: %w", v.doc.ID, err))
	}
	var hashes strings.Builder
	for _, c := range chunks {
		hashes.WriteString(chunkHash(c))
	}
	v.chunks, v.set.Hashes = chunks, hashes.String()
	return nil
}

// chunkHash is the content hash a chunk id ends with (chunking.Chunk.ID).
func chunkHash(c chunking.Chunk) string { return c.ID[strings.LastIndexByte(c.ID, ':')+1:] }

// documentText returns the text of a document, from the object store when it is large,
// and sets its content hash.
func (s *Service) documentText(ctx context.Context, d *events.Document) (string, error) {
	if d.Object == nil {
		return d.Text, nil
	}
	b, err := s.deps.Bus.GetObject(ctx, bus.ObjectRef{Bucket: d.Object.Bucket, Name: d.Object.Name, Size: uint64(d.Object.Size), Digest: d.Object.Digest})
	if errors.Is(err, bus.ErrNotFound) {
		return "", bus.Permanent(fmt.Errorf("document %s: object %s/%s not found", d.ID, d.Object.Bucket, d.Object.Name))
	}
	if err != nil {
		return "", fmt.Errorf("document %s: fetching object: %w", d.ID, err)
	}
	d.ContentHash = events.Hash(string(b))
	return string(b), nil
}

// writeVersion writes the chunks of a claimed version in batches, reading the record
// after each: if another event took the document over meanwhile, it removes what it
// wrote and reports done (the new owner retires the rest). The read after a write is
// what makes a late write harmless. It returns the record it read last.
func (s *Service) writeVersion(ctx context.Context, corpus string, v *version) (pipeline.DocumentRecord, uint64, bool, error) {
	coll := schema.Collection(corpus, schema.Chunks)
	if err := s.deps.Vectors.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: coll, Dim: s.dim, Lexical: true}); err != nil {
		return pipeline.DocumentRecord{}, 0, false, fmt.Errorf("ensuring chunk collection: %w", err)
	}
	subject := offlinextract.Subject(v.doc.Title, v.text)
	for lo := 0; ; lo += chunkBatch {
		batch := v.chunks[lo:min(len(v.chunks), lo+chunkBatch)]
		if err := s.writeChunks(ctx, corpus, coll, v, subject, batch); err != nil {
			return pipeline.DocumentRecord{}, 0, false, err
		}
		cur, rev, err := pipeline.LoadDocument(ctx, s.state, corpus, v.doc.ID)
		if err != nil {
			return cur, 0, false, err
		}
		if cur.Version() != v.set.Version {
			s.log.DebugContext(ctx, "version superseded while written", "corpus", corpus, "document", v.doc.ID,
				"version", v.set.Version, "by", cur.Seq)
			return cur, rev, true, s.removeChunks(ctx, corpus, v.doc.ID, []pipeline.ChunkSet{v.set}, cur.Chunks)
		}
		if lo+chunkBatch >= len(v.chunks) {
			instruments().chunks.Add(ctx, int64(len(v.chunks)))
			return cur, rev, false, nil
		}
	}
}

// dropStale handles an event that a later one has superseded. Its first delivery has
// written nothing (a handler writes only after its claim), so it is acknowledged at
// once; a redelivery may follow a crash between a write and the check after it, so it
// removes whatever chunks of its version are not current.
func (s *Service) dropStale(ctx context.Context, corpus string, m *bus.Message, d *events.Document, cur pipeline.DocumentRecord) error {
	mine := strconv.FormatUint(m.StreamSeq, 10)
	if m.Deliveries <= 1 || cur.Version() == mine {
		return nil
	}
	v, err := s.prepare(ctx, d, m.StreamSeq)
	if err == nil {
		err = v.split(s.cfg)
	}
	if err != nil {
		if bus.IsPermanent(err) {
			return nil // nothing could have been written from it either
		}
		return err
	}
	return s.removeChunks(ctx, corpus, d.ID, []pipeline.ChunkSet{v.set}, cur.Chunks)
}

// finish completes the event at seq once its own writes are done: it retires the chunk
// sets the record lists, one at a time, taking each off the list as soon as it is
// retired (a later owner inherits only what is left), drops the document's cache
// entries if it is deleted, and marks the record indexed (or deleted). It stops as soon
// as seq no longer owns the record.
func (s *Service) finish(ctx context.Context, corpus, docID string, seq uint64) error {
	rec, rev, err := pipeline.LoadDocument(ctx, s.state, corpus, docID)
	if err != nil {
		return err
	}
	return s.finishFrom(ctx, corpus, docID, seq, rec, rev)
}

// finishFrom is finish starting from a record just read at revision rev.
func (s *Service) finishFrom(ctx context.Context, corpus, docID string, seq uint64, rec pipeline.DocumentRecord, rev uint64) error {
	for {
		if rev == 0 || rec.Seq != seq {
			return nil
		}
		final := pipeline.StateIndexed
		if rec.Deleted {
			final = pipeline.StateDeleted
		}
		if rec.State == final && len(rec.Retire) == 0 {
			return nil
		}
		if len(rec.Retire) > 0 {
			if err := s.retire(ctx, corpus, docID, rec.Retire[0], rec.Chunks, seq); err != nil {
				return err
			}
			rec.Retire = rec.Retire[1:]
		}
		if len(rec.Retire) == 0 {
			if rec.Deleted {
				if err := s.forgetCache(ctx, schema.CacheScope(corpus, docID)); err != nil {
					return err
				}
			}
			rec.State = final
		}
		if _, err := pipeline.StoreDocument(ctx, s.state, corpus, rec, rev); err != nil && !errors.Is(err, bus.ErrConflict) {
			return err
		}
		var err error
		if rec, rev, err = pipeline.LoadDocument(ctx, s.state, corpus, docID); err != nil {
			return err
		}
	}
}

// retire removes the chunks of a superseded version from the chunk collection and
// publishes a removal for each, so that the grapher removes their contributions. The
// chunks of keep (the current version) are never touched.
func (s *Service) retire(ctx context.Context, corpus, docID string, set, keep pipeline.ChunkSet, seq uint64) error {
	if err := s.removeChunks(ctx, corpus, docID, []pipeline.ChunkSet{set}, keep); err != nil {
		return err
	}
	for _, id := range set.ChunkIDs(docID) {
		tomb := &events.Extraction{Schema: events.SchemaExtraction, Corpus: corpus, ChunkID: id, DocumentID: docID,
			Method: events.MethodRemoved, Skipped: "removed: the document was replaced or deleted", DocumentVersion: set.Version}
		msgID := tomb.MsgID()
		if set.Version == "" {
			// An unversioned chunk id can be written again after its removal: the
			// retiring event's sequence keeps the next removal from being a duplicate.
			msgID += ":" + strconv.FormatUint(seq, 10)
		}
		if err := s.publish(ctx, events.KindExtractions, corpus, tomb, msgID); err != nil {
			return err
		}
	}
	return nil
}

// removeChunks deletes the records of the chunks of sets, except those of keep, from
// the chunk collection.
func (s *Service) removeChunks(ctx context.Context, corpus, docID string, sets []pipeline.ChunkSet, keep pipeline.ChunkSet) error {
	current := map[string]bool{}
	for _, id := range keep.ChunkIDs(docID) {
		current[id] = true
	}
	var ids []string
	for _, set := range sets {
		for _, id := range set.ChunkIDs(docID) {
			if !current[id] {
				ids = append(ids, id)
			}
		}
	}
	coll := schema.Collection(corpus, schema.Chunks)
	if err := pipeline.ReleaseQuarantined(ctx, s.state, corpus, pipeline.StageChunker, coll, ids); err != nil {
		return fmt.Errorf("document %s: %w", docID, err)
	}
	for lo := 0; lo < len(ids); lo += 512 {
		batch := ids[lo:min(len(ids), lo+512)]
		err := s.deps.Vectors.Delete(ctx, coll, batch)
		if errors.Is(err, vectorstore.ErrNotFound) {
			return nil // no collection: nothing was ever written
		}
		if err != nil {
			return fmt.Errorf("document %s: deleting %d chunks: %w", docID, len(batch), err)
		}
	}
	return nil
}

// chunkBatch is how many chunks are embedded, written and published at a time: a
// large document's chunks are never all embedded and indexed at once (a 20 MB
// document has ~8,800 chunks; one vector-store batch of them peaked at ~1 GB).
const chunkBatch = 128

// writeChunks embeds one batch of a version's chunks, writes them to the chunk
// collection and then publishes their events, so that a chunk event never precedes its
// record. A redelivered version writes the same records and message ids again.
func (s *Service) writeChunks(ctx context.Context, corpus, coll string, v *version, subject offlinextract.DocumentSubject, batch []chunking.Chunk) error {
	if len(batch) == 0 {
		return nil
	}
	d := v.doc
	texts := make([]string, len(batch))
	skips := make([]string, len(batch))
	ids := make([]string, len(batch))
	for i, c := range batch {
		texts[i] = schema.ChunkText(d.Title, c.Section, c.Text)
		ids[i] = pipeline.ChunkID(d.ID, c.Position, chunkHash(c), v.set.Version)
		if sc := chunking.Information(c.Text); chunking.LowInformation(sc, s.cfg.MinInformation) {
			skips[i] = fmt.Sprintf("low information (score %.2f < %.2f: %s)", sc.Value, s.cfg.MinInformation, sc.Reason)
		}
	}
	vecs, err := s.embedder.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("document %s: embedding chunks: %w", d.ID, err)
	}
	recs := make([]vectorstore.Record, len(batch))
	for i, c := range batch {
		recs[i] = vectorstore.Record{ID: ids[i], Vector: vecs[i], Text: texts[i], Attrs: map[string]string{
			schema.ChunkDocumentID: d.ID, schema.ChunkTitle: d.Title, schema.ChunkSection: c.Section,
			schema.ChunkPosition: strconv.Itoa(c.Position), schema.ChunkSkip: skips[i],
			schema.ChunkSubject: subject.Name, schema.ChunkSubjectAliases: strings.Join(subject.Aliases, "\n"),
		}}
	}
	refused, err := vectorstore.UpsertValid(ctx, s.deps.Vectors, coll, recs)
	if err != nil {
		return fmt.Errorf("document %s: writing chunks: %w", d.ID, err)
	}
	if err := s.quarantineChunks(ctx, corpus, coll, d.ID, ids, skips, refused); err != nil {
		return err
	}
	for i, c := range batch {
		ev := &events.Chunk{Schema: events.SchemaChunk, Corpus: corpus, ID: ids[i], DocumentID: d.ID, DocumentTitle: d.Title,
			Subject: subject.Name, SubjectAliases: subject.Aliases, Position: c.Position, Total: len(v.chunks), Section: c.Section,
			Text: c.Text, Tokens: c.Tokens, Skip: skips[i], DocumentVersion: v.set.Version}
		if err := s.publish(ctx, events.KindChunks, corpus, ev, ev.MsgID()); err != nil {
			return err
		}
		switch {
		case strings.HasPrefix(skips[i], quarantinedSkip):
			instruments().skipped.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", "quarantined")))
		case skips[i] != "":
			instruments().skipped.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", "low_information")))
		}
	}
	return nil
}

// quarantineChunks records the chunks the store refused as invalid (pipeline.Quarantine)
// and marks them skipped, with the reason: their events are still published, so that
// every chunk of the document gets its extraction and the document completes without
// them (a chunk without a record is not searched, so it is not extracted either).
func (s *Service) quarantineChunks(ctx context.Context, corpus, coll, docID string, ids, skips []string, refused []vectorstore.Refused) error {
	if len(refused) == 0 {
		return nil
	}
	if err := pipeline.Quarantine(ctx, s.state, corpus, pipeline.StageChunker, coll, refused); err != nil {
		return fmt.Errorf("document %s: %w", docID, err)
	}
	reasons := make(map[string]string, len(refused))
	for _, r := range refused {
		reasons[r.ID] = r.Err.Error()
	}
	for i, id := range ids {
		if reason, ok := reasons[id]; ok {
			skips[i] = clip(quarantinedSkip+"refused by the vector store: "+reason, maxSkip)
			s.log.WarnContext(ctx, "chunk record quarantined", "corpus", corpus, "document", docID, "chunk", id, "reason", reason)
		}
	}
	return nil
}

// maxSkip bounds the reason a quarantined chunk's event carries.
const maxSkip = 512

// quarantinedSkip begins the Skip of a chunk whose record the store refused.
const quarantinedSkip = "quarantined: "

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
