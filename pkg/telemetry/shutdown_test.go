package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
)

// blackhole accepts TCP connections and never answers: a collector behind a firewall
// that drops packets looks like this to a gRPC client (it waits, it is not refused).
func blackhole(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listening: %v", err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = lis.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return lis.Addr().String()
}

// With a collector that never answers and no deadline from the caller, Shutdown returns
// at its own bound and cuts off the exports under way (issue 12, item 10: Ctrl-C took
// 20-30 s). The exports here would wait an hour: only the bound can end them.
func TestShutdownIsBounded(t *testing.T) {
	tel, err := Setup(t.Context(), Config{
		ServiceName: "blackholed", OTLPEndpoint: blackhole(t), OTLPInsecure: true,
		ExportTimeout: time.Hour, ShutdownTimeout: 100 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	_, span := otel.Tracer("test").Start(t.Context(), "pending-span")
	span.End()
	counter, _ := otel.Meter("test").Int64Counter("pending")
	counter.Add(t.Context(), 1)

	done := make(chan error, 1)
	go func() { done <- tel.Shutdown(context.Background()) }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrShutdownTimeout) {
			t.Errorf("Shutdown = %v, want ErrShutdownTimeout", err)
		}
	case <-time.After(time.Minute): // a safety net, not the measure: unbounded, it waits an hour
		t.Fatal("Shutdown did not return: it is not bounded")
	}
}

// The SDK's background export errors become structured log lines, not plain text from
// the standard library logger (issue 12, item 10).
func TestExportErrorsAreStructuredLogLines(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	_ = lis.Close() // refused from now on
	var buf syncBuffer
	tel, err := Setup(t.Context(), Config{
		ServiceName: "refused", OTLPEndpoint: addr, OTLPInsecure: true, ExportTimeout: 200 * time.Millisecond,
		Logger: NewLogger(&buf, slog.LevelInfo, "json"),
	})
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	_, span := otel.Tracer("test").Start(t.Context(), "lost-span")
	span.End()
	_ = tel.Shutdown(t.Context()) // the last flush fails, and says so through the handler
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	found := false
	for _, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q is not JSON: %v", line, err)
		}
		if rec["msg"] == "opentelemetry export failed" && rec["level"] == "WARN" && rec["err"] != "" {
			found = true
		}
	}
	if !found {
		t.Errorf("no structured export error in the log:\n%s", buf.String())
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
