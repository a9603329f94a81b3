package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// Problems reports every invalid value at once, each named, each matching
// ErrInvalidFlags; nothing recorded is no error.
func TestProblems(t *testing.T) {
	var none Problems
	AtLeast(&none, "-workers", 1, 1)
	Positive(&none, "-timeout", time.Second)
	Within(&none, "-ratio", 1.0, 0, 1)
	WithinOpen(&none, "-damping", 0.5, 0, 1)
	OneOf(&none, "-mode", "a", "a", "b")
	none.Join(nil)
	if err := none.Err(); err != nil {
		t.Fatalf("valid values: %v", err)
	}

	var p Problems
	AtLeast(&p, "-workers", 0, 1)
	Positive(&p, "-timeout", -time.Second)
	Within(&p, "-entity-min-similarity", 1.5, 0, 1)
	WithinOpen(&p, "-damping", 1.0, 0, 1)
	OneOf(&p, "-mode", "c", "a", "b")
	p.Join(errors.New("nested"))
	err := p.Err()
	if !errors.Is(err, ErrInvalidFlags) {
		t.Errorf("%v does not match ErrInvalidFlags", err)
	}
	for _, want := range []string{
		"-workers: must be at least 1, got 0",
		"-timeout: must be positive, got -1s",
		"-entity-min-similarity: must be in [0, 1], got 1.5",
		"-damping: must be in (0, 1), got 1",
		`-mode: must be a or b, got "c"`,
		"nested",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// FillZeros replaces a zero and only a zero, of the named fields only, and panics on a
// name that is no field.
func TestFillZeros(t *testing.T) {
	type cfg struct {
		Zero, Negative, Set, Unnamed int
		Name                         string
	}
	def := cfg{Zero: 5, Negative: 5, Set: 5, Unnamed: 5, Name: "default"}
	c := cfg{Negative: -1, Set: 7}
	FillZeros(&c, def, "Zero", "Negative", "Set", "Name")
	if want := (cfg{Zero: 5, Negative: -1, Set: 7, Name: "default"}); c != want {
		t.Errorf("FillZeros gave %+v, want %+v", c, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("no panic for a field that does not exist")
		}
	}()
	FillZeros(&c, def, "Missing")
}

// LogFlags logs one line with every flag the set defines, given or not, and a Secret
// masked.
func TestLogFlags(t *testing.T) {
	const secret = "sk-live-abcdef123456"
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	var key Secret
	fs.Var(&key, "llm-api-key", "")
	fs.Int("chunk-tokens", 600, "")
	fs.Duration("timeout", time.Minute, "")
	if err := fs.Parse([]string{"-llm-api-key", secret, "-chunk-tokens", "300"}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	LogFlags(slog.New(slog.NewJSONHandler(&buf, nil)), fs)
	if strings.Count(buf.String(), "\n") != 1 || strings.Contains(buf.String(), secret) {
		t.Fatalf("want one line without the secret:\n%s", buf.String())
	}
	var line struct {
		Msg    string            `json:"msg"`
		Config map[string]string `json:"config"`
	}
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"llm-api-key": Mask, "chunk-tokens": "300", "timeout": "1m0s"}
	if line.Msg != "effective configuration" || len(line.Config) != len(want) {
		t.Fatalf("logged %+v, want %v", line, want)
	}
	for k, v := range want {
		if line.Config[k] != v {
			t.Errorf("%s = %q, want %q", k, line.Config[k], v)
		}
	}
	LogFlags(nil, fs) // a nil logger is a no-op, not a panic
}
