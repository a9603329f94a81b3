package service

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// FuzzLogConfigNeverLeaksSecret: whatever a secret holds (quotes, newlines,
// invalid UTF-8), neither handler prints it. The marker prefix makes the
// check independent of what else the line contains.
func FuzzLogConfigNeverLeaksSecret(f *testing.F) {
	for _, s := range []string{"", "plain", `"quoted"`, "new\nline", "\xff\xfe", "****"} {
		f.Add(s)
	}
	const marker = "S3CR3T-MARKER"
	f.Fuzz(func(t *testing.T, s string) {
		secret := Secret(marker + s)
		cfg := struct {
			Key    Secret
			Ptr    *Secret
			Keys   []Secret
			Nested struct{ Key Secret }
		}{Key: secret, Ptr: &secret, Keys: []Secret{secret}}
		cfg.Nested.Key = secret
		for _, h := range []func(*bytes.Buffer) slog.Handler{
			func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
			func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
		} {
			var buf bytes.Buffer
			LogConfig(slog.New(h(&buf)), cfg)
			if strings.Contains(buf.String(), marker) {
				t.Fatalf("secret leaked: %s", buf.String())
			}
		}
	})
}

// FuzzParseFlags feeds arbitrary command lines and environment values: no
// panic, and a flag given on the command line always beats the environment.
func FuzzParseFlags(f *testing.F) {
	f.Add("-http-addr :1", "5s")
	f.Add("-shutdown-timeout", "x")
	f.Add("-log-level=debug -nats-url nats://a", "")
	f.Fuzz(func(t *testing.T, args, env string) {
		if strings.ContainsRune(env, 0) {
			t.Skip("the OS cannot hold NUL in an environment variable")
		}
		t.Setenv("FZ_SHUTDOWN_TIMEOUT", env)
		t.Setenv("FZ_HTTP_ADDR", env)
		fs, c := newFlagSet()
		argv := append(strings.Fields(args), "-http-addr=from-flag")
		if err := ParseFlags(fs, argv, "FZ"); err != nil {
			return // rejected input is fine; panics are not
		}
		// Flags after the first non-flag argument are not parsed at all.
		if fs.NArg() == 0 && c.HTTPAddr != "from-flag" {
			t.Fatalf("HTTPAddr = %q, want the flag's value over env %q", c.HTTPAddr, env)
		}
	})
}
