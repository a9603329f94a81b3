package service

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestHTTPServerServesAndStopsTwice(t *testing.T) {
	mux := NewMux(NewHealth(), nil)
	srv := HTTPServer("127.0.0.1:0", mux)
	if srv.Addr() != "" {
		t.Errorf("Addr before Start = %q, want empty", srv.Addr())
	}
	if err := srv.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := srv.Start(t.Context()); err == nil {
		t.Error("second Start succeeded, want an error")
	}
	resp, err := http.Get("http://" + srv.Addr() + "/healthz")
	if err != nil {
		t.Fatalf("GET /healthz: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz = %d", resp.StatusCode)
	}
	for i := range 2 {
		if err := srv.Stop(t.Context()); err != nil {
			t.Errorf("Stop call %d: %v", i+1, err)
		}
	}
	if _, err := http.Get("http://" + srv.Addr() + "/healthz"); err == nil {
		t.Error("server still answering after Stop")
	}
}

func TestHTTPServerStopBeforeStart(t *testing.T) {
	if err := HTTPServer("127.0.0.1:0", http.NotFoundHandler()).Stop(t.Context()); err != nil {
		t.Errorf("Stop before Start: %v", err)
	}
}

func TestHTTPServerAddressInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer ln.Close()
	err = HTTPServer(ln.Addr().String(), http.NotFoundHandler()).Start(t.Context())
	if err == nil || !strings.Contains(err.Error(), "listening on") {
		t.Errorf("Start on a used port = %v, want a listen error", err)
	}
}

// inflight starts a server whose handler blocks until release is closed, and
// one request against it; it returns when the handler is running. At the test's end
// it releases the handler if the test has not and waits for it to return, so that no
// request of this test is still being served (and counted) during the next one.
func inflight(t *testing.T) (srv *HTTPServerComponent, release func(), result chan error) {
	t.Helper()
	entered, released, returned := make(chan struct{}), make(chan struct{}), make(chan struct{})
	release = sync.OnceFunc(func() { close(released) })
	t.Cleanup(func() {
		release()
		<-returned
	})
	srv = HTTPServer("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		defer close(returned)
		close(entered)
		<-released
		_, _ = io.WriteString(w, "done")
	}))
	if err := srv.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	result = make(chan error, 1)
	go func() {
		resp, err := http.Get("http://" + srv.Addr() + "/")
		if err != nil {
			result <- err
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err == nil && string(body) != "done" {
			err = errors.New("unexpected body " + string(body))
		}
		result <- err
	}()
	<-entered
	return srv, release, result
}

func TestHTTPServerDrainsInFlight(t *testing.T) {
	srv, release, result := inflight(t)
	stopped := make(chan error, 1)
	go func() { stopped <- srv.Stop(t.Context()) }()
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned (%v) with a request in flight", err)
	case err := <-result:
		t.Fatalf("request ended (%v) before it was released", err)
	default:
	}
	release()
	if err := <-result; err != nil {
		t.Errorf("in-flight request: %v", err)
	}
	if err := <-stopped; err != nil {
		t.Errorf("Stop: %v", err)
	}
}

func TestHTTPServerStopDeadlineClosesConnections(t *testing.T) {
	srv, _, result := inflight(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if err := srv.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Stop = %v, want DeadlineExceeded", err)
	}
	if err := <-result; err == nil {
		t.Error("in-flight request succeeded after its connection was closed")
	}
}

func TestFunc(t *testing.T) {
	calls := 0
	errStop := errors.New("stop failed")
	c := Func("f", nil, func(context.Context) error { calls++; return errStop })
	if err := c.Start(t.Context()); err != nil {
		t.Fatalf("Start with nil start: %v", err)
	}
	for range 2 {
		if err := c.Stop(t.Context()); !errors.Is(err, errStop) {
			t.Errorf("Stop = %v, want %v", err, errStop)
		}
	}
	if calls != 1 {
		t.Errorf("stop func called %d times, want 1", calls)
	}
	if n := componentName(c); n != "f" {
		t.Errorf("name = %q", n)
	}
	if err := Func("empty", nil, nil).Stop(t.Context()); err != nil {
		t.Errorf("Stop with nil stop: %v", err)
	}
}

func TestLoop(t *testing.T) {
	t.Run("stop cancels and waits", func(t *testing.T) {
		exited := make(chan struct{})
		l := Loop("l", func(ctx context.Context) error {
			defer close(exited)
			<-ctx.Done()
			return ctx.Err() // an error caused by Stop is not a failure
		})
		startCtx, cancelStart := context.WithCancel(t.Context())
		if err := l.Start(startCtx); err != nil {
			t.Fatalf("Start: %v", err)
		}
		if err := l.Start(startCtx); err == nil {
			t.Error("second Start succeeded")
		}
		cancelStart() // shutdown beginning must not end the loop by itself
		select {
		case <-exited:
			t.Fatal("loop ended when the start context was cancelled")
		default:
		}
		for range 2 {
			if err := l.Stop(t.Context()); err != nil {
				t.Fatalf("Stop: %v", err)
			}
		}
		select {
		case <-exited:
		default:
			t.Error("Stop returned before the loop did")
		}
		select {
		case err := <-l.Failed():
			t.Errorf("Failed reported %v after a clean stop", err)
		default:
		}
	})
	t.Run("error reported", func(t *testing.T) {
		errLoop := errors.New("lost")
		l := Loop("l", func(context.Context) error { return errLoop })
		if err := l.Start(t.Context()); err != nil {
			t.Fatalf("Start: %v", err)
		}
		if err := <-l.Failed(); !errors.Is(err, errLoop) {
			t.Errorf("Failed = %v, want %v", err, errLoop)
		}
		if err := l.Stop(t.Context()); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	t.Run("stop deadline", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		l := Loop("stubborn", func(context.Context) error { <-release; return nil })
		if err := l.Start(t.Context()); err != nil {
			t.Fatalf("Start: %v", err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := l.Stop(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Stop = %v, want context.Canceled", err)
		}
	})
	t.Run("stop before start", func(t *testing.T) {
		if err := Loop("l", nil).Stop(t.Context()); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
}
