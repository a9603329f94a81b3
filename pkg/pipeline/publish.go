package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/schema"
)

// PublishDocument validates a document and publishes it to graphrag.documents.<corpus>
// with its content-derived message id, so publishing the same content twice stores it
// once. A document whose message would exceed the server's payload limit has its text
// moved to the schema.DocumentBucket object store first, and the event carries the reference.
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
	ack, err := b.Publish(ctx, events.Subject(events.KindDocuments, d.Corpus), data, bus.WithMsgID(d.MsgID()))
	if err != nil {
		return ack, fmt.Errorf("publishing document %s: %w", d.ID, err)
	}
	return ack, nil
}
