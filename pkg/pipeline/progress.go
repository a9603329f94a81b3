package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
)

// stageProgress counts, of a corpus's messages of a stage's input stored under one
// subject, those not yet delivered (pending) and delivered but maybe not yet done
// (inFlight). The consumer that reads the subject (the stage's, or its shard's) serves
// many corpora, so the counts come from stream sequences: every
// message at or below the consumer's acknowledgement floor is done, every one above
// the highest delivered sequence is pending, and the ones between are counted in
// flight although some of them may be done already. The corpus is therefore reported
// complete exactly when it is, never before; total is the corpus's message count.
func stageProgress(ctx context.Context, b *bus.Bus, stage string, input events.Kind, subject string, total uint64) (pending, inFlight uint64, err error) {
	stream := StreamName(input)
	ci, err := b.ConsumerInfo(ctx, stream, subjectDurable(stage, subject))
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
