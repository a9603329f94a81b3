package bustest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/natsembed"
)

// StartServer starts an embedded JetStream server on a random loopback port
// with its store in a temporary directory; it is shut down when the test ends.
func StartServer(tb testing.TB) *natsembed.Server {
	tb.Helper()
	s, err := natsembed.Start(natsembed.Config{DataDir: tb.TempDir(), Port: -1})
	if err != nil {
		tb.Fatalf("bustest: starting NATS server: %v", err)
	}
	tb.Cleanup(s.Shutdown)
	return s
}

// Connect opens a client connection to s, closed when the test ends (before
// the server shuts down, since cleanups run last-in first-out).
func Connect(tb testing.TB, s *natsembed.Server) *nats.Conn {
	tb.Helper()
	nc, err := nats.Connect(s.ClientURL(), nats.Name(tb.Name()))
	if err != nil {
		tb.Fatalf("bustest: connecting to %s: %v", s.ClientURL(), err)
	}
	tb.Cleanup(nc.Close)
	return nc
}

// Messages returns the data of every message the stream holds on subject,
// oldest first, so that tests read what was published without a consumer of
// their own (and without importing the JetStream client).
func Messages(tb testing.TB, b *bus.Bus, stream, subject string) [][]byte {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	counts, err := b.SubjectCounts(ctx, stream, subject)
	if err != nil {
		tb.Fatalf("bustest: counting %s: %v", subject, err)
	}
	want := int(counts[subject])
	out := make([][]byte, 0, want)
	if want == 0 {
		return out
	}
	c, err := b.JetStream().OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		tb.Fatalf("bustest: reading %s: %v", subject, err)
	}
	for len(out) < want {
		batch, err := c.Fetch(want-len(out), jetstream.FetchMaxWait(time.Second))
		if err != nil {
			tb.Fatalf("bustest: reading %s: %v", subject, err)
		}
		for m := range batch.Messages() {
			out = append(out, m.Data())
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, nats.ErrTimeout) {
			tb.Fatalf("bustest: reading %s: %v", subject, err)
		}
		if ctx.Err() != nil {
			tb.Fatalf("bustest: read %d of the %d messages on %s", len(out), want, subject)
		}
	}
	return out
}
