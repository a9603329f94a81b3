package service

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Func returns a Component named name from a start and a stop function;
// either may be nil. Stop calls stop once and repeats its result afterwards.
func Func(name string, start, stop func(ctx context.Context) error) Component {
	return &funcComponent{name: name, start: start, stop: stop}
}

type funcComponent struct {
	name        string
	start, stop func(ctx context.Context) error

	stopOnce sync.Once
	stopErr  error
}

func (f *funcComponent) Name() string { return f.name }

func (f *funcComponent) Start(ctx context.Context) error {
	if f.start == nil {
		return nil
	}
	return f.start(ctx)
}

func (f *funcComponent) Stop(ctx context.Context) error {
	f.stopOnce.Do(func() {
		if f.stop != nil {
			f.stopErr = f.stop(ctx)
		}
	})
	return f.stopErr
}

// Loop returns a Component that runs fn in its own goroutine from Start
// until Stop. fn's context keeps Start's values but is cancelled only by
// Stop, so the loop drains on Stop rather than dying when shutdown begins.
// fn returning a non-nil error before Stop is reported through Failed, which
// makes Run shut the service down; returning nil early is a normal end.
func Loop(name string, fn func(ctx context.Context) error) *LoopComponent {
	return &LoopComponent{name: name, fn: fn, failed: make(chan error, 1)}
}

// LoopComponent is the Component Loop returns.
type LoopComponent struct {
	name   string
	fn     func(ctx context.Context) error
	failed chan error

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// Name implements Namer.
func (l *LoopComponent) Name() string { return l.name }

// Failed implements Failer.
func (l *LoopComponent) Failed() <-chan error { return l.failed }

// Start launches the loop; starting twice is an error.
func (l *LoopComponent) Start(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done != nil {
		return fmt.Errorf("loop %s already started", l.name)
	}
	loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l.cancel = cancel
	l.done = make(chan struct{})
	go func() {
		defer close(l.done)
		err := l.fn(loopCtx)
		if err != nil && loopCtx.Err() == nil {
			l.failed <- err // buffered, and sent at most once
		}
	}()
	return nil
}

// Stop cancels the loop's context and waits for fn to return or ctx to end.
// It is safe to call more than once, and before Start.
func (l *LoopComponent) Stop(ctx context.Context) error {
	l.mu.Lock()
	cancel, done := l.cancel, l.done
	l.mu.Unlock()
	if done == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for loop %s to return: %w", l.name, ctx.Err())
	}
}

// DefaultReadHeaderTimeout bounds how long a client may take to send request
// headers, against slowloris-style connection hoarding.
const DefaultReadHeaderTimeout = 10 * time.Second

// HTTPLimits bound what slow or greedy clients can hold of an HTTP server.
type HTTPLimits struct {
	// ReadHeaderTimeout bounds the request headers (DefaultReadHeaderTimeout when 0).
	ReadHeaderTimeout time.Duration
	// BodyTimeout bounds the request body, from the end of the headers to the end of the
	// body (DefaultBodyTimeout when 0; negative: none). A read past it fails with an
	// error matching ErrBodyTimeout.
	BodyTimeout time.Duration
	// IdleTimeout closes idle keep-alive connections (DefaultIdleTimeout when 0).
	IdleTimeout time.Duration
	// MaxConnsPerClient caps the open connections from one remote address
	// (DefaultMaxConnsPerClient when 0; negative: no cap).
	MaxConnsPerClient int
}

func (l HTTPLimits) withDefaults() HTTPLimits {
	if l.ReadHeaderTimeout <= 0 {
		l.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if l.BodyTimeout == 0 {
		l.BodyTimeout = DefaultBodyTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	if l.MaxConnsPerClient == 0 {
		l.MaxConnsPerClient = DefaultMaxConnsPerClient
	}
	return l
}

// HTTPServer returns a Component serving handler on addr with the default HTTPLimits.
// Start binds the address, so a port in use is a start error; Stop shuts down gracefully
// (no new connections, in-flight requests finish) and closes the remaining connections
// if ctx ends first.
func HTTPServer(addr string, handler http.Handler) *HTTPServerComponent {
	return HTTPServerWithLimits(addr, handler, HTTPLimits{})
}

// HTTPServerWithLimits is HTTPServer with limits (zero fields take the defaults).
func HTTPServerWithLimits(addr string, handler http.Handler, limits HTTPLimits) *HTTPServerComponent {
	limits = limits.withDefaults()
	return &HTTPServerComponent{
		srv: &http.Server{
			Addr:              addr,
			Handler:           bodyDeadline(instrument(handler), limits.BodyTimeout),
			ReadHeaderTimeout: limits.ReadHeaderTimeout,
			IdleTimeout:       limits.IdleTimeout,
		},
		maxPerClient: limits.MaxConnsPerClient,
		failed:       make(chan error, 1),
	}
}

// HTTPServerComponent is the Component HTTPServer returns.
type HTTPServerComponent struct {
	srv          *http.Server
	maxPerClient int
	failed       chan error

	mu       sync.Mutex
	ln       net.Listener
	served   chan struct{}
	stopOnce sync.Once
	stopErr  error
}

// Name implements Namer.
func (h *HTTPServerComponent) Name() string { return "http " + h.srv.Addr }

// Failed implements Failer: it yields the error if serving stops on its own.
func (h *HTTPServerComponent) Failed() <-chan error { return h.failed }

// Addr is the bound address once started (useful with port 0), else "".
func (h *HTTPServerComponent) Addr() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ln == nil {
		return ""
	}
	return h.ln.Addr().String()
}

// Start binds the address and serves in the background. Requests get a
// context carrying Start's values, cancelled only when the server closes.
func (h *HTTPServerComponent) Start(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ln != nil {
		return fmt.Errorf("http server on %s already started", h.srv.Addr)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", h.srv.Addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", h.srv.Addr, err)
	}
	base := context.WithoutCancel(ctx)
	h.srv.BaseContext = func(net.Listener) context.Context { return base }
	h.ln = ln
	ln = limitPerClient(ln, h.maxPerClient)
	h.served = make(chan struct{})
	go func() {
		defer close(h.served)
		if err := h.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			h.failed <- fmt.Errorf("serving http on %s: %w", ln.Addr(), err)
		}
	}()
	return nil
}

// Stop shuts the server down gracefully within ctx, then forcibly. It is safe
// to call more than once, and before Start.
func (h *HTTPServerComponent) Stop(ctx context.Context) error {
	h.stopOnce.Do(func() {
		h.mu.Lock()
		served := h.served
		h.mu.Unlock()
		if err := h.srv.Shutdown(ctx); err != nil {
			// Deadline passed with requests in flight: cut them off.
			closeErr := h.srv.Close()
			h.stopErr = errors.Join(fmt.Errorf("shutting down http server: %w", err), closeErr)
		}
		if served != nil {
			<-served
		}
	})
	return h.stopErr
}
