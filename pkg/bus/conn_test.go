package bus_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
)

func TestConnect(t *testing.T) {
	srv := bustest.StartServer(t)
	nc, err := bus.Connect(testCtx(t), bus.ConnConfig{URL: srv.ClientURL(), Name: "test-client"})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer nc.Close()
	if err := nc.Flush(); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if nc.Opts.Name != "test-client" || nc.Opts.MaxReconnect != -1 {
		t.Errorf("options: name %q, max reconnect %d (want forever, -1)", nc.Opts.Name, nc.Opts.MaxReconnect)
	}
}

// TestCloseIsNoWarning: closing a connection on purpose (every clean shutdown) logs no
// warning; the disconnection is a debug line.
func TestCloseIsNoWarning(t *testing.T) {
	srv := bustest.StartServer(t)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	nc, err := bus.Connect(testCtx(t), bus.ConnConfig{URL: srv.ClientURL(), Logger: log})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	closed := make(chan struct{})
	nc.SetClosedHandler(func(*nats.Conn) { close(closed) }) // after the disconnect callback
	nc.Close()
	<-closed
	if strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("a close logged a warning:\n%s", logs.String())
	}
}

func TestConnectErrors(t *testing.T) {
	// A port nothing listens on: bind, note the port, close.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "nats://" + l.Addr().String()
	l.Close()

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	missing := filepath.Join(t.TempDir(), "missing")

	tests := []struct {
		name    string
		ctx     context.Context
		cfg     bus.ConnConfig
		wantErr error
	}{
		{"empty url", context.Background(), bus.ConnConfig{}, bus.ErrInvalidSpec},
		{"creds and nkey", context.Background(), bus.ConnConfig{URL: deadURL, CredsFile: "a", NKeySeedFile: "b"}, bus.ErrInvalidSpec},
		{"cert without key", context.Background(), bus.ConnConfig{URL: deadURL, TLS: bus.TLSFiles{CertFile: "c"}}, bus.ErrInvalidSpec},
		{"cancelled ctx", cancelled, bus.ConnConfig{URL: deadURL}, context.Canceled},
		{"missing nkey seed", context.Background(), bus.ConnConfig{URL: deadURL, NKeySeedFile: missing}, nil},
		{"nothing listening", context.Background(), bus.ConnConfig{URL: deadURL}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nc, err := bus.Connect(tt.ctx, tt.cfg)
			if err == nil {
				nc.Close()
				t.Fatal("Connect succeeded, want an error")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("Connect = %v, want %v", err, tt.wantErr)
			}
		})
	}
}
