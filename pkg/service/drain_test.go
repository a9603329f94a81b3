package service

import (
	"context"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestDrainKeepsServingWhileReadinessFails: after SIGTERM, /readyz says 503 at once
// while the API still answers; only after the delay does the listener close.
func TestDrainKeepsServingWhileReadinessFails(t *testing.T) {
	health := NewHealth()
	mux := NewMux(health, nil)
	mux.HandleFunc("GET /work", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	srv := HTTPServer("127.0.0.1:0", mux)
	sig := make(chan os.Signal, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(context.Background(), nil, 20*time.Second, sig, []Component{srv, NewDrain(health, 3*time.Second)})
	}()
	base := waitAddr(t, srv)
	if code := get(t, base+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz before SIGTERM: %d", code)
	}
	sig <- syscall.SIGTERM
	deadline := time.Now().Add(10 * time.Second)
	for get(t, base+"/readyz") != http.StatusServiceUnavailable {
		if time.Now().After(deadline) {
			t.Fatal("/readyz never failed after SIGTERM")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code := get(t, base+"/work"); code != http.StatusOK {
		t.Fatalf("a request during the drain: %d, want 200", code)
	}
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	if _, err := http.Get(base + "/work"); err == nil {
		t.Fatal("the listener still answers after shutdown")
	}
}

func TestDrainEndsWithTheShutdownDeadline(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan error, 1)
	go func() { done <- NewDrain(NewHealth(), time.Hour).Stop(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Stop waits out its delay past the shutdown deadline")
	}
}

func waitAddr(t *testing.T, srv *HTTPServerComponent) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for srv.Addr() == "" {
		if time.Now().After(deadline) {
			t.Fatal("server never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return "http://" + srv.Addr()
}

func get(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}
