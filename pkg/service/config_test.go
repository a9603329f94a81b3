package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func newFlagSet() (*flag.FlagSet, *CommonFlags) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var c CommonFlags
	c.Register(fs)
	return fs, &c
}

func TestParseFlagsPrecedence(t *testing.T) {
	tests := []struct {
		name   string
		prefix string
		env    map[string]string
		args   []string
		want   string
		wantTO time.Duration
	}{
		{name: "defaults", prefix: "SVC", want: DefaultHTTPAddr, wantTO: DefaultShutdownTimeout},
		{name: "env only", prefix: "SVC", env: map[string]string{"SVC_HTTP_ADDR": ":9000", "SVC_SHUTDOWN_TIMEOUT": "5s"}, want: ":9000", wantTO: 5 * time.Second},
		{name: "flag only", prefix: "SVC", args: []string{"-http-addr", ":9001"}, want: ":9001", wantTO: DefaultShutdownTimeout},
		{name: "flag wins over env", prefix: "SVC", env: map[string]string{"SVC_HTTP_ADDR": ":9000"}, args: []string{"-http-addr=:9001"}, want: ":9001", wantTO: DefaultShutdownTimeout},
		{name: "lower-case prefix is upper-cased", prefix: "svc", env: map[string]string{"SVC_HTTP_ADDR": ":9002"}, want: ":9002", wantTO: DefaultShutdownTimeout},
		{name: "other prefix ignored", prefix: "SVC", env: map[string]string{"OTHER_HTTP_ADDR": ":9003"}, want: DefaultHTTPAddr, wantTO: DefaultShutdownTimeout},
		{name: "empty prefix reads no env", prefix: "", env: map[string]string{"HTTP_ADDR": ":9004", "_HTTP_ADDR": ":9005"}, want: DefaultHTTPAddr, wantTO: DefaultShutdownTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			fs, c := newFlagSet()
			if err := ParseFlags(fs, tt.args, tt.prefix); err != nil {
				t.Fatalf("ParseFlags: %v", err)
			}
			if c.HTTPAddr != tt.want {
				t.Errorf("HTTPAddr = %q, want %q", c.HTTPAddr, tt.want)
			}
			if c.ShutdownTimeout != tt.wantTO {
				t.Errorf("ShutdownTimeout = %s, want %s", c.ShutdownTimeout, tt.wantTO)
			}
		})
	}
}

func TestParseFlagsEnvNaming(t *testing.T) {
	t.Setenv("GRAPHER_NATS_TLS_CA", "/ca.pem")
	t.Setenv("GRAPHER_LOG_LEVEL", "debug")
	t.Setenv("GRAPHER_OTLP_INSECURE", "true")
	fs, c := newFlagSet()
	var custom string
	fs.StringVar(&custom, "llm.model", "none", "a dotted flag")
	t.Setenv("GRAPHER_LLM_MODEL", "m1")
	if err := ParseFlags(fs, nil, "GRAPHER"); err != nil {
		t.Fatalf("ParseFlags: %v", err)
	}
	if c.NATSTLSCA != "/ca.pem" || c.LogLevel != slog.LevelDebug || !c.OTLPInsecure || custom != "m1" {
		t.Errorf("env not applied: ca=%q level=%v insecure=%v custom=%q", c.NATSTLSCA, c.LogLevel, c.OTLPInsecure, custom)
	}
}

func TestEnvVarName(t *testing.T) {
	tests := []struct{ prefix, flag, want string }{
		{"SVC", "http-addr", "SVC_HTTP_ADDR"},
		{"query", "nats-tls-cert", "QUERY_NATS_TLS_CERT"},
		{"X", "llm.api-key", "X_LLM_API_KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.flag, func(t *testing.T) {
			if got := EnvVarName(tt.prefix, tt.flag); got != tt.want {
				t.Errorf("EnvVarName(%q, %q) = %q, want %q", tt.prefix, tt.flag, got, tt.want)
			}
		})
	}
}

func TestParseFlagsErrors(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		wantHelp bool
		wantText string
	}{
		{name: "help", args: []string{"-help"}, wantHelp: true},
		{name: "unknown flag", args: []string{"-nope"}, wantText: "nope"},
		{name: "bad env duration", env: map[string]string{"SVC_SHUTDOWN_TIMEOUT": "soon"}, wantText: "SVC_SHUTDOWN_TIMEOUT"},
		{name: "bad env level", env: map[string]string{"SVC_LOG_LEVEL": "loud"}, wantText: "SVC_LOG_LEVEL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			fs, _ := newFlagSet()
			err := ParseFlags(fs, tt.args, "SVC")
			if err == nil {
				t.Fatal("ParseFlags succeeded, want an error")
			}
			if got := errors.Is(err, flag.ErrHelp); got != tt.wantHelp {
				t.Errorf("errors.Is(err, flag.ErrHelp) = %v, want %v (err %v)", got, tt.wantHelp, err)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("error %q does not mention %q", err, tt.wantText)
			}
		})
	}
}

func TestParseFlagsUsageNamesEnv(t *testing.T) {
	fs, _ := newFlagSet()
	for range 2 { // a second call must not repeat the note
		if err := ParseFlags(fs, nil, "SVC"); err != nil {
			t.Fatalf("ParseFlags: %v", err)
		}
	}
	usage := fs.Lookup("http-addr").Usage
	if strings.Count(usage, "(env SVC_HTTP_ADDR)") != 1 {
		t.Errorf("usage %q should name SVC_HTTP_ADDR once", usage)
	}
	var buf bytes.Buffer
	fs.SetOutput(&buf)
	fs.PrintDefaults()
	if !strings.Contains(buf.String(), `(default "127.0.0.1:8080")`) {
		t.Errorf("defaults are not documented:\n%s", buf.String())
	}
}

func TestSecret(t *testing.T) {
	const value = "hunter2-very-secret"
	s := Secret(value)
	var unset Secret
	wrapped := struct {
		Key  Secret
		Keys []Secret
	}{s, []Secret{s}}
	js, err := json.Marshal(wrapped)
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	var fv Secret
	if err := fv.Set(value); err != nil {
		t.Fatalf("Set: %v", err)
	}

	tests := []struct{ name, got, want string }{
		{"String", s.String(), Mask},
		{"unset String", unset.String(), ""},
		{"Sprint", fmt.Sprint(s), Mask},
		{"%s", fmt.Sprintf("%s", s), Mask}, //nolint:staticcheck // S1025: the row checks the %s verb, not String
		{"%v in struct", fmt.Sprintf("%v", wrapped), "{" + Mask + " [" + Mask + "]}"},
		{"%#v", fmt.Sprintf("%#v", s), `service.Secret("` + Mask + `")`},
		{"LogValue", s.LogValue().String(), Mask},
		{"json", string(js), `{"Key":"` + Mask + `","Keys":["` + Mask + `"]}`},
		{"Value", s.Value(), value},
		{"flag Set", fv.Value(), value},
		{"flag String", fv.String(), Mask},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}

type nestedConfig struct {
	CommonFlags
	APIKey   Secret  `config:"api-key"`
	Optional *Secret `config:"optional-key"`
	Missing  *Secret
	Keys     []Secret
	ByName   map[string]Secret
	LLM      struct {
		Model   string
		Token   Secret
		Timeout time.Duration
	} `config:"llm"`
	Skipped  string `config:"-"`
	internal string
}

func TestLogConfig(t *testing.T) {
	const secret = "sk-live-abcdef123456"
	opt := Secret("opt-" + secret)
	cfg := nestedConfig{
		APIKey:   secret,
		Optional: &opt,
		Keys:     []Secret{secret},
		ByName:   map[string]Secret{"a": secret},
		Skipped:  "skipped-value",
		internal: "internal-value",
	}
	cfg.HTTPAddr = ":1234"
	cfg.ShutdownTimeout = 3 * time.Second
	cfg.LLM.Model = "gpt"
	cfg.LLM.Token = secret

	for _, format := range []string{"json", "text"} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			var logger *slog.Logger
			if format == "json" {
				logger = slog.New(slog.NewJSONHandler(&buf, nil))
			} else {
				logger = slog.New(slog.NewTextHandler(&buf, nil))
			}
			LogConfig(logger, &cfg)
			out := buf.String()
			if strings.Count(out, "\n") != 1 {
				t.Errorf("want exactly one log line, got:\n%s", out)
			}
			for _, leak := range []string{secret, "skipped-value", "internal-value"} {
				if strings.Contains(out, leak) {
					t.Errorf("output contains %q:\n%s", leak, out)
				}
			}
			if !strings.Contains(out, Mask) {
				t.Errorf("output lacks the mask:\n%s", out)
			}
			if format == "text" {
				for _, want := range []string{"config.http-addr=:1234", "config.api-key=****", "config.llm.Model=gpt", "config.llm.Token=****", "config.optional-key=****", "config.shutdown-timeout=3s"} {
					if !strings.Contains(out, want) {
						t.Errorf("text output lacks %q:\n%s", want, out)
					}
				}
				return
			}
			var line struct {
				Msg    string         `json:"msg"`
				Config map[string]any `json:"config"`
			}
			if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, out)
			}
			want := map[string]any{
				"http-addr":    ":1234",
				"api-key":      Mask,
				"optional-key": Mask,
				"Missing":      nil,
				"llm.Model":    "gpt",
				"llm.Token":    Mask,
				"log-format":   "",
				"nats-url":     "",
			}
			for k, v := range want {
				got, ok := line.Config[k]
				if !ok || got != v {
					t.Errorf("config[%q] = %v (present %v), want %v", k, got, ok, v)
				}
			}
			for _, absent := range []string{"Skipped", "internal", "CommonFlags.http-addr", "LLM"} {
				if _, ok := line.Config[absent]; ok {
					t.Errorf("config has key %q", absent)
				}
			}
		})
	}
}

func TestLogConfigNonStruct(t *testing.T) {
	var buf bytes.Buffer
	LogConfig(slog.New(slog.NewJSONHandler(&buf, nil)), Secret("x-secret"))
	if strings.Contains(buf.String(), "x-secret") || !strings.Contains(buf.String(), Mask) {
		t.Errorf("non-struct config leaked or lost: %s", buf.String())
	}
	LogConfig(nil, struct{}{}) // a nil logger is a no-op, not a panic
}

func TestCommonFlagsValidate(t *testing.T) {
	valid := func() CommonFlags {
		fs, c := newFlagSet()
		if err := fs.Parse(nil); err != nil {
			t.Fatalf("parse: %v", err)
		}
		return *c
	}
	tests := []struct {
		name    string
		mutate  func(*CommonFlags)
		wantErr string
	}{
		{"defaults", func(*CommonFlags) {}, ""},
		{"bad format", func(c *CommonFlags) { c.LogFormat = "xml" }, "log-format"},
		{"zero timeout", func(c *CommonFlags) { c.ShutdownTimeout = 0 }, "shutdown-timeout"},
		{"bad ratio", func(c *CommonFlags) { c.TraceSampleRatio = 2 }, "trace-sample-ratio"},
		{"cert without key", func(c *CommonFlags) { c.NATSTLSCert = "c.pem" }, "nats-tls-key"},
		{"creds and nkey", func(c *CommonFlags) { c.NATSCreds, c.NATSNKey = "a", "b" }, "alternatives"},
		{"no body timeout", func(c *CommonFlags) { c.HTTPBodyTimeout = 0 }, "http-body-timeout"},
		{"no connections", func(c *CommonFlags) { c.HTTPMaxConns = 0 }, "http-max-conns-per-client"},
		{"negative drain", func(c *CommonFlags) { c.DrainDelay = -time.Second }, "drain-delay"},
		{"drain past the shutdown", func(c *CommonFlags) { c.DrainDelay = c.ShutdownTimeout }, "drain-delay"},
		{"drain within the shutdown", func(c *CommonFlags) { c.DrainDelay = c.ShutdownTimeout / 2 }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid()
			tt.mutate(&c)
			err := c.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidFlags) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Validate = %v, want ErrInvalidFlags mentioning %q", err, tt.wantErr)
			}
		})
	}
}

func TestCommonFlagsHelpers(t *testing.T) {
	fs, c := newFlagSet()
	if err := fs.Parse([]string{"-log-format=text", "-log-level=warn", "-otlp-endpoint=collector:4317", "-trace-sample-ratio=0.25"}); err != nil {
		t.Fatalf("parse: %v", err)
	}
	var buf bytes.Buffer
	logger := c.Logger(&buf)
	logger.Info("dropped")
	logger.Warn("kept")
	if out := buf.String(); strings.Contains(out, "dropped") || !strings.Contains(out, "level=WARN msg=kept") {
		t.Errorf("logger output %q: want text at warn level", out)
	}
	tc := c.TelemetryConfig("grapher", "v1")
	if tc.ServiceName != "grapher" || tc.ServiceVersion != "v1" || tc.OTLPEndpoint != "collector:4317" || tc.SampleRatio != 0.25 {
		t.Errorf("TelemetryConfig = %+v", tc)
	}
}
