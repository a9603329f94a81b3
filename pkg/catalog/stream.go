package catalog

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/pipeline"
)

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
	truncated, err := c.bus.ReadStream(ctx, pipeline.DLQStream, events.SubjectPrefix+".dlq.*."+corpus, 0, limit, func(m bus.StoredMessage) bool {
		out = append(out, deadLetterOf(m))
		return true
	})
	if err != nil {
		return nil, false, fmt.Errorf("reading the dead letters of %s: %w", corpus, err)
	}
	return out, truncated, nil
}

func deadLetterOf(m bus.StoredMessage) deadLetter {
	d := deadLetter{reason: m.Header.Get(bus.HeaderDLQReason), at: m.Time.UTC()}
	if parts := strings.Split(m.Subject, "."); len(parts) == 4 {
		d.stage = parts[2]
	}
	if t, err := time.Parse(time.RFC3339Nano, m.Header.Get(bus.HeaderDLQTime)); err == nil {
		d.at = t.UTC()
	}
	d.documentID, d.title = eventDocument(m.Data)
	return d
}
