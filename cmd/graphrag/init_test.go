package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/cmd/graphrag/eval"
	"github.com/graphrag/graphrag/pkg/service"
)

// writeSettings is what graphrag init writes.
func writeSettings(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	if err := service.WriteSettings(&buf, settingsGroups()); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// The catalog every binary checks keys against (pkg/service/settings.yaml, embedded) is
// what graphrag init writes from the components' flags: a flag added without `make docs`
// fails here.
func TestSettingsCatalogIsCurrent(t *testing.T) {
	committed, err := os.ReadFile(filepath.Join("..", "..", "pkg", "service", "settings.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if string(committed) != writeSettings(t) {
		t.Error("pkg/service/settings.yaml differs from what graphrag init writes: run make docs")
	}
}

func TestInit(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "graphrag.yaml")
	var out, errOut bytes.Buffer
	if err := runInit(context.Background(), []string{"-o", file}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != writeSettings(t) {
		t.Error("init -o wrote something else than the settings")
	}
	if err := os.WriteFile(file, []byte("top-k: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = runInit(context.Background(), []string{"-o", file}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "-force") {
		t.Errorf("init over an existing file: %v, want a refusal naming -force", err)
	}
	if kept, _ := os.ReadFile(file); string(kept) != "top-k: 3\n" {
		t.Error("init without -force changed the existing file")
	}
	if err := runInit(context.Background(), []string{"-o", file, "-force"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(file); string(got) != writeSettings(t) {
		t.Error("init -force did not overwrite the file")
	}
	out.Reset()
	if err := runInit(context.Background(), []string{"-o", "-"}, &out, &errOut); err != nil || out.String() != writeSettings(t) {
		t.Errorf("init -o -: %v, or not the settings on stdout", err)
	}
	if err := runInit(context.Background(), []string{"extra"}, &out, &errOut); err == nil {
		t.Error("init accepted an argument")
	}
}

// The answering flags (package ask's) are in the query engine group with the
// retrieval flags, where the settings file and docs/configuration.md list them.
func TestSettingsQueryEngineGroup(t *testing.T) {
	for _, g := range settingsGroups() {
		if g.Name != "query engine" {
			continue
		}
		for _, name := range []string{"top-k", "map-top-k", "global-token-budget", "map-concurrency"} {
			if g.Flags.Lookup(name) == nil {
				t.Errorf("the query engine group has no -%s", name)
			}
		}
		return
	}
	t.Error("no query engine group")
}

var defaultLine = regexp.MustCompile(`(?m)^# default: (.*)\n([a-z0-9-]+):$`)

// filledSettings is the file graphrag init writes with every key given its documented
// default as its value.
func filledSettings(t *testing.T) string {
	t.Helper()
	settings := writeSettings(t)
	filled := defaultLine.ReplaceAllString(settings, "# default: $1\n$2: $1")
	entries, err := service.ReadSettings(strings.NewReader(filled))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Null {
			t.Fatalf("line %d: %s has no documented default", e.Line, e.Key)
		}
	}
	return filled
}

// The file graphrag init writes sets nothing; with every documented default written as
// its key's value, it parses back to the defaults in every component.
func TestSettingsRoundTrip(t *testing.T) {
	settings := writeSettings(t)
	entries, err := service.ReadSettings(strings.NewReader(settings))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Null {
			t.Errorf("line %d: %s has a value", e.Line, e.Key)
		}
	}
	filledPath := filepath.Join(t.TempDir(), "filled.yaml")
	if err := os.WriteFile(filledPath, []byte(filledSettings(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, g := range settingsGroups() {
		t.Run(g.Name, func(t *testing.T) {
			fs := g.Flags
			fs.SetOutput(io.Discard)
			service.RegisterConfigFlag(fs)
			if err := service.ParseFlags(fs, []string{"-config", filledPath}, ""); err != nil {
				t.Fatal(err)
			}
			src := service.Sources(fs)
			fs.VisitAll(func(f *flag.Flag) {
				if f.Name == service.ConfigFlagName {
					return
				}
				if src[f.Name].Kind != "file" {
					t.Errorf("-%s not set from the file", f.Name)
				}
				if f.Value.String() != f.DefValue {
					t.Errorf("-%s parsed back as %q, want the default %q", f.Name, f.Value.String(), f.DefValue)
				}
			})
		})
	}
}

// graphrag up, mcp and eval take -config: given the settings with every default filled
// in and one invalid value, each refuses that value alone (every other key is known,
// parses and validates), naming the file, line, key and value, before starting anything.
func TestCommandsReadSettings(t *testing.T) {
	filled := filledSettings(t)
	bad := strings.Replace(filled, "\nlog-format: json\n", "\nlog-format: xml\n", 1)
	if bad == filled {
		t.Fatal("no log-format line in the settings")
	}
	file := filepath.Join(t.TempDir(), "graphrag.yaml")
	if err := os.WriteFile(file, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	line := 1 + strings.Count(bad[:strings.Index(bad, "\nlog-format: xml\n")+1], "\n")
	want := file + ":" + strconv.Itoa(line) + `: log-format "xml": must be json or text, got "xml"`
	for name, run := range map[string]func(context.Context, []string, io.Writer, io.Writer) error{
		"up": runUp, "mcp": runMCP, "eval": eval.Run,
	} {
		t.Run(name, func(t *testing.T) {
			err := run(context.Background(), []string{"-config", file, "-data-dir", t.TempDir()}, io.Discard, io.Discard)
			if err == nil || err.Error() != want {
				t.Errorf("%s -config: %v, want exactly %q", name, err, want)
			}
		})
	}
}

// Every flag of graphrag up and mcp is a setting, except the per-run flags of up.
func TestEveryFlagIsASetting(t *testing.T) {
	perRun := map[string]bool{service.ConfigFlagName: true, "demo": true, "examples": true, "corpus": true}
	flagName := regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`)
	for name, run := range map[string]func(context.Context, []string, io.Writer, io.Writer) error{"up": runUp, "mcp": runMCP} {
		var help bytes.Buffer
		if err := run(context.Background(), []string{"-h"}, io.Discard, &help); err != nil {
			t.Fatal(err)
		}
		flags := flagName.FindAllStringSubmatch(help.String(), -1)
		if len(flags) < 50 {
			t.Fatalf("%s -h lists %d flags", name, len(flags))
		}
		for _, m := range flags {
			if !perRun[m[1]] && !service.IsSetting(m[1]) {
				t.Errorf("%s -%s is not a key of the settings file", name, m[1])
			}
		}
	}
}
