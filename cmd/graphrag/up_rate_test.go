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

// TestDemoHintFollowsHTTPAddr: the address graphrag up prints, and the query command it
// suggests, follow -http-addr; the suggestion needs no -api only at the default address.
func TestDemoHintFollowsHTTPAddr(t *testing.T) {
	for _, tc := range []struct{ addr, base, hint string }{
		{"127.0.0.1:8080", "http://127.0.0.1:8080", `graphrag query -corpus demo "..."`},
		{"127.0.0.1:9090", "http://127.0.0.1:9090", `graphrag query -api http://127.0.0.1:9090 -corpus demo "..."`},
		{":8081", "http://localhost:8081", `graphrag query -api http://localhost:8081 -corpus demo "..."`},
		{"[::1]:8080", "http://[::1]:8080", `graphrag query -api http://[::1]:8080 -corpus demo "..."`},
	} {
		fs := flag.NewFlagSet("up", flag.ContinueOnError)
		fs.String("http-addr", tc.addr, "")
		base := apiBase(fs.Lookup("http-addr"))
		if base != tc.base || queryHint(base, "demo") != tc.hint {
			t.Errorf("-http-addr %s: %s and %q, want %s and %q", tc.addr, base, queryHint(base, "demo"), tc.base, tc.hint)
		}
	}
}
