package bustest

import (
	"context"
	"errors"
	"strconv"
	"strings"
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

// Cluster is a JetStream cluster of in-process servers on loopback, each with its own
// store and ports, whose servers a test stops and starts again (on the same store and
// ports) to see leaders elected and a node lost.
type Cluster struct {
	tb      testing.TB
	cfgs    []natsembed.Config
	servers []*natsembed.Server // nil while stopped
}

// StartCluster starts a cluster of n servers (nats-1 … nats-n) and waits until its
// JetStream has a meta leader; it is shut down when the test ends.
func StartCluster(tb testing.TB, n int) *Cluster {
	tb.Helper()
	ports, err := natsembed.FreePorts(2 * n)
	if err != nil {
		tb.Fatalf("bustest: %v", err)
	}
	routes := make([]string, n)
	for i := range n {
		routes[i] = "nats://127.0.0.1:" + strconv.Itoa(ports[n+i])
	}
	c := &Cluster{tb: tb, cfgs: make([]natsembed.Config, n), servers: make([]*natsembed.Server, n)}
	for i := range n {
		c.cfgs[i] = natsembed.Config{DataDir: tb.TempDir(), Port: ports[i], Name: "nats-" + strconv.Itoa(i+1),
			Cluster: &natsembed.Cluster{Name: "graphrag", Port: ports[n+i], Routes: routes}}
	}
	tb.Cleanup(func() {
		for i := range c.servers {
			c.Stop(i)
		}
	})
	for i := range n {
		c.Start(i)
	}
	c.waitMetaLeader()
	return c
}

// URL lists every server's client URL, as a client of a cluster is configured.
func (c *Cluster) URL() string {
	urls := make([]string, len(c.cfgs))
	for i, cfg := range c.cfgs {
		urls[i] = "nats://127.0.0.1:" + strconv.Itoa(cfg.Port)
	}
	return strings.Join(urls, ",")
}

// Name is the server name of server i.
func (c *Cluster) Name(i int) string { return c.cfgs[i].Name }

// Start starts server i (again) on its store and ports.
func (c *Cluster) Start(i int) {
	c.tb.Helper()
	if c.servers[i] != nil {
		return
	}
	s, err := natsembed.Start(c.cfgs[i])
	if err != nil {
		c.tb.Fatalf("bustest: starting %s: %v", c.cfgs[i].Name, err)
	}
	c.servers[i] = s
}

// Stop shuts server i down; the others elect new leaders for what it led.
func (c *Cluster) Stop(i int) {
	if s := c.servers[i]; s != nil {
		s.Shutdown()
		c.servers[i] = nil
	}
}

// StreamLeader is the index of the server leading stream (a key-value bucket's stream
// is KV_<bucket>), waiting up to 30 s for one.
func (c *Cluster) StreamLeader(b *bus.Bus, stream string) int {
	c.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		if s, err := b.JetStream().Stream(ctx, stream); err == nil {
			if info, err := s.Info(ctx); err == nil && info.Cluster != nil {
				for i, cfg := range c.cfgs {
					if cfg.Name == info.Cluster.Leader {
						return i
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			c.tb.Fatalf("bustest: no leader of %s", stream)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitMetaLeader waits up to 30 s until JetStream answers account info, which needs a
// meta leader.
func (c *Cluster) waitMetaLeader() {
	c.tb.Helper()
	nc, err := nats.Connect(c.URL(), nats.Name(c.tb.Name()))
	if err != nil {
		c.tb.Fatalf("bustest: connecting to %s: %v", c.URL(), err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		c.tb.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := js.AccountInfo(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			c.tb.Fatalf("bustest: the cluster elected no meta leader: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
