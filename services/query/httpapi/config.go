package httpapi

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/graphrag/graphrag/pkg/service"
)

// Config guards the API.
type Config struct {
	// Tokens are the accepted bearer tokens; empty disables authentication.
	Tokens []string
	// MaxBodyBytes bounds a request body.
	MaxBodyBytes int64
	// Timeout bounds one request (a streamed answer included).
	Timeout time.Duration
	// RatePerSecond and Burst limit each client (by token, else by remote address);
	// 0 disables the limit.
	RatePerSecond float64
	Burst         int
}

// DefaultConfig: no auth, 64 KiB bodies, 120 s per request, 20 requests/s per client.
func DefaultConfig() Config {
	return Config{MaxBodyBytes: 64 << 10, Timeout: 120 * time.Second, RatePerSecond: 20, Burst: 40}
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
	fs.StringVar(&f.TokensFile, "api-tokens-file", "", "file with accepted bearer tokens, one per line; with -api-tokens, both are accepted; none = no authentication")
	fs.Var(&f.Tokens, "api-tokens", "accepted bearer tokens, comma-separated")
	fs.Int64Var(&f.MaxBodyBytes, "api-max-body", f.MaxBodyBytes, "largest request body in bytes")
	fs.DurationVar(&f.Timeout, "api-timeout", f.Timeout, "time limit of one request")
	fs.Float64Var(&f.RatePerSecond, "api-rate", f.RatePerSecond, "requests per second per client (0 = unlimited)")
	fs.IntVar(&f.Burst, "api-burst", f.Burst, "burst of requests per client")
}

// Load reads the token file and returns the effective Config.
func (f *Flags) Load() (Config, error) {
	cfg := f.Config
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
		for line := range strings.SplitSeq(string(b), "\n") {
			if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
				cfg.Tokens = append(cfg.Tokens, t)
			}
		}
		if len(cfg.Tokens) == 0 {
			return cfg, fmt.Errorf("-api-tokens-file %s holds no token", f.TokensFile)
		}
	}
	return cfg, nil
}
