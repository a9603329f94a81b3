package bus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// StoredMessage is a message as a stream stores it, read without a consumer of the
// caller's own (ReadStream).
type StoredMessage struct {
	Subject string
	Data    []byte
	Header  nats.Header
	Seq     uint64
	// Time is when the stream stored it.
	Time time.Time
}

// readWait bounds the wait for the next batch of a ReadStream; a read stops as soon as
// the server says nothing is left, so the wait is only spent when messages vanish
// meanwhile (removed by the stream's limits).
const readWait = 2 * time.Second

// ReadStream calls fn with the messages of stream on subject (wildcards allowed) at or
// after sequence start (0: from the first), oldest first, until the stream holds no
// more, fn returns false, or limit messages were read (truncated is then true). It
// reads through a short-lived ordered consumer, which acknowledges nothing. A read
// where nothing matches waits readWait: callers count first (SubjectCounts).
func (b *Bus) ReadStream(ctx context.Context, stream, subject string, start uint64, limit int, fn func(StoredMessage) bool) (truncated bool, err error) {
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}}
	if start > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, start
	}
	cons, err := b.js.OrderedConsumer(ctx, stream, cfg)
	if err != nil {
		return false, fmt.Errorf("reading %s of stream %s: %w", subject, stream, translate(err))
	}
	read := 0
	for read < limit {
		done, n, err := readBatch(ctx, cons, min(256, limit-read), fn)
		read += n
		if err != nil {
			return false, fmt.Errorf("reading %s of stream %s: %w", subject, stream, err)
		}
		if done {
			return false, nil
		}
	}
	return true, nil
}

// readBatch reads up to n messages; done is true when fn asked to stop or the stream
// holds no more.
func readBatch(ctx context.Context, cons jetstream.Consumer, n int, fn func(StoredMessage) bool) (done bool, read int, err error) {
	fctx, cancel := context.WithTimeout(ctx, readWait)
	defer cancel()
	batch, err := cons.Fetch(n, jetstream.FetchContext(fctx))
	if err != nil {
		return false, 0, err
	}
	for m := range batch.Messages() {
		read++
		meta, err := m.Metadata()
		if err != nil {
			return false, read, err
		}
		if !fn(StoredMessage{Subject: m.Subject(), Data: m.Data(), Header: m.Headers(), Seq: meta.Sequence.Stream, Time: meta.Timestamp}) {
			return true, read, nil
		}
		if meta.NumPending == 0 {
			return true, read, nil // the batch would wait for messages that will not come
		}
	}
	if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) {
		return false, read, err
	}
	if err := ctx.Err(); err != nil {
		return false, read, err
	}
	return read == 0, read, nil
}

// KVRecord is a key's value with its revision and when it was written.
type KVRecord struct {
	Value    []byte
	Revision uint64
	Created  time.Time
}

// ReadKV reads key from bucket with the time it was written; ErrNotFound when the key
// or the bucket does not exist.
func (b *Bus) ReadKV(ctx context.Context, bucket, key string) (KVRecord, error) {
	kv, err := b.keyValue(ctx, bucket)
	if err != nil {
		return KVRecord{}, err
	}
	e, err := kv.Get(ctx, key)
	if err != nil {
		return KVRecord{}, fmt.Errorf("reading %s from bucket %s: %w", key, bucket, translate(err))
	}
	return KVRecord{Value: e.Value(), Revision: e.Revision(), Created: e.Created()}, nil
}

// FirstMessage returns the first message of stream on subject at or after sequence from
// (0: the first), in one request and without a consumer; ErrNotFound when there is none.
func (b *Bus) FirstMessage(ctx context.Context, stream, subject string, from uint64) (StoredMessage, error) {
	s, err := b.js.Stream(ctx, stream)
	if err != nil {
		return StoredMessage{}, fmt.Errorf("reading stream %s: %w", stream, translate(err))
	}
	m, err := s.GetMsg(ctx, max(from, 1), jetstream.WithGetMsgSubject(subject))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return StoredMessage{}, fmt.Errorf("%w: no message on %s in stream %s from sequence %d", ErrNotFound, subject, stream, from)
	}
	if err != nil {
		return StoredMessage{}, fmt.Errorf("reading the first message on %s in stream %s: %w", subject, stream, err)
	}
	return StoredMessage{Subject: m.Subject, Data: m.Data, Header: m.Header, Seq: m.Sequence, Time: m.Time}, nil
}
