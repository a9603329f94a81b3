package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/schema"
)

// PublishDocument validates a document and publishes it to graphrag.documents.<corpus>.
// A document whose message would exceed the server's payload limit has its text moved
// to the schema.DocumentBucket object store first, and the event carries the reference.
//
// Every call publishes a new version (the message id only de-duplicates a retry of this
// call): a content-derived id would make the stream drop a re-publication of the same
// text after a deletion, and the document would stay deleted. A version whose content
// and chunking equal the current one's costs the chunker one record update.
func PublishDocument(ctx context.Context, b *bus.Bus, d events.Document) (bus.PubAck, error) {
	d.Schema = events.SchemaDocument
	if d.Text != "" {
		d.ContentHash = events.Hash(d.Text)
	}
	if err := d.Validate(); err != nil {
		return bus.PubAck{}, fmt.Errorf("document %s: %w", d.ID, err)
	}
	data, err := events.Encode(&d)
	if err != nil {
		return bus.PubAck{}, err
	}
	// Leave room for headers (trace context, message id).
	if limit := b.MaxPayload() - 4096; len(data) > limit {
		ref, err := b.PutObject(ctx, schema.DocumentBucket, schema.DocumentObject(d.Corpus, d.ContentHash), strings.NewReader(d.Text))
		if err != nil {
			return bus.PubAck{}, fmt.Errorf("document %s: storing %d bytes in the object store: %w", d.ID, len(d.Text), err)
		}
		d.Object = &events.ObjectRef{Bucket: ref.Bucket, Name: ref.Name, Size: int64(ref.Size), Digest: ref.Digest}
		d.Text = ""
		if data, err = events.Encode(&d); err != nil {
			return bus.PubAck{}, err
		}
	}
	ack, err := b.Publish(ctx, events.Subject(events.KindDocuments, d.Corpus), data, bus.WithMsgID(d.MsgID()+":"+NewEventID()))
	if err != nil {
		return ack, fmt.Errorf("publishing document %s: %w", d.ID, err)
	}
	return ack, nil
}

// Known says what the pipeline knew of a document when its deletion was published.
type Known string

// Values of Known.
const (
	// KnownIndexed: a version of the document is indexed (or being indexed).
	KnownIndexed Known = "indexed"
	// KnownDeleted: the document is already deleted; the deletion changes nothing
	// unless a version published meanwhile is still on its way.
	KnownDeleted Known = "deleted"
	// KnownUnknown: the chunker has never seen the id. The deletion changes nothing
	// unless a version published meanwhile is still on its way (then it deletes it).
	KnownUnknown Known = "unknown"
)

// Deletion is the receipt of PublishDeletion.
type Deletion struct {
	// EventID identifies the deletion event (the HTTP API answers it).
	EventID string `json:"event_id"`
	Corpus  string `json:"corpus"`
	ID      string `json:"id"`
	// Seq is the stream sequence of the event: every version of the document
	// published before it is deleted, every one published after it is indexed.
	Seq uint64 `json:"seq"`
	// Known is the state of the document when the event was published.
	Known Known `json:"known"`
}

// PublishDeletion publishes a graphrag.document.deleted.v1 event for one document. The
// pipeline then removes every version of the document the stream accepted before this
// event from every store (chunks, vectors, postings, graph contributions, entities and
// relationships left without mention, the entity records and community reports that
// change, the LLM cache entries of its content). It is asynchronous: the receipt says
// the deletion is ordered, not done; `graphrag status` shows the cascade like indexing.
// Deleting an unknown id is not an error: the receipt says KnownUnknown and the
// pipeline changes nothing. Repeating a deletion is harmless.
func PublishDeletion(ctx context.Context, b *bus.Bus, corpus, docID, reason string) (Deletion, error) {
	ev := &events.DocumentDeleted{Schema: events.SchemaDocumentDeleted, Corpus: corpus, ID: docID, EventID: NewEventID(), Reason: reason}
	data, err := events.Encode(ev)
	if err != nil {
		return Deletion{}, fmt.Errorf("deleting document %s: %w", docID, err)
	}
	known := KnownUnknown
	if kv, err := b.KV(ctx, schema.StateBucket); err == nil {
		rec, rev, err := LoadDocument(ctx, kv, corpus, docID)
		switch {
		case err != nil:
			return Deletion{}, fmt.Errorf("deleting document %s: %w", docID, err)
		case rev != 0 && rec.Deleted:
			known = KnownDeleted
		case rev != 0 && rec.Known():
			known = KnownIndexed
		}
	}
	ack, err := b.Publish(ctx, events.Subject(events.KindDocuments, corpus), data, bus.WithMsgID(ev.MsgID()))
	if err != nil {
		return Deletion{}, fmt.Errorf("publishing the deletion of document %s: %w", docID, err)
	}
	return Deletion{EventID: ev.EventID, Corpus: corpus, ID: docID, Seq: ack.Sequence, Known: known}, nil
}

// Drop is the receipt of DropCorpus.
type Drop struct {
	EventID string `json:"event_id"`
	Corpus  string `json:"corpus"`
	// Seq is the stream sequence of the event: every document published before it
	// is deleted.
	Seq uint64 `json:"seq"`
}

// DropCorpus publishes a graphrag.corpus.dropped.v1 event: the pipeline deletes every
// document of the corpus published before it, each through the same cascade as
// PublishDeletion, then the corpus's LLM cache entries and large-document objects.
// Documents published after the event are indexed as usual, so a corpus can be
// dropped and refilled without waiting. Like a deletion it is asynchronous.
func DropCorpus(ctx context.Context, b *bus.Bus, corpus, reason string) (Drop, error) {
	ev := &events.CorpusDropped{Schema: events.SchemaCorpusDropped, Corpus: corpus, EventID: NewEventID(), Reason: reason}
	data, err := events.Encode(ev)
	if err != nil {
		return Drop{}, fmt.Errorf("dropping corpus %s: %w", corpus, err)
	}
	ack, err := b.Publish(ctx, events.Subject(events.KindDocuments, corpus), data, bus.WithMsgID(ev.MsgID()))
	if err != nil {
		return Drop{}, fmt.Errorf("publishing the drop of corpus %s: %w", corpus, err)
	}
	return Drop{EventID: ev.EventID, Corpus: corpus, Seq: ack.Sequence}, nil
}

// NewEventID returns a random id for an event: 16 hex digits.
func NewEventID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
