package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
)

// stageProgress counts, for one corpus, the messages of a stage's input that are not
// yet delivered (pending) and delivered but maybe not yet done (inFlight). The stage's
// one consumer serves every corpus, so the counts come from stream sequences: every
// message at or below the consumer's acknowledgement floor is done, every one above
// the highest delivered sequence is pending, and the ones between are counted in
// flight although some of them may be done already. The corpus is therefore reported
// complete exactly when it is, never before; total is the corpus's message count.
func stageProgress(ctx context.Context, b *bus.Bus, stage string, input events.Kind, corpus string, total uint64) (pending, inFlight uint64, err error) {
	stream, subject := StreamName(input), events.Subject(input, corpus)
	ci, err := b.ConsumerInfo(ctx, stream, Durable(stage))
	if errors.Is(err, bus.ErrNotFound) {
		return total, 0, nil // the stage has never run
	}
	if err != nil {
		return 0, 0, fmt.Errorf("reading the %s consumer: %w", stage, err)
	}
	if total == 0 {
		return 0, 0, nil
	}
	notDone, err := b.CountAfter(ctx, stream, subject, ci.AckFloorSeq)
	if err != nil || notDone == 0 {
		return 0, 0, err
	}
	pending, err = b.CountAfter(ctx, stream, subject, ci.DeliveredSeq)
	if err != nil {
		return 0, 0, err
	}
	return pending, notDone - min(pending, notDone), nil
}
