package service

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"reflect"
	"strings"

	"github.com/peterbourgon/ff/v3"
)

// ParseFlags parses args into fs, then fills every flag not given on the
// command line from the environment variable PREFIX_FLAG_NAME (envPrefix and
// the flag name upper-cased, dashes and dots turned into underscores), so
// flags win over the environment and flag defaults are the documented
// defaults. An empty envPrefix reads no environment at all, so bare names
// such as HTTP_ADDR can never leak in by accident. Each flag's usage gains
// its variable name, so -help documents both. A -help flag yields an error
// wrapping flag.ErrHelp.
//
// When fs has the -config flag (RegisterConfigFlag), the settings file it (or
// PREFIX_CONFIG) names fills the flags left unset by both: flags win over the
// environment, the environment over the file, the file over the defaults. A key of the
// file that no binary knows is an error naming the file and line, as is a value its
// flag refuses; a key of a flag fs does not define is another binary's and is skipped.
// Sources then tells where each value came from.
func ParseFlags(fs *flag.FlagSet, args []string, envPrefix string) error {
	var opts []ff.Option
	settings := settingsOf(fs)
	if settings != nil {
		settings.sources = map[string]Source{}
		opts = append(opts, ff.WithConfigFileFlag(ConfigFlagName), ff.WithConfigFileParser(settings.parser(fs)))
	}
	if envPrefix != "" {
		opts = append(opts, ff.WithEnvVarPrefix(envPrefix))
		fs.VisitAll(func(f *flag.Flag) {
			note := "(env " + EnvVarName(envPrefix, f.Name) + ")"
			if !strings.Contains(f.Usage, note) {
				f.Usage = strings.TrimSpace(f.Usage + " " + note)
			}
		})
	}
	if err := ff.Parse(fs, args, opts...); err != nil {
		return fmt.Errorf("parsing %s configuration: %w", fs.Name(), err)
	}
	if settings != nil {
		settings.recordSources(fs, args)
	}
	return nil
}

var envReplacer = strings.NewReplacer("-", "_", ".", "_", "/", "_")

// EnvVarName is the environment variable ParseFlags reads for a flag.
func EnvVarName(prefix, flagName string) string {
	return strings.ToUpper(prefix) + "_" + envReplacer.Replace(strings.ToUpper(flagName))
}

// Mask is what a set Secret prints instead of its value.
const Mask = "****"

// Secret is a string that never prints its value: String, LogValue, GoString
// and MarshalText all yield Mask ("" when unset, so an absent secret is
// visible in logs). It is a flag.Value, so fs.Var(&cfg.APIKey, ...) works.
// Use Value to read it where it is needed.
type Secret string

// Value returns the secret itself.
func (s Secret) Value() string { return string(s) }

// String implements fmt.Stringer and flag.Value with the mask.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return Mask
}

// GoString keeps %#v from printing the value.
func (s Secret) GoString() string { return `service.Secret("` + s.String() + `")` }

// LogValue implements slog.LogValuer with the mask.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText masks the secret in JSON and any text encoding, including when
// it sits in a slice or map logged with slog.Any.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Set implements flag.Value.
func (s *Secret) Set(v string) error {
	*s = Secret(v)
	return nil
}

var (
	_ flag.Value     = (*Secret)(nil)
	_ slog.LogValuer = Secret("")
	_ fmt.Stringer   = Secret("")
	_ fmt.GoStringer = Secret("")
)

// LogConfig logs cfg, a struct or pointer to one, once at info level as the
// attributes of a "config" group: one attribute per exported field, named by
// its `config:"name"` tag or else its Go name, nested structs flattened with
// dotted names (embedded structs without a prefix), Secret fields masked and
// `config:"-"` fields skipped. Other values are logged as slog would log them,
// so a type with a LogValue or MarshalText method controls its own output.
func LogConfig(logger *slog.Logger, cfg any) {
	if logger == nil {
		return
	}
	var attrs []slog.Attr
	v := reflect.ValueOf(cfg)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() == reflect.Struct {
		attrs = configAttrs(v, "", attrs)
	} else {
		attrs = append(attrs, slog.Any("value", cfg))
	}
	logger.LogAttrs(context.Background(), slog.LevelInfo, "effective configuration",
		slog.Attr{Key: "config", Value: slog.GroupValue(attrs...)})
}

// LogFlags logs the effective configuration of a process once, at info level: every
// flag fs defines, given or not, as an attribute of a "config" group named after the
// flag, with its value as the flag prints it (a Secret as Mask). It logs exactly what
// the binary accepts, nothing it does not read. With the -config flag, a "source"
// group says where each flag given a value got it: "flag", "env" or "file PATH:LINE".
func LogFlags(logger *slog.Logger, fs *flag.FlagSet) {
	if logger == nil {
		return
	}
	var attrs []slog.Attr
	fs.VisitAll(func(f *flag.Flag) { attrs = append(attrs, slog.String(f.Name, f.Value.String())) })
	groups := []slog.Attr{{Key: "config", Value: slog.GroupValue(attrs...)}}
	if src, ok := logSources(fs); ok {
		groups = append(groups, src)
	}
	logger.LogAttrs(context.Background(), slog.LevelInfo, "effective configuration", groups...)
}

var (
	logValuerType = reflect.TypeFor[slog.LogValuer]()
	secretType    = reflect.TypeFor[Secret]()
)

func configAttrs(v reflect.Value, prefix string, attrs []slog.Attr) []slog.Attr {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if tag, ok := f.Tag.Lookup("config"); ok {
			if tag == "-" {
				continue
			}
			if tag != "" {
				name = tag
			}
		}
		fv := v.Field(i)
		// Flatten nested structs unless they format themselves (time.Time,
		// a LogValuer): their fields are not config knobs.
		inner := fv
		for inner.Kind() == reflect.Pointer && !inner.IsNil() {
			inner = inner.Elem()
		}
		if inner.Kind() == reflect.Struct && !formatsItself(inner.Type()) {
			p := prefix + name + "."
			if f.Anonymous {
				p = prefix
			}
			attrs = configAttrs(inner, p, attrs)
			continue
		}
		attrs = append(attrs, slog.Any(prefix+name, fieldValue(fv)))
	}
	return attrs
}

func formatsItself(t reflect.Type) bool {
	return t.Implements(logValuerType) || reflect.PointerTo(t).Implements(logValuerType) ||
		t.Implements(textMarshalerType) || t.Implements(stringerType)
}

var (
	textMarshalerType = reflect.TypeFor[interface{ MarshalText() ([]byte, error) }]()
	stringerType      = reflect.TypeFor[fmt.Stringer]()
)

// fieldValue returns what to log for one field; Secrets (also behind a
// pointer) are masked here rather than trusting every handler to call
// LogValue.
func fieldValue(fv reflect.Value) any {
	if fv.Kind() == reflect.Pointer {
		if fv.IsNil() {
			return nil
		}
		fv = fv.Elem()
	}
	if fv.Type() == secretType {
		return Secret(fv.String()).String()
	}
	return fv.Interface()
}
