package bustest

import (
	"testing"

	"github.com/nats-io/nats.go"

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
