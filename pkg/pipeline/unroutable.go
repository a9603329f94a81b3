package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
)

// UnroutableCorpus is the corpus token of the dead-letter subject of messages published
// on a subject whose corpus token is invalid (graphrag.dlq.<stage>._unroutable). It is no
// valid corpus name, so it never mixes with a corpus's own dead letters; the original
// subject is in the Graphrag-Dlq-Subject header.
const UnroutableCorpus = "_unroutable"

// unroutableBatch is how many messages of an unroutable subject are moved at once.
const unroutableBatch = 256

// deadLetterUnroutable moves every message the stream holds on subject, whose corpus
// token is invalid (reason says why), to the stage's unroutable dead-letter subject, then
// purges what it moved from the stream. No consumer can be named after such a corpus, so
// nothing else would ever read, count or remove these messages; purged, the subject is no
// longer discovered. Replicas doing this at once write each message to the DLQ once (the
// stream sequence is its message id) and purge the same range. It returns how many
// messages it moved.
func deadLetterUnroutable(ctx context.Context, b *bus.Bus, stage, stream, subject string, reason error) (int, error) {
	c, err := b.JetStream().OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		return 0, fmt.Errorf("reading unroutable subject %s: %w", subject, err)
	}
	moved, last := 0, uint64(0)
	for {
		batch, err := c.FetchNoWait(unroutableBatch)
		if err != nil {
			return moved, fmt.Errorf("reading unroutable subject %s: %w", subject, err)
		}
		pending := uint64(0)
		for m := range batch.Messages() {
			meta, err := m.Metadata()
			if err != nil {
				return moved, fmt.Errorf("reading unroutable subject %s: %w", subject, err)
			}
			if err := publishUnroutable(ctx, b, stage, m, meta, reason); err != nil {
				return moved, err
			}
			moved, last, pending = moved+1, meta.Sequence.Stream, meta.NumPending
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, nats.ErrTimeout) {
			return moved, fmt.Errorf("reading unroutable subject %s: %w", subject, err)
		}
		if pending == 0 {
			break
		}
	}
	if moved == 0 {
		return 0, nil
	}
	s, err := b.JetStream().Stream(ctx, stream)
	if err != nil {
		return moved, fmt.Errorf("looking up stream %s: %w", stream, err)
	}
	// Sequence is exclusive: a message published meanwhile stays for the next look.
	if err := s.Purge(ctx, jetstream.WithPurgeSubject(subject), jetstream.WithPurgeSequence(last+1)); err != nil {
		return moved, fmt.Errorf("purging dead-lettered messages of %s: %w", subject, err)
	}
	return moved, nil
}

func publishUnroutable(ctx context.Context, b *bus.Bus, stage string, m jetstream.Msg, meta *jetstream.MsgMetadata, reason error) error {
	dl := nats.NewMsg(events.DeadLetterSubject(stage, UnroutableCorpus))
	dl.Data = m.Data()
	dl.Header.Set(bus.HeaderDLQReason, "unroutable: "+reason.Error())
	dl.Header.Set(bus.HeaderDLQSubject, m.Subject())
	dl.Header.Set(bus.HeaderDLQStream, meta.Stream)
	dl.Header.Set(bus.HeaderDLQStreamSeq, strconv.FormatUint(meta.Sequence.Stream, 10))
	dl.Header.Set(bus.HeaderDLQConsumer, stage)
	dl.Header.Set(bus.HeaderDLQDeliveries, "0")
	dl.Header.Set(bus.HeaderDLQTime, time.Now().UTC().Format(time.RFC3339Nano))
	id := meta.Stream + "." + strconv.FormatUint(meta.Sequence.Stream, 10) + ".unroutable." + stage
	if _, err := b.JetStream().PublishMsg(ctx, dl, jetstream.WithMsgID(id)); err != nil {
		return fmt.Errorf("dead-lettering unroutable message %d of %s: %w", meta.Sequence.Stream, m.Subject(), err)
	}
	return nil
}

// deadLetterUnroutable dead-letters the messages of a subject of the runner's input
// whose corpus token is invalid, once, and logs it.
func (r *Runner) deadLetterUnroutable(ctx context.Context, subject string, reason error) {
	n, err := deadLetterUnroutable(ctx, r.bus, r.stage, StreamName(r.input), subject, reason)
	if err != nil {
		r.log.Warn("dead-lettering messages on a subject with an invalid corpus; will retry", "subject", subject, "moved", n, "err", err)
		return
	}
	if n > 0 {
		r.log.Warn("dead-lettered messages on a subject with an invalid corpus", "subject", subject, "messages", n,
			"dlq", events.DeadLetterSubject(r.stage, UnroutableCorpus), "reason", reason)
	}
}
