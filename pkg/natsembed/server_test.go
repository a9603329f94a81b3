package natsembed_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream" //nolint:depguard // tests the embedded server's JetStream itself, below pkg/bus
	"go.uber.org/goleak"

	"github.com/graphrag/graphrag/pkg/natsembed"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestStartRefusesNonLoopback(t *testing.T) {
	tests := []struct {
		name    string
		cfg     natsembed.Config
		wantErr error
	}{
		{name: "all interfaces v4", cfg: natsembed.Config{DataDir: t.TempDir(), Host: "0.0.0.0", Port: -1}, wantErr: natsembed.ErrNotLoopback},
		{name: "all interfaces v6", cfg: natsembed.Config{DataDir: t.TempDir(), Host: "::", Port: -1}, wantErr: natsembed.ErrNotLoopback},
		{name: "public address", cfg: natsembed.Config{DataDir: t.TempDir(), Host: "192.0.2.1", Port: -1}, wantErr: natsembed.ErrNotLoopback},
		{name: "host name", cfg: natsembed.Config{DataDir: t.TempDir(), Host: "example.com", Port: -1}, wantErr: natsembed.ErrNotLoopback},
		{name: "no data dir", cfg: natsembed.Config{Port: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := natsembed.Start(tt.cfg)
			if err == nil {
				s.Shutdown()
				t.Fatal("Start succeeded, want an error")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("Start error = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestStartLoopbackHosts(t *testing.T) {
	for _, host := range []string{"", "127.0.0.1", "localhost"} {
		t.Run("host="+host, func(t *testing.T) {
			s, err := natsembed.Start(natsembed.Config{DataDir: t.TempDir(), Host: host, Port: -1})
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			defer s.Shutdown()
			nc, err := nats.Connect(s.ClientURL())
			if err != nil {
				t.Fatalf("connecting to %s: %v", s.ClientURL(), err)
			}
			defer nc.Close()
			if err := nc.Flush(); err != nil {
				t.Fatalf("flush: %v", err)
			}
		})
	}
}

func TestMaxPayloadAndIdempotentShutdown(t *testing.T) {
	s, err := natsembed.Start(natsembed.Config{DataDir: t.TempDir(), Port: -1, MaxPayload: 64 << 10})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	if got := nc.MaxPayload(); got != 64<<10 {
		t.Errorf("MaxPayload = %d, want %d", got, 64<<10)
	}
	nc.Close()
	s.Shutdown()
	s.Shutdown() // must not block or panic
}

// TestPersistsAcrossRestart checks that JetStream uses file storage in DataDir.
func TestPersistsAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	withJS := func(fn func(js jetstream.JetStream)) {
		t.Helper()
		s, err := natsembed.Start(natsembed.Config{DataDir: dir, Port: -1})
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
		defer s.Shutdown()
		nc, err := nats.Connect(s.ClientURL())
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer nc.Close()
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatalf("jetstream: %v", err)
		}
		fn(js)
	}

	withJS(func(js jetstream.JetStream) {
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "P", Subjects: []string{"p.>"}, Storage: jetstream.FileStorage}); err != nil {
			t.Fatalf("create stream: %v", err)
		}
		if _, err := js.Publish(ctx, "p.one", []byte("kept")); err != nil {
			t.Fatalf("publish: %v", err)
		}
	})
	withJS(func(js jetstream.JetStream) {
		st, err := js.Stream(ctx, "P")
		if err != nil {
			t.Fatalf("stream after restart: %v", err)
		}
		m, err := st.GetMsg(ctx, 1)
		if err != nil {
			t.Fatalf("get msg after restart: %v", err)
		}
		if string(m.Data) != "kept" {
			t.Fatalf("data after restart = %q, want %q", m.Data, "kept")
		}
	})
}

// TestStartRefusesAPortInUse: a port another process listens on is refused at once with
// ErrPortInUse, where the server only logged it and Start waited out its ready timeout.
func TestStartRefusesAPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	port := l.Addr().(*net.TCPAddr).Port
	srv, err := natsembed.Start(natsembed.Config{DataDir: t.TempDir(), Port: port})
	if err == nil {
		srv.Shutdown()
		t.Fatalf("Start on port %d, which is in use, succeeded", port)
	}
	if !errors.Is(err, natsembed.ErrPortInUse) || !strings.Contains(err.Error(), strconv.Itoa(port)) {
		t.Errorf("error %v: want ErrPortInUse naming port %d", err, port)
	}
}
