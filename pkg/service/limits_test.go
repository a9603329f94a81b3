package service

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// safetyNet bounds every wait of these tests on a client connection: it is not what the
// tests measure (they assert that the server cut or answered the connection, which it
// does after the short configured timeouts), only what keeps a broken server from
// hanging the test run.
const safetyNet = 30 * time.Second

// startLimited serves h with limits on a loopback port until the test ends.
func startLimited(t *testing.T, h http.Handler, limits HTTPLimits) string {
	t.Helper()
	srv := HTTPServerWithLimits("127.0.0.1:0", h, limits)
	if err := srv.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = srv.Stop(t.Context()) })
	return srv.Addr()
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(safetyNet))
	return c
}

// readUntilClosed reads what the server sends until it closes the connection; a client
// timeout (the safety net) fails the test: the server held the connection.
func readUntilClosed(t *testing.T, c net.Conn) string {
	t.Helper()
	b, err := io.ReadAll(c)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("the server kept the connection open (read so far: %q)", b)
		}
		// A reset after the answer is a cut connection too.
	}
	return string(b)
}

// readBody reads the whole body and answers 408 when it did not arrive in time.
func readBody(w http.ResponseWriter, r *http.Request) {
	if _, err := io.ReadAll(r.Body); err != nil {
		if errors.Is(err, ErrBodyTimeout) {
			http.Error(w, "body too slow", http.StatusRequestTimeout)
			return
		}
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	_, _ = io.WriteString(w, "read")
}

// A body sent a byte at a time is cut at the body deadline: the handler's read fails
// and the connection is closed (issue 17, item 4).
func TestSlowBodyIsCut(t *testing.T) {
	addr := startLimited(t, http.HandlerFunc(readBody), HTTPLimits{BodyTimeout: 200 * time.Millisecond})
	c := dial(t, addr)
	if _, err := io.WriteString(c, "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	got := readUntilClosed(t, c)
	if !strings.HasPrefix(got, "HTTP/1.1 408") {
		t.Errorf("answer %q, want 408 then the connection closed", got)
	}
}

// A handler that answers without reading the body (an authentication failure) is
// answered at once, and the connection closed, instead of the server draining the rest
// of a slow body first.
func TestAnswerBeforeBodyClosesConnection(t *testing.T) {
	unauthorized := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "missing token", http.StatusUnauthorized)
	})
	// A body deadline far beyond the safety net: only answering without draining the
	// body can pass.
	addr := startLimited(t, unauthorized, HTTPLimits{BodyTimeout: time.Hour})
	c := dial(t, addr)
	if _, err := io.WriteString(c, "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	got := readUntilClosed(t, c)
	if !strings.HasPrefix(got, "HTTP/1.1 401") || !strings.Contains(got, "Connection: close") {
		t.Errorf("answer %q, want 401 with Connection: close", got)
	}
}

// Headers sent slowly are cut at the header timeout.
func TestSlowHeadersAreCut(t *testing.T) {
	addr := startLimited(t, http.HandlerFunc(readBody), HTTPLimits{ReadHeaderTimeout: 200 * time.Millisecond})
	c := dial(t, addr)
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: "); err != nil {
		t.Fatal(err)
	}
	if got := readUntilClosed(t, c); strings.Contains(got, "200 OK") {
		t.Errorf("answer %q to an incomplete request", got)
	}
}

// The body deadline ends with the body: a handler that works longer than it after
// reading the body (a streamed answer) keeps its connection and its context.
func TestBodyDeadlineEndsWithTheBody(t *testing.T) {
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.(http.Flusher).Flush()
		time.Sleep(300 * time.Millisecond) // beyond the body deadline
		if err := r.Context().Err(); err != nil {
			_, _ = io.WriteString(w, "cancelled")
			return
		}
		_, _ = io.WriteString(w, "done")
	})
	addr := startLimited(t, slow, HTTPLimits{BodyTimeout: 50 * time.Millisecond})
	resp, err := http.Post("http://"+addr+"/x", "text/plain", strings.NewReader("body"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || string(b) != "done" {
		t.Errorf("status %d body %q (%v), want 200 done", resp.StatusCode, b, err)
	}
}

// One address cannot open more than MaxConnsPerClient connections; a slot frees when a
// connection closes.
func TestConnectionsPerClientAreCapped(t *testing.T) {
	addr := startLimited(t, http.HandlerFunc(readBody), HTTPLimits{MaxConnsPerClient: 2})
	held := []net.Conn{dial(t, addr), dial(t, addr)}
	// Each held connection is accepted: a request on it is answered.
	for _, c := range held {
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "HTTP/1.1 200") {
			t.Fatalf("held connection: %q, %v", line, err)
		}
	}
	third := dial(t, addr)
	if got := readUntilClosed(t, third); !strings.HasPrefix(got, "HTTP/1.1 503") || !strings.Contains(got, "too many open connections") {
		t.Errorf("third connection got %q, want 503 and closed", got)
	}
	_ = held[0].Close()
	// The slot frees once the server has seen the close; retry until it has.
	for range 100 {
		c := dial(t, addr)
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		if got := readUntilClosed(t, c); strings.HasPrefix(got, "HTTP/1.1 200") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Error("no connection accepted after one of the held ones closed")
}
