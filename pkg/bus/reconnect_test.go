package bus_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/natsembed"
)

// TestConsumerSurvivesServerRestart: the connection reconnects by itself and
// the consumer keeps pulling from the restarted server.
func TestConsumerSurvivesServerRestart(t *testing.T) {
	cfg := natsembed.Config{DataDir: t.TempDir(), Port: freePort(t)}
	srv, err := natsembed.Start(cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer func() { srv.Shutdown() }()

	ctx := testCtx(t)
	nc, err := bus.Connect(ctx, bus.ConnConfig{URL: srv.ClientURL(), ReconnectWait: 20 * time.Millisecond, MaxReconnectWait: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer nc.Close()
	b, err := bus.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []bus.StreamSpec{{Name: evStream, Subjects: []string{"ev.>"}}, {Name: dlqStream, Subjects: []string{"dlq.>"}}} {
		if err := b.EnsureStream(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	var handled atomic.Int32
	c := consume(t, b, fastSpec("restart"), func(context.Context, *bus.Message) error {
		handled.Add(1)
		return nil
	})
	publishN(t, b, "ev.before", 1)
	eventually(t, "message before restart", func() bool { return handled.Load() == 1 })

	srv.Shutdown()
	if srv, err = natsembed.Start(cfg); err != nil {
		t.Fatalf("restart: %v", err)
	}
	eventually(t, "reconnect", nc.IsConnected)
	// Publishing may race the JetStream restart; retry until stored.
	eventually(t, "publish after restart", func() bool {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err := b.Publish(pctx, "ev.after", []byte("x"), bus.WithMsgID("after"))
		return err == nil
	})
	eventually(t, "message after restart", func() bool { return handled.Load() == 2 })
	select {
	case <-c.Done():
		t.Fatal("consumer stopped across the restart")
	default:
	}
}

// TestConsumerRecreatedAfterDeletion: an operator deleting the durable does
// not stop the service; the bus re-creates it and keeps going.
func TestConsumerRecreatedAfterDeletion(t *testing.T) {
	e := newEnv(t)
	var handled atomic.Int32
	consume(t, e.b, fastSpec("deleted"), func(context.Context, *bus.Message) error {
		handled.Add(1)
		return nil
	})
	publishN(t, e.b, "ev.one", 1)
	eventually(t, "first message", func() bool { return handled.Load() == 1 })
	ctx := testCtx(t)
	if err := e.b.JetStream().DeleteConsumer(ctx, evStream, "deleted"); err != nil {
		t.Fatalf("DeleteConsumer: %v", err)
	}
	// The re-created consumer starts from the beginning of the stream
	// (DeliverAll), so the first message comes again: at-least-once.
	publishN(t, e.b, "ev.two", 1)
	eventually(t, "messages after re-creation", func() bool { return handled.Load() >= 3 })
	eventually(t, "consumer exists again", func() bool {
		_, err := e.b.ConsumerInfo(ctx, evStream, "deleted")
		return err == nil
	})
}
