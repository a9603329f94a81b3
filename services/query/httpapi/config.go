package httpapi

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/graphrag/graphrag/pkg/service"
	"github.com/graphrag/graphrag/services/query/access"
)

// Config guards the API. New gives MaxUploadBytes, MaxBodyBytes and Timeout their
// DefaultConfig value when zero; Validate rejects what New would not run with.
type Config struct {
	// Tokens are accepted bearer tokens that may do everything (admin on every corpus);
	// with Scoped empty too, authentication is off.
	Tokens []string
	// Scoped are accepted bearer tokens with their grants (access.ParseTokens).
	Scoped []access.Token
	// MaxUploadBytes bounds the body of a document upload (JSON or multipart); the
	// other routes are bounded by MaxBodyBytes.
	MaxUploadBytes int64
	// MaxBodyBytes bounds a request body.
	MaxBodyBytes int64
	// Timeout bounds one request (a streamed answer included).
	Timeout time.Duration
	// RatePerSecond and Burst (at least 1 with a rate) limit each client (by token, else
	// by remote address); a RatePerSecond of 0 disables the limit.
	RatePerSecond float64
	Burst         int
}

// withDefaults gives the zero fields that stand for a default (see Config) their
// DefaultConfig value.
func (c Config) withDefaults() Config {
	service.FillZeros(&c, DefaultConfig(), "MaxUploadBytes", "MaxBodyBytes", "Timeout")
	return c
}

// Validate names the flag of every invalid body limit, timeout or rate.
func (c Config) Validate() error {
	var p service.Problems
	service.AtLeast(&p, "-api-max-upload", c.MaxUploadBytes, 1)
	service.AtLeast(&p, "-api-max-body", c.MaxBodyBytes, 1)
	service.Positive(&p, "-api-timeout", c.Timeout)
	service.AtLeast(&p, "-api-rate", c.RatePerSecond, 0)
	if c.RatePerSecond > 0 {
		service.AtLeast(&p, "-api-burst", c.Burst, 1)
	}
	return p.Err()
}

// DefaultConfig: no auth, 64 KiB bodies, 64 MiB uploads, 120 s per request, 20
// requests/s per client.
func DefaultConfig() Config {
	return Config{MaxBodyBytes: 64 << 10, MaxUploadBytes: 64 << 20, Timeout: 120 * time.Second, RatePerSecond: 20, Burst: 40}
}

// Flags are the API's guard flags: Config with the tokens given inline (masked in the
// logged configuration) or in a file.
type Flags struct {
	Config
	TokensFile string
	Tokens     service.Secret
}

// DefaultFlags are the flags of DefaultConfig.
func DefaultFlags() Flags { return Flags{Config: DefaultConfig()} }

// RegisterFlags adds the API flags with the current values as defaults.
func (f *Flags) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&f.TokensFile, "api-tokens-file", "", "file of accepted bearer tokens, one per line: TOKEN (admin on every corpus) or TOKEN SCOPE CORPORA (SCOPE read, write or admin; CORPORA a comma-separated list or *); with -api-tokens, both are accepted; none = no authentication")
	fs.Var(&f.Tokens, "api-tokens", "accepted bearer tokens, comma-separated, each admin on every corpus")
	fs.Int64Var(&f.MaxBodyBytes, "api-max-body", f.MaxBodyBytes, "largest request body in bytes (uploads: -api-max-upload)")
	fs.Int64Var(&f.MaxUploadBytes, "api-max-upload", f.MaxUploadBytes, "largest document upload (JSON or multipart body) in bytes")
	fs.DurationVar(&f.Timeout, "api-timeout", f.Timeout, "time limit of one request")
	fs.Float64Var(&f.RatePerSecond, "api-rate", f.RatePerSecond, "requests per second per client (0 = unlimited)")
	fs.IntVar(&f.Burst, "api-burst", f.Burst, "burst of requests per client")
}

// Load reads the token file and returns the effective Config, zero fields with their
// defaults, or the reasons it is invalid.
func (f *Flags) Load() (Config, error) {
	cfg := f.withDefaults()
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	cfg.Tokens = nil
	for t := range strings.SplitSeq(f.Tokens.Value(), ",") {
		if t = strings.TrimSpace(t); t != "" {
			cfg.Tokens = append(cfg.Tokens, t)
		}
	}
	if f.TokensFile != "" {
		b, err := os.ReadFile(f.TokensFile)
		if err != nil {
			return cfg, fmt.Errorf("reading -api-tokens-file: %w", err)
		}
		toks, err := access.ParseTokens(bytes.NewReader(b))
		if err != nil {
			return cfg, fmt.Errorf("-api-tokens-file %s: %w", f.TokensFile, err)
		}
		for _, t := range toks {
			if len(t.Grant.Corpora) == 1 && t.Grant.All() && t.Grant.Scope == access.Admin {
				cfg.Tokens = append(cfg.Tokens, t.Secret)
			} else {
				cfg.Scoped = append(cfg.Scoped, t)
			}
		}
		if len(toks) == 0 {
			return cfg, fmt.Errorf("-api-tokens-file %s holds no token", f.TokensFile)
		}
	}
	return cfg, nil
}
