package service

import (
	"flag"
	"io"
	"log/slog"
	"time"

	"github.com/graphrag/graphrag/pkg/errkind"
	"github.com/graphrag/graphrag/pkg/telemetry"
)

// Defaults of the common flags.
const (
	// DefaultHTTPAddr is loopback: a process started on a laptop serves no one else
	// until told to (deployments set -http-addr :8080 explicitly).
	DefaultHTTPAddr        = "127.0.0.1:8080"
	DefaultShutdownTimeout = 30 * time.Second
	DefaultDataDir         = "data"
)

// ErrInvalidFlags is wrapped by CommonFlags.Validate.
var ErrInvalidFlags = errkind.New(errkind.Invalid, "service: invalid flags")

// CommonFlags are the flags every service shares. Register them on the
// service's FlagSet, then ParseFlags; embed the struct in the service's own
// config struct so LogConfig logs them without a prefix.
//
// The NATS fields stay plain strings (paths and a URL): the bus package does
// the connecting and decides what they mean.
type CommonFlags struct {
	HTTPAddr         string        `config:"http-addr"`
	HTTPBodyTimeout  time.Duration `config:"http-body-timeout"`
	HTTPMaxConns     int           `config:"http-max-conns-per-client"`
	LogLevel         slog.Level    `config:"log-level"`
	LogFormat        string        `config:"log-format"`
	OTLPEndpoint     string        `config:"otlp-endpoint"`
	OTLPInsecure     bool          `config:"otlp-insecure"`
	TraceSampleRatio float64       `config:"trace-sample-ratio"`
	ShutdownTimeout  time.Duration `config:"shutdown-timeout"`
	DrainDelay       time.Duration `config:"drain-delay"`
	DataDir          string        `config:"data-dir"`
	NATSURL          string        `config:"nats-url"`
	NATSCreds        string        `config:"nats-creds"`
	NATSNKey         string        `config:"nats-nkey"`
	NATSTLSCA        string        `config:"nats-tls-ca"`
	NATSTLSCert      string        `config:"nats-tls-cert"`
	NATSTLSKey       string        `config:"nats-tls-key"`
	CPUProfile       string        `config:"cpu-profile"`
	HeapProfile      string        `config:"heap-profile"`
}

// Register defines the common flags on fs with their documented defaults.
func (c *CommonFlags) Register(fs *flag.FlagSet) {
	fs.StringVar(&c.HTTPAddr, "http-addr", DefaultHTTPAddr, "listen address for HTTP (the API in query; health and metrics everywhere); :8080 for every interface")
	fs.DurationVar(&c.HTTPBodyTimeout, "http-body-timeout", DefaultBodyTimeout, "time a client has to send a request body once its headers arrived")
	fs.IntVar(&c.HTTPMaxConns, "http-max-conns-per-client", DefaultMaxConnsPerClient, "open HTTP connections allowed from one remote address (raise it behind a proxy that connects from few addresses)")
	fs.TextVar(&c.LogLevel, "log-level", slog.LevelInfo, "minimum log level: debug, info, warn or error")
	fs.StringVar(&c.LogFormat, "log-format", "json", "log format: json or text")
	fs.StringVar(&c.OTLPEndpoint, "otlp-endpoint", "", "OTLP/gRPC collector as host:port or URL; empty = no trace or metric export")
	fs.BoolVar(&c.OTLPInsecure, "otlp-insecure", false, "connect to a host:port OTLP endpoint without TLS")
	fs.Float64Var(&c.TraceSampleRatio, "trace-sample-ratio", 1, "fraction of new traces sampled, in (0, 1]")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", DefaultShutdownTimeout, "time allowed to drain in-flight work on shutdown")
	fs.DurationVar(&c.DrainDelay, "drain-delay", 0, "on SIGTERM, time /readyz fails while HTTP still serves, before shutdown begins, so a load balancer stops routing here first (Kubernetes: about 5s; counts within -shutdown-timeout)")
	fs.StringVar(&c.DataDir, "data-dir", DefaultDataDir, "directory for embedded stores and the embedded NATS server")
	fs.StringVar(&c.NATSURL, "nats-url", "", "NATS server URL(s); empty = an embedded server in the data dir (graphrag up, eval, mcp; the service binaries have none and need a URL)")
	fs.StringVar(&c.NATSCreds, "nats-creds", "", "path to a NATS user credentials file")
	fs.StringVar(&c.NATSNKey, "nats-nkey", "", "path to a NATS nkey seed file")
	fs.StringVar(&c.NATSTLSCA, "nats-tls-ca", "", "path to a CA certificate bundle for NATS TLS")
	fs.StringVar(&c.NATSTLSCert, "nats-tls-cert", "", "path to a client certificate for NATS TLS")
	fs.StringVar(&c.NATSTLSKey, "nats-tls-key", "", "path to the client certificate's key for NATS TLS")
	fs.StringVar(&c.CPUProfile, "cpu-profile", "", "write a CPU profile of the whole process life to this file (go tool pprof reads it)")
	fs.StringVar(&c.HeapProfile, "heap-profile", "", "write a heap profile to this file when the process ends, before its stores close (what is still held: go tool pprof reads it), and to FILE.N on each SIGUSR1")
}

// Validate reports every inconsistent common flag at once, each a *ConfigError named
// by its flag.
func (c *CommonFlags) Validate() error {
	var p Problems
	OneOf(&p, "-log-format", c.LogFormat, "json", "text")
	Positive(&p, "-shutdown-timeout", c.ShutdownTimeout)
	Positive(&p, "-http-body-timeout", c.HTTPBodyTimeout)
	AtLeast(&p, "-http-max-conns-per-client", c.HTTPMaxConns, 1)
	if c.DrainDelay < 0 || (c.ShutdownTimeout > 0 && c.DrainDelay >= c.ShutdownTimeout) {
		p.Add("-drain-delay", "must be at least 0 and less than -shutdown-timeout %s, got %s", c.ShutdownTimeout, c.DrainDelay)
	}
	if c.TraceSampleRatio <= 0 || c.TraceSampleRatio > 1 {
		p.Add("-trace-sample-ratio", "must be in (0, 1], got %v", c.TraceSampleRatio)
	}
	if (c.NATSTLSCert == "") != (c.NATSTLSKey == "") {
		p.Add("-nats-tls-cert", "and -nats-tls-key go together")
	}
	if c.NATSCreds != "" && c.NATSNKey != "" {
		p.Add("-nats-creds", "and -nats-nkey are alternatives")
	}
	return p.Err()
}

// Logger builds the process logger the flags describe, writing to w.
func (c *CommonFlags) Logger(w io.Writer) *slog.Logger {
	return telemetry.NewLogger(w, c.LogLevel, c.LogFormat)
}

// HTTPLimits are the limits of the HTTP server the flags describe.
func (c *CommonFlags) HTTPLimits() HTTPLimits {
	return HTTPLimits{BodyTimeout: c.HTTPBodyTimeout, MaxConnsPerClient: c.HTTPMaxConns}
}

// TelemetryConfig is the telemetry.Config the flags describe for a service.
func (c *CommonFlags) TelemetryConfig(serviceName, serviceVersion string) telemetry.Config {
	return telemetry.Config{
		ServiceName:    serviceName,
		ServiceVersion: serviceVersion,
		OTLPEndpoint:   c.OTLPEndpoint,
		OTLPInsecure:   c.OTLPInsecure,
		SampleRatio:    c.TraceSampleRatio,
	}
}
