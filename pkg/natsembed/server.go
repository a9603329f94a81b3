package natsembed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// ErrNotLoopback is returned by Start when Config.Host is not a loopback address.
var ErrNotLoopback = errors.New("natsembed: host is not a loopback address")

// ErrPortInUse is returned by Start when another process listens on Config.Port.
var ErrPortInUse = errors.New("natsembed: port in use")

// DefaultHost is the listen address used when Config.Host is empty.
const DefaultHost = "127.0.0.1"

// readyTimeout bounds how long Start waits for the server to accept clients.
const readyTimeout = 10 * time.Second

// Config configures an embedded server. The zero value is not usable: DataDir
// is required.
type Config struct {
	// DataDir is where JetStream keeps its file store (required).
	DataDir string
	// Host is the listen address; it must be a loopback address or
	// "localhost". Default 127.0.0.1.
	Host string
	// Port is the client port; -1 (or 0) picks a random free port.
	Port int
	// MaxPayload is the largest message the server accepts, in bytes;
	// 0 keeps the server default (1 MiB).
	MaxPayload int32
	// Logger receives the server log (notices at Info, warnings at Warn,
	// errors at Error, debug at Debug). Nil discards it.
	Logger *slog.Logger
	// Name is the server's name in its cluster (default graphrag-embedded).
	Name string
	// Cluster, when set, routes the server into a JetStream cluster of servers
	// on the same loopback host (tests of a cluster losing a node; graphrag
	// up's embedded server runs alone).
	Cluster *Cluster
}

// Cluster routes servers into one JetStream cluster. Every server of the
// cluster needs its own Config.Name, DataDir and ports.
type Cluster struct {
	// Name is the cluster's name, the same on every server.
	Name string
	// Port is this server's route port on Config.Host (required: the other
	// servers' Routes name it).
	Port int
	// Routes are the route URLs (nats://host:port) of every server of the
	// cluster; the server's own is ignored.
	Routes []string
}

// Server is a running embedded NATS server.
type Server struct {
	ns      *server.Server
	once    sync.Once
	dataDir string
}

// Start starts a server and waits (at most 10s) until it accepts client
// connections.
func Start(cfg Config) (*Server, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("natsembed: starting server: DataDir is required")
	}
	host := cfg.Host
	if host == "" {
		host = DefaultHost
	}
	if !isLoopback(host) {
		return nil, fmt.Errorf("natsembed: starting server on %q: %w", host, ErrNotLoopback)
	}
	port := cfg.Port
	if port == 0 {
		port = server.RANDOM_PORT
	}
	// The server reports a port it cannot listen on only in its log, so Start would
	// wait readyTimeout for nothing: try the port first.
	ports := []int{port}
	if cfg.Cluster != nil {
		ports = append(ports, cfg.Cluster.Port)
	}
	for _, p := range ports {
		if p <= 0 {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p)))
		if err != nil {
			return nil, fmt.Errorf("%w: %s:%d: %w", ErrPortInUse, host, p, err)
		}
		_ = l.Close()
	}
	name := cfg.Name
	if name == "" {
		name = "graphrag-embedded"
	}
	opts := &server.Options{
		ServerName: name,
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   cfg.DataDir,
		MaxPayload: cfg.MaxPayload,
		// The host process owns signal handling; the server must not.
		NoSigs: true,
		// No HTTP monitoring, gateway or leafnode listeners, and no cluster
		// unless asked for: the embedded server is reachable on the client
		// port (and its route port) only.
		HTTPPort: 0,
	}
	if c := cfg.Cluster; c != nil {
		if c.Name == "" || c.Port <= 0 || len(c.Routes) == 0 {
			return nil, errors.New("natsembed: starting server: a cluster needs a name, a route port and routes")
		}
		routes, err := routeURLs(c.Routes, host)
		if err != nil {
			return nil, err
		}
		opts.Cluster = server.ClusterOpts{Name: c.Name, Host: host, Port: c.Port}
		opts.Routes = routes
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("natsembed: creating server: %w", err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	debug := logger.Enabled(context.Background(), slog.LevelDebug)
	ns.SetLoggerV2(slogAdapter{l: logger.With("component", "nats-server")}, debug, false, false)

	go ns.Start()
	if !ns.ReadyForConnections(readyTimeout) {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, fmt.Errorf("natsembed: server on %s not ready after %s", net.JoinHostPort(host, fmt.Sprint(port)), readyTimeout)
	}
	if !ns.JetStreamEnabled() {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, errors.New("natsembed: starting server: JetStream is not enabled")
	}
	return &Server{ns: ns, dataDir: cfg.DataDir}, nil
}

// ClientURL is the nats:// URL clients connect to.
func (s *Server) ClientURL() string { return s.ns.ClientURL() }

// DataDir is the directory holding the JetStream store.
func (s *Server) DataDir() string { return s.dataDir }

// Shutdown stops the server and waits until it has stopped. It is safe to
// call more than once and from several goroutines.
func (s *Server) Shutdown() {
	s.once.Do(func() {
		s.ns.Shutdown()
		s.ns.WaitForShutdown()
	})
}

// FreePorts picks n distinct free ports on 127.0.0.1, for servers whose ports must be
// known before they start (the routes of a cluster name every server's route port).
// Another process may take one before it is used.
func FreePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	// Each listener stays open until all are picked, so that no two are the same.
	var open []net.Listener
	defer func() {
		for _, l := range open {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(DefaultHost, "0"))
		if err != nil {
			return nil, fmt.Errorf("natsembed: picking a port: %w", err)
		}
		open = append(open, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// routeURLs parses the routes of a cluster, each of which must be on a
// loopback host, as the server itself is.
func routeURLs(routes []string, host string) ([]*url.URL, error) {
	out := make([]*url.URL, 0, len(routes))
	for _, r := range routes {
		u, err := url.Parse(r)
		if err != nil {
			return nil, fmt.Errorf("natsembed: starting server: route %q: %w", r, err)
		}
		if !isLoopback(u.Hostname()) {
			return nil, fmt.Errorf("natsembed: starting server %s with route %q: %w", host, r, ErrNotLoopback)
		}
		out = append(out, u)
	}
	return out, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// slogAdapter routes the server's printf-style log to slog.
type slogAdapter struct{ l *slog.Logger }

var _ server.Logger = slogAdapter{}

func (a slogAdapter) Noticef(format string, v ...any) { a.l.Info(fmt.Sprintf(format, v...)) }
func (a slogAdapter) Warnf(format string, v ...any)   { a.l.Warn(fmt.Sprintf(format, v...)) }

// Fatalf only logs: the embedded server must never end the host process.
func (a slogAdapter) Fatalf(format string, v ...any) {
	a.l.Error(fmt.Sprintf(format, v...), "fatal", true)
}
func (a slogAdapter) Errorf(format string, v ...any) { a.l.Error(fmt.Sprintf(format, v...)) }
func (a slogAdapter) Debugf(format string, v ...any) { a.l.Debug(fmt.Sprintf(format, v...)) }
func (a slogAdapter) Tracef(format string, v ...any) {
	a.l.Debug(fmt.Sprintf(format, v...), "trace", true)
}
