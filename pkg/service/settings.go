package service

import (
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// ConfigFlagName is the flag naming the settings file; its environment variable is
// PREFIX_CONFIG (GRAPHRAG_CONFIG).
const ConfigFlagName = "config"

// maxSettingsSize bounds the settings file read: every key of every binary with its
// comment is about 40 KiB.
const maxSettingsSize = 1 << 20

// catalogYAML is the settings file `graphrag init` writes: every key any binary accepts,
// each without a value. `make docs` regenerates it, `make check-docs` and a test of
// cmd/graphrag fail when it differs from the binaries' flags. A binary refuses a key that
// is not in it, and ignores one that is but that it does not register.
//
//go:embed settings.yaml
var catalogYAML []byte

// catalog is the set of known keys, read once from catalogYAML.
var catalog = sync.OnceValue(func() map[string]bool {
	entries, err := ReadSettings(strings.NewReader(string(catalogYAML)))
	if err != nil {
		panic("service: the embedded settings.yaml does not parse: " + err.Error())
	}
	known := make(map[string]bool, len(entries))
	for _, e := range entries {
		known[e.Key] = true
	}
	return known
})

// IsSetting reports whether key is a key of the settings file: the name of a flag of
// some binary's components (a per-run flag such as -demo or -dataset is not).
func IsSetting(key string) bool { return catalog()[key] }

// Setting is one key of a settings file with its value.
type Setting struct {
	Key   string
	Value string // the scalar as written, without quotes
	Null  bool   // no value (`key:`, `key: ~`): the key keeps its default
	Line  int
}

// ReadSettings reads a settings file: one YAML mapping of keys to single values (a
// string, number, boolean or duration, as the flag of the same name takes it). It
// refuses a list or mapping as a value, a key given twice and anything but one mapping.
// Errors name the line.
func ReadSettings(r io.Reader) ([]Setting, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxSettingsSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxSettingsSize {
		return nil, fmt.Errorf("larger than %d bytes", maxSettingsSize)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil // an empty file sets nothing
		}
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("line %d: a settings file holds one YAML document", extra.Line)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil // comments only
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: a settings file is a mapping of keys to values", root.Line)
	}
	seen := map[string]int{}
	out := make([]Setting, 0, len(root.Content)/2)
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: a key is a flag's name", k.Line)
		}
		if first, dup := seen[k.Value]; dup {
			return nil, fmt.Errorf("line %d: key %q already set on line %d", k.Line, k.Value, first)
		}
		seen[k.Value] = k.Line
		if v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		if v.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: %s: a value is a single string, number, boolean or duration, not a list or mapping", k.Line, k.Value)
		}
		s := Setting{Key: k.Value, Value: v.Value, Line: k.Line}
		if v.Tag == "!!null" {
			s.Value, s.Null = "", true
		}
		out = append(out, s)
	}
	return out, nil
}

// SettingError is a value of the settings file that cannot be used, named by the file,
// line, key and value: its flag refused it, or Validate did. It matches ErrInvalidFlags.
type SettingError struct {
	File  string
	Line  int
	Key   string
	Value string
	Err   error
}

func (e *SettingError) Error() string {
	msg := e.Err.Error()
	if ce, ok := errors.AsType[*ConfigError](e.Err); ok {
		msg = ce.Problem
	}
	return fmt.Sprintf("%s:%d: %s %q: %s", e.File, e.Line, e.Key, e.Value, msg)
}

func (e *SettingError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrInvalidFlags) true.
func (e *SettingError) Is(target error) bool { return target == ErrInvalidFlags }

// UnknownSettingError is a key of the settings file that no binary knows: a typo, or a
// per-run flag (-demo) that is not a setting. It matches ErrInvalidFlags.
type UnknownSettingError struct {
	File string
	Line int
	Key  string
}

func (e *UnknownSettingError) Error() string {
	return fmt.Sprintf("%s:%d: unknown key %q%s", e.File, e.Line, e.Key, suggest(e.Key))
}

// Is makes errors.Is(err, ErrInvalidFlags) true.
func (e *UnknownSettingError) Is(target error) bool { return target == ErrInvalidFlags }

// Source says where a flag got its value.
type Source struct {
	Kind string // "flag", "env" or "file"
	File string // with "file"
	Line int    // with "file"
	// Value is the value as the file writes it, with "file".
	Value string
}

func (s Source) String() string {
	if s.Kind == "file" {
		return fmt.Sprintf("file %s:%d", s.File, s.Line)
	}
	return s.Kind
}

// settingsFile is the value of -config: the path, and, once ParseFlags has run, where
// each flag given a value got it.
type settingsFile struct {
	path    string
	sources map[string]Source
}

func (s *settingsFile) String() string {
	if s == nil {
		return ""
	}
	return s.path
}

func (s *settingsFile) Set(v string) error {
	s.path = v
	return nil
}

// RegisterConfigFlag defines -config on fs: ParseFlags then reads the settings file it
// names, after the command line and the environment.
func RegisterConfigFlag(fs *flag.FlagSet) {
	fs.Var(&settingsFile{}, ConfigFlagName, "settings `file` (YAML; graphrag init writes one): a key is a flag's name, a flag or environment variable wins over it; keys of components this binary does not run are ignored, unknown keys refused")
}

func settingsOf(fs *flag.FlagSet) *settingsFile {
	f := fs.Lookup(ConfigFlagName)
	if f == nil {
		return nil
	}
	s, _ := f.Value.(*settingsFile)
	return s
}

// Sources returns where each flag of fs given a value got it (the command line, the
// environment or the settings file), or nil when fs has no -config flag.
func Sources(fs *flag.FlagSet) map[string]Source {
	if s := settingsOf(fs); s != nil {
		return maps.Clone(s.sources)
	}
	return nil
}

// parser applies the settings file to fs for ff: every key is checked against the
// catalog, so a typo is an error even when nothing here would have read it; a value is
// set only on a flag the command line and the environment left alone.
func (s *settingsFile) parser(fs *flag.FlagSet) func(io.Reader, func(string, string) error) error {
	return func(r io.Reader, _ func(string, string) error) error {
		entries, err := ReadSettings(r)
		if err != nil {
			return fmt.Errorf("%s: %w", s.path, err)
		}
		given := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
		var errs []error
		for _, e := range entries {
			if !IsSetting(e.Key) {
				errs = append(errs, &UnknownSettingError{File: s.path, Line: e.Line, Key: e.Key})
				continue
			}
			if e.Null || given[e.Key] || fs.Lookup(e.Key) == nil {
				continue // the default, a flag or variable wins, or another binary's key
			}
			if err := fs.Set(e.Key, e.Value); err != nil {
				errs = append(errs, &SettingError{File: s.path, Line: e.Line, Key: e.Key, Value: e.Value, Err: err})
				continue
			}
			s.sources[e.Key] = Source{Kind: "file", File: s.path, Line: e.Line, Value: e.Value}
		}
		return errors.Join(errs...)
	}
}

// recordSources notes, after parsing, which of the flags not set from the file came
// from the command line (args parsed again into a set of the same names that stores
// nothing) and which from the environment.
func (s *settingsFile) recordSources(fs *flag.FlagSet, args []string) {
	shadow := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	shadow.SetOutput(io.Discard)
	fs.VisitAll(func(f *flag.Flag) {
		b, ok := f.Value.(interface{ IsBoolFlag() bool })
		shadow.Var(discard(ok && b.IsBoolFlag()), f.Name, "")
	})
	_ = shadow.Parse(args) // fs parsed the same args without error
	onLine := map[string]bool{}
	shadow.Visit(func(f *flag.Flag) { onLine[f.Name] = true })
	fs.Visit(func(f *flag.Flag) {
		switch {
		case onLine[f.Name]:
			s.sources[f.Name] = Source{Kind: "flag"}
		case s.sources[f.Name].Kind != "file":
			s.sources[f.Name] = Source{Kind: "env"}
		}
	})
}

// discard is a flag.Value that keeps nothing; true makes it a boolean flag.
type discard bool

func (discard) String() string     { return "" }
func (discard) Set(string) error   { return nil }
func (d discard) IsBoolFlag() bool { return bool(d) }

// WithSources names the settings file, line, key and value in each problem of err (a
// Validate error) whose flag got its value from the file: a *ConfigError becomes a
// *SettingError. Other problems are kept as they are.
func WithSources(fs *flag.FlagSet, err error) error {
	s := settingsOf(fs)
	if err == nil || s == nil || len(s.sources) == 0 {
		return err
	}
	var walk func(error) error
	walk = func(err error) error {
		if j, ok := err.(interface{ Unwrap() []error }); ok { //nolint:errorlint // a joined error's own parts
			parts := j.Unwrap()
			out := make([]error, len(parts))
			for i, p := range parts {
				out[i] = walk(p)
			}
			return errors.Join(out...)
		}
		if ce, ok := errors.AsType[*ConfigError](err); ok {
			if src, ok := s.sources[strings.TrimPrefix(ce.Name, "-")]; ok && src.Kind == "file" {
				return &SettingError{File: src.File, Line: src.Line, Key: strings.TrimPrefix(ce.Name, "-"), Value: src.Value, Err: err}
			}
		}
		return err
	}
	return walk(err)
}

// logSources is the "source" attribute group of the effective configuration: where each
// flag given a value got it.
func logSources(fs *flag.FlagSet) (slog.Attr, bool) {
	s := settingsOf(fs)
	if s == nil || len(s.sources) == 0 {
		return slog.Attr{}, false
	}
	attrs := make([]slog.Attr, 0, len(s.sources))
	for _, name := range slices.Sorted(maps.Keys(s.sources)) {
		attrs = append(attrs, slog.String(name, s.sources[name].String()))
	}
	return slog.Attr{Key: "source", Value: slog.GroupValue(attrs...)}, true
}

// suggest is `; did you mean "top-k"?` for a key one or two edits away from a known one.
func suggest(key string) string {
	best, bestDist := "", 3
	for _, k := range slices.Sorted(maps.Keys(catalog())) {
		if d := editDistance(key, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// SettingsGroup is one component's flags in a settings file, registered with their
// defaults on Flags.
type SettingsGroup struct {
	Name  string // "extractor"
	About string // which binaries run the component
	Flags *flag.FlagSet
}

// WriteSettings writes the settings file `graphrag init` writes: a header, then every
// flag of groups, group by group, each with its help text and default as comments and
// no value, so that the file sets nothing until a value is written after a key. A flag
// already written by an earlier group is skipped.
func WriteSettings(w io.Writer, groups []SettingsGroup) error {
	var b strings.Builder
	b.WriteString(settingsHeader)
	done := map[string]bool{ConfigFlagName: true}
	for _, g := range groups {
		var flags []*flag.Flag
		g.Flags.VisitAll(func(f *flag.Flag) {
			if !done[f.Name] {
				done[f.Name] = true
				flags = append(flags, f)
			}
		})
		if len(flags) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n# %s\n# == %s: %s\n# %s\n", rule, g.Name, g.About, rule)
		for _, f := range flags {
			b.WriteString("\n")
			for _, line := range wrap(f.Usage, 86) {
				fmt.Fprintf(&b, "# %s\n", line)
			}
			fmt.Fprintf(&b, "# default: %s\n%s:\n", yamlScalar(f.DefValue), f.Name)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

const rule = "======================================================================"

const settingsHeader = `# GraphRAG settings, written by graphrag init (docs/configuration.md).
#
# The binaries read this file when given -config FILE or GRAPHRAG_CONFIG=FILE:
# graphrag up, mcp and eval, and the extractor, grapher, summarizer and query
# services. A key is the name of a flag; a key with no value keeps the default shown
# above it. A flag on the command line wins over its environment variable
# (GRAPHRAG_TOP_K for top-k), which wins over this file, which wins over the default.
# Each binary takes the keys of its own flags and ignores the keys of components it
# does not run (the extractor ignores graph-store and the neo4j keys), so one file
# serves them all; a key that no binary knows is an error naming its line.
# Values are checked as flags are: an invalid one stops the binary with its line.
`

// yamlScalar writes s so that YAML reads it back as the same text: plain when it is,
// double-quoted otherwise ("" for the empty string).
func yamlScalar(s string) string {
	if s != "" {
		var n yaml.Node
		if yaml.Unmarshal([]byte("k: "+s), &n) == nil && len(n.Content) == 1 {
			m := n.Content[0]
			if len(m.Content) == 2 && m.Content[1].Kind == yaml.ScalarNode && m.Content[1].Tag != "!!null" &&
				m.Content[1].Value == s && m.Content[1].Style == 0 {
				return s
			}
		}
	}
	return fmt.Sprintf("%q", s)
}

// wrap splits text into lines of at most width characters at spaces.
func wrap(text string, width int) []string {
	var lines []string
	var cur strings.Builder
	for w := range strings.FieldsSeq(text) {
		if cur.Len() > 0 && cur.Len()+1+len(w) > width {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(w)
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}
