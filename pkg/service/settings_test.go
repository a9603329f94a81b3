package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "graphrag.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// settingsFlagSet is the common flags with -config, as platform.Main registers them.
func settingsFlagSet() (*flag.FlagSet, *CommonFlags) {
	fs, c := newFlagSet()
	RegisterConfigFlag(fs)
	return fs, c
}

func TestReadSettings(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Setting
		wantErr string
	}{
		{"empty", "", nil, ""},
		{"comments only", "# nothing\n", nil, ""},
		{"values", "# c\ntop-k: 12\nlog-format: \"text\"\ndetect-warm: false\nllm-timeout: 90s\n",
			[]Setting{{"top-k", "12", false, 2}, {"log-format", "text", false, 3}, {"detect-warm", "false", false, 4}, {"llm-timeout", "90s", false, 5}}, ""},
		{"no value keeps the default", "data-dir:\nnats-url: ~\n", []Setting{{"data-dir", "", true, 1}, {"nats-url", "", true, 2}}, ""},
		{"empty string is a value", "nats-url: \"\"\n", []Setting{{"nats-url", "", false, 1}}, ""},
		{"key twice", "top-k: 1\n\ntop-k: 2\n", nil, `line 3: key "top-k" already set on line 1`},
		{"list", "top-k:\n  - 1\n", nil, "line 1: top-k: a value is a single"},
		{"mapping", "query:\n  top-k: 1\n", nil, "line 1: query: a value is a single"},
		{"not a mapping", "- top-k\n", nil, "line 1: a settings file is a mapping"},
		{"two documents", "top-k: 1\n---\ntop-k: 2\n", nil, "one YAML document"},
		{"syntax", "top-k: 1\n  bad: [\n", nil, "line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadSettings(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ReadSettings = %v, want error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("ReadSettings = %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("setting %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// A flag wins over its variable, the variable over the file, the file over the default,
// and Sources says which gave each value.
func TestSettingsPrecedence(t *testing.T) {
	file := writeFile(t, "data-dir: /from/file\nlog-format: text\nhttp-addr: 0.0.0.0:9000\nshutdown-timeout:\n")
	t.Setenv("SETTINGSTEST_LOG_FORMAT", "json")
	t.Setenv("SETTINGSTEST_DATA_DIR", "/from/env")
	fs, c := settingsFlagSet()
	if err := ParseFlags(fs, []string{"-config", file, "-data-dir", "/from/flag"}, "SETTINGSTEST"); err != nil {
		t.Fatal(err)
	}
	if c.DataDir != "/from/flag" || c.LogFormat != "json" || c.HTTPAddr != "0.0.0.0:9000" || c.ShutdownTimeout != DefaultShutdownTimeout {
		t.Errorf("data-dir %q (want the flag's), log-format %q (want the env's), http-addr %q (want the file's), shutdown-timeout %s (want the default)",
			c.DataDir, c.LogFormat, c.HTTPAddr, c.ShutdownTimeout)
	}
	want := map[string]Source{
		"config":     {Kind: "flag"},
		"data-dir":   {Kind: "flag"},
		"log-format": {Kind: "env"},
		"http-addr":  {Kind: "file", File: file, Line: 3, Value: "0.0.0.0:9000"},
	}
	if got := Sources(fs); !maps.Equal(got, want) {
		t.Errorf("Sources = %v, want %v", got, want)
	}
}

func TestSettingsFileFromEnvironment(t *testing.T) {
	file := writeFile(t, "log-format: text\n")
	t.Setenv("SETTINGSTEST_CONFIG", file)
	fs, c := settingsFlagSet()
	if err := ParseFlags(fs, nil, "SETTINGSTEST"); err != nil {
		t.Fatal(err)
	}
	if c.LogFormat != "text" {
		t.Errorf("log-format %q, want text from the file SETTINGSTEST_CONFIG names", c.LogFormat)
	}
}

// Without -config a flag set reads no file, even when the variable names one.
func TestNoConfigFlagReadsNoFile(t *testing.T) {
	t.Setenv("SETTINGSTEST_CONFIG", writeFile(t, "log-format: text\n"))
	fs, c := newFlagSet()
	if err := ParseFlags(fs, nil, "SETTINGSTEST"); err != nil {
		t.Fatal(err)
	}
	if c.LogFormat != "json" || Sources(fs) != nil {
		t.Errorf("log-format %q, sources %v: want the default and none", c.LogFormat, Sources(fs))
	}
}

func TestSettingsErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []string // substrings of the error; the file's path is checked for each
	}{
		{"unknown key", "log-format: text\nlog-formatt: json\n", []string{`:2: unknown key "log-formatt"; did you mean "log-format"?`}},
		{"per-run flag", "demo: true\n", []string{`:1: unknown key "demo"`}},
		{"bad value", "http-body-timeout: soon\n", []string{`:1: http-body-timeout "soon": `}},
		{"every problem at once", "log-formatt: x\nhttp-max-conns-per-client: many\n", []string{`:1: unknown key "log-formatt"`, `:2: http-max-conns-per-client "many"`}},
		{"not yaml", "log-format: [\n", []string{"graphrag.yaml: yaml: line"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := writeFile(t, tt.file)
			fs, _ := settingsFlagSet()
			err := ParseFlags(fs, []string{"-config", file}, "")
			if err == nil {
				t.Fatal("ParseFlags accepted the file")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if !strings.Contains(err.Error(), file) {
				t.Errorf("error %q does not name the file %s", err, file)
			}
		})
	}
	fs, _ := settingsFlagSet()
	if err := ParseFlags(fs, []string{"-config", filepath.Join(t.TempDir(), "absent.yaml")}, ""); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v, want an error matching os.ErrNotExist", err)
	}
}

// A key another binary registers (graph-store: the extractor has no graph store) is
// skipped, not refused.
func TestSettingsOtherBinariesKeysIgnored(t *testing.T) {
	file := writeFile(t, "graph-store: neo4j\ntop-k: 7\nlog-format: text\n")
	fs, c := settingsFlagSet()
	if err := ParseFlags(fs, []string{"-config", file}, ""); err != nil {
		t.Fatal(err)
	}
	if c.LogFormat != "text" || fs.Lookup("graph-store") != nil {
		t.Errorf("log-format %q: want text, and graph-store skipped", c.LogFormat)
	}
}

// A value Validate refuses names the file, line, key and value when it came from the
// file, and only then.
func TestWithSources(t *testing.T) {
	file := writeFile(t, "log-format: xml\nshutdown-timeout: 0s\n")
	fs, c := settingsFlagSet()
	if err := ParseFlags(fs, []string{"-config", file, "-http-max-conns-per-client", "0"}, ""); err != nil {
		t.Fatal(err)
	}
	err := WithSources(fs, c.Validate())
	if !errors.Is(err, ErrInvalidFlags) {
		t.Fatalf("WithSources = %v, want ErrInvalidFlags", err)
	}
	for _, w := range []string{
		file + `:1: log-format "xml": must be json or text, got "xml"`,
		file + `:2: shutdown-timeout "0s": must be positive, got 0s`,
		"-http-max-conns-per-client: must be at least 1, got 0",
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
	var se *SettingError
	if !errors.As(err, &se) || se.File != file {
		t.Errorf("errors.As SettingError: %+v", se)
	}
	if WithSources(fs, nil) != nil {
		t.Error("WithSources(nil) is not nil")
	}
}

func TestLogFlagsSources(t *testing.T) {
	file := writeFile(t, "log-format: text\n")
	fs, _ := settingsFlagSet()
	if err := ParseFlags(fs, []string{"-config", file, "-data-dir", "d"}, ""); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	LogFlags(slog.New(slog.NewJSONHandler(&buf, nil)), fs)
	var line struct {
		Config map[string]string `json:"config"`
		Source map[string]string `json:"source"`
	}
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("%v: %s", err, buf.String())
	}
	want := map[string]string{"config": "flag", "data-dir": "flag", "log-format": "file " + file + ":1"}
	if !maps.Equal(line.Source, want) || line.Config["log-format"] != "text" {
		t.Errorf("source %v, want %v; config %v", line.Source, want, line.Config)
	}
}

// The file WriteSettings writes sets nothing, names every flag once with its default,
// and each default written back as the key's value parses to the flag's default.
func TestWriteSettingsRoundTrip(t *testing.T) {
	var c CommonFlags
	common := flag.NewFlagSet("", flag.ContinueOnError)
	c.Register(common)
	var buf bytes.Buffer
	if err := WriteSettings(&buf, []SettingsGroup{{Name: "common", About: "every binary", Flags: common}, {Name: "again", About: "none", Flags: common}}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Contains(out, "== again") {
		t.Error("a group whose flags were all written is written again")
	}
	entries, err := ReadSettings(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	common.VisitAll(func(*flag.Flag) { n++ })
	if len(entries) != n {
		t.Errorf("%d keys, want one per flag (%d)", len(entries), n)
	}
	for _, e := range entries {
		if !e.Null {
			t.Errorf("line %d: %s has a value", e.Line, e.Key)
		}
	}

	filled := fillDefaults(out)
	fs, got := settingsFlagSet()
	if err := ParseFlags(fs, []string{"-config", writeFile(t, filled)}, ""); err != nil {
		t.Fatalf("the defaults written back: %v\n%s", err, filled)
	}
	file := 0
	for _, s := range Sources(fs) {
		if s.Kind == "file" {
			file++
		}
	}
	if file != n {
		t.Errorf("%d flags set from the file, want %d", file, n)
	}
	var want CommonFlags
	def := flag.NewFlagSet("", flag.ContinueOnError)
	want.Register(def)
	if *got != want {
		t.Errorf("parsed back %+v, want the defaults %+v", *got, want)
	}
}

func TestCatalog(t *testing.T) {
	entries, err := ReadSettings(strings.NewReader(string(catalogYAML)))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Null {
			t.Errorf("settings.yaml:%d: %s has a value", e.Line, e.Key)
		}
	}
	fs, _ := newFlagSet()
	fs.VisitAll(func(f *flag.Flag) {
		if !IsSetting(f.Name) {
			t.Errorf("common flag -%s is not in settings.yaml", f.Name)
		}
	})
	if IsSetting(ConfigFlagName) || IsSetting("demo") {
		t.Error("config or demo is a setting")
	}
}

var defaultLine = regexp.MustCompile(`(?m)^# default: (.*)\n([a-z0-9-]+):$`)

// fillDefaults writes each key of a file WriteSettings wrote with its documented default.
func fillDefaults(settings string) string {
	return defaultLine.ReplaceAllString(settings, "# default: $1\n$2: $1")
}

// BenchmarkParseFlagsSettings parses the common flags from the catalog with every key
// given its default: every key checked, 18 set, the others skipped.
func BenchmarkParseFlagsSettings(b *testing.B) {
	p := filepath.Join(b.TempDir(), "graphrag.yaml")
	if err := os.WriteFile(p, []byte(fillDefaults(string(catalogYAML))), 0o600); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		fs, _ := settingsFlagSet()
		if err := ParseFlags(fs, []string{"-config", p}, ""); err != nil {
			b.Fatal(err)
		}
	}
}
