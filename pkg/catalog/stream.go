package catalog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/pipeline"
)

// fetchWait bounds the wait for the next batch of a stream read; reads stop early when
// the server says nothing is left, so it is only spent when messages vanish meanwhile.
const fetchWait = 2 * time.Second

// readStream calls fn with every message of stream on subject (wildcards allowed) at
// or after sequence start (0: from the first), oldest first, until the stream holds
// no more, fn returns false, or limit messages were read (truncated is then true).
// Callers check that there is something to read first: an empty read waits fetchWait.
func (c *Catalog) readStream(ctx context.Context, stream, subject string, start uint64, limit int, fn func(jetstream.Msg) bool) (truncated bool, err error) {
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}}
	if start > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, start
	}
	cons, err := c.bus.JetStream().OrderedConsumer(ctx, stream, cfg)
	if err != nil {
		return false, fmt.Errorf("reading %s of stream %s: %w", subject, stream, err)
	}
	read := 0
	for {
		fctx, cancel := context.WithTimeout(ctx, fetchWait)
		batch, err := cons.Fetch(min(256, limit-read), jetstream.FetchContext(fctx))
		if err != nil {
			cancel()
			return false, fmt.Errorf("reading %s of stream %s: %w", subject, stream, err)
		}
		got := 0
		last := false
		for m := range batch.Messages() {
			got++
			read++
			meta, err := m.Metadata()
			if err != nil {
				cancel()
				return false, fmt.Errorf("reading %s of stream %s: %w", subject, stream, err)
			}
			if !fn(m) {
				cancel()
				return false, nil
			}
			if last = meta.NumPending == 0; last {
				break // the batch would wait for messages that will not come
			}
		}
		cancel()
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) {
			return false, fmt.Errorf("reading %s of stream %s: %w", subject, stream, err)
		}
		if err := ctx.Err(); err != nil {
			return false, fmt.Errorf("reading %s of stream %s: %w", subject, stream, err)
		}
		if got == 0 || last {
			return false, nil
		}
		if read >= limit {
			return true, nil
		}
	}
}

// deadLetter is one dead-lettered message of a corpus.
type deadLetter struct {
	stage, reason string
	documentID    string // "" when the event names no document (a community)
	title         string
	at            time.Time
}

// deadLetters reads the dead letters of a corpus, oldest first, at most limit.
func (c *Catalog) deadLetters(ctx context.Context, corpus string, limit int) ([]deadLetter, bool, error) {
	var out []deadLetter
	truncated, err := c.readStream(ctx, pipeline.DLQStream, events.SubjectPrefix+".dlq.*."+corpus, 0, limit, func(m jetstream.Msg) bool {
		out = append(out, deadLetterOf(m))
		return true
	})
	if err != nil {
		return nil, false, fmt.Errorf("reading the dead letters of %s: %w", corpus, err)
	}
	return out, truncated, nil
}

func deadLetterOf(m jetstream.Msg) deadLetter {
	h := m.Headers()
	d := deadLetter{reason: h.Get(bus.HeaderDLQReason)}
	if parts := strings.Split(m.Subject(), "."); len(parts) == 4 {
		d.stage = parts[2]
	}
	if t, err := time.Parse(time.RFC3339Nano, h.Get(bus.HeaderDLQTime)); err == nil {
		d.at = t
	} else if meta, err := m.Metadata(); err == nil {
		d.at = meta.Timestamp
	}
	d.documentID, d.title = eventDocument(m.Data())
	return d
}
