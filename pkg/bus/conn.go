package bus

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// TLSFiles names PEM files for a TLS connection. CAFile alone verifies the
// server; CertFile and KeyFile together add a client certificate.
type TLSFiles struct {
	CAFile   string
	CertFile string
	KeyFile  string
}

// ConnConfig says how to reach NATS. Only URL is required.
type ConnConfig struct {
	// URL is one server URL or a comma-separated list. It may carry
	// user:password, which String masks.
	URL string
	// Name identifies the client in server monitoring.
	Name string
	// CredsFile is a JWT + NKey credentials file (decentralized auth).
	CredsFile string
	// NKeySeedFile is a file holding an NKey seed.
	NKeySeedFile string
	// Token is an auth token (masked by String).
	Token string
	// TLS enables TLS when any file is set.
	TLS TLSFiles
	// ReconnectWait is the first reconnect delay (default 250ms); it doubles
	// per failed attempt up to MaxReconnectWait (default 10s), with jitter.
	ReconnectWait    time.Duration
	MaxReconnectWait time.Duration
	// Logger receives connection events; nil discards them.
	Logger *slog.Logger
}

const masked = "****"

// String describes the config with secrets masked, for the start-up log.
func (c ConnConfig) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "url=%s name=%q", maskURLs(c.URL), c.Name)
	if c.CredsFile != "" {
		fmt.Fprintf(&b, " creds=%s", c.CredsFile)
	}
	if c.NKeySeedFile != "" {
		fmt.Fprintf(&b, " nkey_seed=%s", c.NKeySeedFile)
	}
	if c.Token != "" {
		b.WriteString(" token=" + masked)
	}
	if c.TLS != (TLSFiles{}) {
		fmt.Fprintf(&b, " tls_ca=%s tls_cert=%s tls_key=%s", c.TLS.CAFile, c.TLS.CertFile, c.TLS.KeyFile)
	}
	return b.String()
}

// LogValue implements slog.LogValuer with secrets masked.
func (c ConnConfig) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("url", maskURLs(c.URL)), slog.String("name", c.Name)}
	if c.CredsFile != "" {
		attrs = append(attrs, slog.String("creds_file", c.CredsFile))
	}
	if c.NKeySeedFile != "" {
		attrs = append(attrs, slog.String("nkey_seed_file", c.NKeySeedFile))
	}
	if c.Token != "" {
		attrs = append(attrs, slog.String("token", masked))
	}
	if c.TLS != (TLSFiles{}) {
		attrs = append(attrs, slog.Group("tls",
			slog.String("ca_file", c.TLS.CAFile),
			slog.String("cert_file", c.TLS.CertFile),
			slog.String("key_file", c.TLS.KeyFile)))
	}
	return slog.GroupValue(attrs...)
}

// maskURLs hides passwords (and bare tokens in the user part) in a
// comma-separated server list.
func maskURLs(list string) string {
	parts := strings.Split(list, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if p != "" && !strings.Contains(p, "://") {
			// nats.go reads "user:pw@host" as nats://user:pw@host; url.Parse
			// would see scheme "user" and miss the password.
			p = "nats://" + p
		}
		u, err := url.Parse(p)
		if err != nil {
			// An unparsable URL might still hold a secret: show nothing of it.
			parts[i] = masked
			continue
		}
		if u.User != nil {
			if _, hasPw := u.User.Password(); hasPw {
				u.User = url.UserPassword(u.User.Username(), masked)
			} else {
				// nats://TOKEN@host: the user part is a token.
				u.User = url.User(masked)
			}
		}
		parts[i] = u.String()
	}
	return strings.Join(parts, ",")
}

// defaultConnectTimeout bounds the first connection when ctx has no deadline.
const defaultConnectTimeout = 10 * time.Second

// Connect opens a connection that, once established, reconnects forever with
// exponential backoff and jitter. The first connection is not retried: a
// process that cannot reach NATS at start fails fast and its supervisor
// restarts it.
func Connect(ctx context.Context, cfg ConnConfig) (*nats.Conn, error) {
	if cfg.URL == "" {
		return nil, fmt.Errorf("connecting to NATS: %w: URL is empty", ErrInvalidSpec)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("connecting to NATS at %s: %w", maskURLs(cfg.URL), err)
	}
	opts, err := cfg.natsOptions(ctx)
	if err != nil {
		return nil, fmt.Errorf("connecting to NATS at %s: %w", maskURLs(cfg.URL), err)
	}
	nc, err := nats.Connect(cfg.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("connecting to NATS at %s: %w", maskURLs(cfg.URL), err)
	}
	if err := ctx.Err(); err != nil {
		nc.Close()
		return nil, fmt.Errorf("connecting to NATS at %s: %w", maskURLs(cfg.URL), err)
	}
	return nc, nil
}

func (cfg ConnConfig) natsOptions(ctx context.Context) ([]nats.Option, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	timeout := defaultConnectTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	wait, maxWait := cfg.ReconnectWait, cfg.MaxReconnectWait
	if wait <= 0 {
		wait = 250 * time.Millisecond
	}
	if maxWait <= 0 {
		maxWait = 10 * time.Second
	}
	opts := []nats.Option{
		nats.Name(cfg.Name),
		nats.Timeout(timeout),
		nats.MaxReconnects(-1),
		nats.CustomReconnectDelay(reconnectDelay(wait, maxWait)),
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			// Close reports a disconnection too, without an error: an intended close
			// (every clean shutdown) is no warning.
			if err == nil && nc.IsClosed() {
				log.Debug("nats disconnected: connection closed")
				return
			}
			log.Warn("nats disconnected", "err", err)
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("nats reconnected", "url", maskURLs(nc.ConnectedUrlRedacted()))
		}),
		nats.ClosedHandler(func(*nats.Conn) { log.Info("nats connection closed") }),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			subj := ""
			if sub != nil {
				subj = sub.Subject
			}
			log.Error("nats async error", "subject", subj, "err", err)
		}),
	}
	if cfg.CredsFile != "" && cfg.NKeySeedFile != "" {
		return nil, fmt.Errorf("%w: set CredsFile or NKeySeedFile, not both", ErrInvalidSpec)
	}
	if cfg.CredsFile != "" {
		opts = append(opts, nats.UserCredentials(cfg.CredsFile))
	}
	if cfg.NKeySeedFile != "" {
		o, err := nats.NkeyOptionFromSeed(cfg.NKeySeedFile)
		if err != nil {
			return nil, fmt.Errorf("loading NKey seed %s: %w", cfg.NKeySeedFile, err)
		}
		opts = append(opts, o)
	}
	if cfg.Token != "" {
		opts = append(opts, nats.Token(cfg.Token))
	}
	if (cfg.TLS.CertFile == "") != (cfg.TLS.KeyFile == "") {
		return nil, fmt.Errorf("%w: TLS CertFile and KeyFile go together", ErrInvalidSpec)
	}
	if cfg.TLS.CAFile != "" {
		opts = append(opts, nats.RootCAs(cfg.TLS.CAFile))
	}
	if cfg.TLS.CertFile != "" {
		opts = append(opts, nats.ClientCert(cfg.TLS.CertFile, cfg.TLS.KeyFile))
	}
	return opts, nil
}

// reconnectDelay doubles from wait to maxWait and adds up to 20% jitter so
// that many replicas do not reconnect in lockstep.
func reconnectDelay(wait, maxWait time.Duration) func(attempts int) time.Duration {
	return func(attempts int) time.Duration {
		d := wait
		for i := 1; i < attempts && d < maxWait; i++ {
			d *= 2
		}
		d = min(d, maxWait)
		return d + time.Duration(rand.Int64N(int64(d)/5+1))
	}
}
