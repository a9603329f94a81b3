package service

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the HTTP server's limits against slow and greedy clients.
const (
	// DefaultBodyTimeout bounds how long a client may take to send a request body once
	// its headers arrived: a body trickled in a byte at a time must not hold a
	// connection (and a handler) for longer.
	DefaultBodyTimeout = 30 * time.Second
	// DefaultIdleTimeout closes keep-alive connections idle for this long.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultMaxConnsPerClient bounds the open connections from one remote address.
	DefaultMaxConnsPerClient = 128
)

// ErrBodyTimeout is what a handler's read of the request body returns once the body
// deadline has passed; it wraps os.ErrDeadlineExceeded.
var ErrBodyTimeout = errors.New("the request body did not arrive in time")

// bodyDeadline is the per-request body deadline: the connection's read deadline is set
// when the handler starts and cleared once the body has been read to its end, so a
// long answer (a streamed one) is never cut by it. A response written before the body
// was read to its end (an authentication failure, a rejected request) closes the
// connection, so that the server does not wait for the rest of a slow body to drain it.
func bodyDeadline(next http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d <= 0 || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(time.Now().Add(d)); err != nil {
			next.ServeHTTP(w, r) // not a connection with deadlines (a test recorder)
			return
		}
		b := &deadlineBody{ReadCloser: r.Body, clear: func() { _ = rc.SetReadDeadline(time.Time{}) }}
		r.Body = b
		cw := &closeUnreadWriter{ResponseWriter: w, body: b}
		next.ServeHTTP(cw, r)
		if cw.started && !b.eof.Load() {
			// The server drains an unread body before closing the connection; end the
			// drain now rather than at the deadline.
			_ = rc.SetReadDeadline(time.Now())
		}
	})
}

// deadlineBody clears the read deadline at the end of the body and says when a read
// failed at the deadline.
type deadlineBody struct {
	io.ReadCloser
	clear func()
	eof   atomic.Bool
	once  sync.Once
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case errors.Is(err, io.EOF):
		b.eof.Store(true)
		b.once.Do(b.clear)
	case err != nil && isTimeout(err):
		err = errors.Join(ErrBodyTimeout, err)
	}
	return n, err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// closeUnreadWriter adds "Connection: close" to a response that starts before the
// request body was read to its end.
type closeUnreadWriter struct {
	http.ResponseWriter
	body    *deadlineBody
	started bool
}

func (w *closeUnreadWriter) WriteHeader(status int) {
	if !w.started {
		w.started = true
		if !w.body.eof.Load() {
			w.Header().Set("Connection", "close")
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *closeUnreadWriter) Write(p []byte) (int, error) {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

// Flush keeps streamed responses (server-sent events) working through the wrapper.
func (w *closeUnreadWriter) Flush() {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *closeUnreadWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// perClientListener caps the open connections from one remote address: a connection
// over the cap gets a 503 and is closed at once, so a handful of clients cannot hold
// every connection the process can serve.
type perClientListener struct {
	net.Listener
	max int

	mu   sync.Mutex
	open map[string]int
}

func limitPerClient(ln net.Listener, max int) net.Listener {
	if max <= 0 {
		return ln
	}
	return &perClientListener{Listener: ln, max: max, open: map[string]int{}}
}

// tooManyConns is the whole answer to a connection over the cap.
var tooManyConns = func() string {
	body := `{"error":"too many open connections from this client address"}` + "\n"
	return "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}()

func (l *perClientListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host := remoteHost(c.RemoteAddr())
		l.mu.Lock()
		if l.open[host] >= l.max {
			l.mu.Unlock()
			go refuse(c)
			continue
		}
		l.open[host]++
		l.mu.Unlock()
		return &countedConn{Conn: c, release: sync.OnceFunc(func() { l.release(host) })}, nil
	}
}

func (l *perClientListener) release(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[host]--; l.open[host] <= 0 {
		delete(l.open, host)
	}
}

// refuse answers 503 without reading the request (bounded by a short write deadline, so
// a client that does not read cannot hold the goroutine) and closes the connection.
func refuse(c net.Conn) {
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = io.WriteString(c, tooManyConns)
	_ = c.Close()
}

func remoteHost(a net.Addr) string {
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// countedConn gives its slot back when closed (the server closes every connection it
// accepted, once).
type countedConn struct {
	net.Conn
	release func()
}

func (c *countedConn) Close() error {
	c.release()
	return c.Conn.Close()
}
