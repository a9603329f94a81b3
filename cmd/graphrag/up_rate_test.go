package main

import (
	"flag"
	"testing"
)

// TestUpRateLimitOnLoopback: graphrag up on loopback only serves its one user without a
// per-client rate limit unless -api-rate is given; on other interfaces the default holds.
func TestUpRateLimitOnLoopback(t *testing.T) {
	def := defaultUpConfig().Query.API.RatePerSecond
	for _, tc := range []struct {
		addr string
		args []string
		want float64
	}{
		{"127.0.0.1:8080", nil, 0},
		{"localhost:8080", nil, 0},
		{"[::1]:8080", nil, 0},
		{":8080", nil, def},
		{"0.0.0.0:8080", nil, def},
		{"10.0.0.5:8080", nil, def},
		{"127.0.0.1:8080", []string{"-api-rate", "5"}, 5},
	} {
		cfg := defaultUpConfig()
		fs := flag.NewFlagSet("up", flag.ContinueOnError)
		cfg.Query.API.RegisterFlags(fs)
		cfg.fs = fs
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		cfg.localRate(tc.addr)
		if got := cfg.Query.API.RatePerSecond; got != tc.want {
			t.Errorf("-http-addr %s %v: rate %v, want %v", tc.addr, tc.args, got, tc.want)
		}
	}
}
