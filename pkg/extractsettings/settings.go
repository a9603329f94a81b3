package extractsettings

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/errkind"
	"github.com/graphrag/graphrag/pkg/prompts"
	"github.com/graphrag/graphrag/pkg/schema"
)

// Limits of the settings (Validate).
const (
	MaxTypes        = 40
	MaxTypeBytes    = 64
	MaxDomainBytes  = 2000
	MaxExamples     = 5
	MaxExampleBytes = 4000
	MaxSystemBytes  = 8000
	// MaxExampleItems bounds the entities and the relationships of one example.
	MaxExampleItems = 25
)

// Settings are a corpus's extraction settings. The zero value is the built-in prompt.
type Settings struct {
	// EntityTypes are the only entity types the model may give (none: open types,
	// guided by the consolidated taxonomy). Upper case with underscores.
	EntityTypes []string `json:"entity_types,omitempty" yaml:"entity_types,omitempty"`
	// Domain says what the corpus is about, in a sentence or two.
	Domain string `json:"domain,omitempty" yaml:"domain,omitempty"`
	// Examples are worked examples shown to the model.
	Examples []Example `json:"examples,omitempty" yaml:"examples,omitempty"`
	// SystemPrompt replaces the built-in instructions of the system prompt; the output
	// format (prompts.OutputContract), the domain, types and examples still follow it.
	SystemPrompt string `json:"system_prompt,omitempty" yaml:"system_prompt,omitempty"`
}

// Example is a text and the extraction expected from it.
type Example struct {
	Text   string `json:"text" yaml:"text"`
	Output Output `json:"output" yaml:"output"`
}

// Output is an extraction in the format the model answers in (prompts.ExtractionSchema).
type Output struct {
	Entities      []Entity       `json:"entities" yaml:"entities"`
	Relationships []Relationship `json:"relationships" yaml:"relationships"`
}

// Entity is one entity of an example's output.
type Entity struct {
	Name        string `json:"name" yaml:"name"`
	Type        string `json:"type" yaml:"type"`
	Description string `json:"description" yaml:"description"`
}

// Relationship is one relationship of an example's output; Strength is 1..10.
type Relationship struct {
	Source      string `json:"source" yaml:"source"`
	Target      string `json:"target" yaml:"target"`
	Type        string `json:"type" yaml:"type"`
	Description string `json:"description" yaml:"description"`
	Strength    int    `json:"strength" yaml:"strength"`
}

// ErrInvalid is the error of settings that do not validate (errkind.Invalid, public:
// the API answers 400 with its message).
var ErrInvalid = errkind.Public(errkind.Invalid, "invalid extraction settings")

// FieldError names the setting at fault and the problem.
type FieldError struct {
	Field, Problem string
}

func (e *FieldError) Error() string   { return "extraction settings: " + e.Field + ": " + e.Problem }
func (e *FieldError) Is(t error) bool { return t == ErrInvalid }

// ErrorKind and PublicKind make the message the API's answer (errkind).
func (e *FieldError) ErrorKind() errkind.Kind { return errkind.Invalid }
func (e *FieldError) PublicKind() bool        { return true }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

var (
	typeName   = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	unknownKey = regexp.MustCompile(`field (\S+) not found in type \S+`)
)

// IsZero reports whether the settings are the built-in prompt's.
func (s Settings) IsZero() bool {
	return len(s.EntityTypes) == 0 && s.Domain == "" && len(s.Examples) == 0 && s.SystemPrompt == ""
}

// Validate checks every setting and names the first one at fault: type names (upper
// case with underscores, no duplicates), lengths, and examples whose entities use the
// listed types and whose relationships join entities of the same example.
func (s Settings) Validate() error {
	if len(s.EntityTypes) > MaxTypes {
		return fieldErr("entity_types", "has %d types, limit %d", len(s.EntityTypes), MaxTypes)
	}
	known := map[string]bool{}
	for i, t := range s.EntityTypes {
		f := fmt.Sprintf("entity_types[%d]", i)
		if err := checkType(f, t); err != nil {
			return err
		}
		if known[t] {
			return fieldErr(f, "%q is listed twice", t)
		}
		known[t] = true
	}
	if err := checkText("domain", s.Domain, MaxDomainBytes, false); err != nil {
		return err
	}
	if err := checkText("system_prompt", s.SystemPrompt, MaxSystemBytes, false); err != nil {
		return err
	}
	if len(s.Examples) > MaxExamples {
		return fieldErr("examples", "has %d examples, limit %d", len(s.Examples), MaxExamples)
	}
	for i, ex := range s.Examples {
		if err := ex.validate(fmt.Sprintf("examples[%d]", i), known); err != nil {
			return err
		}
	}
	return nil
}

func (ex Example) validate(f string, known map[string]bool) error {
	if err := checkText(f+".text", ex.Text, MaxExampleBytes, true); err != nil {
		return err
	}
	o := ex.Output
	if len(o.Entities) == 0 {
		return fieldErr(f+".output.entities", "is empty: an example shows at least one entity")
	}
	if len(o.Entities) > MaxExampleItems || len(o.Relationships) > MaxExampleItems {
		return fieldErr(f+".output", "has %d entities and %d relationships, limit %d each", len(o.Entities), len(o.Relationships), MaxExampleItems)
	}
	names := map[string]bool{}
	for j, e := range o.Entities {
		g := fmt.Sprintf("%s.output.entities[%d]", f, j)
		if err := checkText(g+".name", e.Name, MaxTypeBytes*4, true); err != nil {
			return err
		}
		if err := checkType(g+".type", e.Type); err != nil {
			return err
		}
		if len(known) > 0 && !known[e.Type] {
			return fieldErr(g+".type", "%q is not one of entity_types", e.Type)
		}
		if err := checkText(g+".description", e.Description, MaxExampleBytes, false); err != nil {
			return err
		}
		names[e.Name] = true
	}
	for j, r := range o.Relationships {
		g := fmt.Sprintf("%s.output.relationships[%d]", f, j)
		for _, end := range []struct{ field, name string }{{"source", r.Source}, {"target", r.Target}} {
			if !names[end.name] {
				return fieldErr(g+"."+end.field, "%q is not the name of an entity of the example", end.name)
			}
		}
		if r.Source == r.Target {
			return fieldErr(g, "joins %q to itself", r.Source)
		}
		if err := checkType(g+".type", r.Type); err != nil {
			return err
		}
		if err := checkText(g+".description", r.Description, MaxExampleBytes, false); err != nil {
			return err
		}
		if r.Strength < 1 || r.Strength > 10 {
			return fieldErr(g+".strength", "%d is outside 1..10", r.Strength)
		}
	}
	return nil
}

func checkType(f, t string) error {
	switch {
	case t == "":
		return fieldErr(f, "is empty")
	case len(t) > MaxTypeBytes:
		return fieldErr(f, "is %d bytes long, limit %d", len(t), MaxTypeBytes)
	case !typeName.MatchString(t):
		return fieldErr(f, "%q is not an upper-case name with underscores (e.g. %s)", t, suggestType(t))
	}
	return nil
}

// suggestType is t in the form types take.
func suggestType(t string) string {
	s := canonicalType(t)
	if s == "" || !typeName.MatchString(s) {
		return "PROTEIN_COMPLEX"
	}
	return s
}

func checkText(f, s string, limit int, required bool) error {
	switch {
	case !utf8.ValidString(s):
		return fieldErr(f, "is not valid UTF-8")
	case required && strings.TrimSpace(s) == "":
		return fieldErr(f, "is empty")
	case !required && s != "" && strings.TrimSpace(s) == "":
		return fieldErr(f, "holds only spaces (leave it out instead)")
	case len(s) > limit:
		return fieldErr(f, "is %d bytes long, limit %d", len(s), limit)
	}
	return nil
}

// Guide is what the settings add to the extraction prompt (prompts.ExtractionSystemWith).
func (s Settings) Guide() prompts.ExtractionGuide {
	g := prompts.ExtractionGuide{System: s.SystemPrompt, Domain: s.Domain, Types: s.EntityTypes}
	for _, ex := range s.Examples {
		out := ex.Output
		if out.Relationships == nil {
			out.Relationships = []Relationship{}
		}
		b, _ := json.Marshal(out) // plain strings and ints: cannot fail
		g.Examples = append(g.Examples, prompts.ExtractionExample{Text: ex.Text, Output: string(b)})
	}
	return g
}

// ParseYAML reads settings from YAML (or JSON, a subset); a key it does not know is
// an error with its line. The settings are validated.
func ParseYAML(data []byte) (Settings, error) {
	var s Settings
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err := dec.Decode(&s)
	if errors.Is(err, io.EOF) {
		return s, fmt.Errorf("%w: no settings in the file (write {} to go back to the built-in prompt)", ErrInvalid)
	}
	if te, ok := errors.AsType[*yaml.TypeError](err); ok {
		// "line 2: field foo not found in type extractsettings.Settings": no Go type
		// names in a user's message.
		msgs := make([]string, len(te.Errors))
		for i, m := range te.Errors {
			msgs[i] = unknownKey.ReplaceAllString(m, `unknown key "$1"`)
		}
		return s, fmt.Errorf("%w: %s", ErrInvalid, strings.Join(msgs, "; "))
	}
	if err != nil {
		return s, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return s, s.Validate()
}

// YAML writes settings as ParseYAML reads them.
func (s Settings) YAML() ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("encoding settings as YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encoding settings as YAML: %w", err)
	}
	return b.Bytes(), nil
}

// Record is the stored settings of a corpus: Version counts their changes (0: never
// set, the built-in prompt).
type Record struct {
	Corpus    string    `json:"corpus"`
	Version   int       `json:"version"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	Settings  Settings  `json:"settings"`
}

// Load reads a corpus's settings; a corpus without any gets version 0.
func Load(ctx context.Context, kv bus.KV, corpus string) (Record, error) {
	r, _, err := load(ctx, kv, corpus)
	return r, err
}

func load(ctx context.Context, kv bus.KV, corpus string) (Record, uint64, error) {
	r := Record{Corpus: corpus}
	e, err := kv.Entry(ctx, schema.ExtractionSettingsKey(corpus))
	if errors.Is(err, bus.ErrNotFound) {
		return r, 0, nil
	}
	if err != nil {
		return r, 0, fmt.Errorf("reading the extraction settings of %s: %w", corpus, err)
	}
	if err := json.Unmarshal(e.Value, &r); err != nil {
		return r, 0, fmt.Errorf("decoding the extraction settings of %s: %w", corpus, err)
	}
	return r, e.Revision, nil
}

// Save validates s and stores it as the corpus's settings under the next version,
// by compare-and-set; settings equal to the current ones keep their version (saving
// them again changes nothing). It returns the stored record.
func Save(ctx context.Context, kv bus.KV, corpus string, s Settings) (Record, error) {
	if err := s.Validate(); err != nil {
		return Record{}, err
	}
	for {
		cur, rev, err := load(ctx, kv, corpus)
		if err != nil {
			return cur, err
		}
		if rev != 0 && reflect.DeepEqual(normal(cur.Settings), normal(s)) {
			return cur, nil
		}
		next := Record{Corpus: corpus, Version: cur.Version + 1, UpdatedAt: time.Now().UTC(), Settings: s}
		b, err := json.Marshal(next)
		if err != nil {
			return cur, fmt.Errorf("encoding extraction settings: %w", err)
		}
		key := schema.ExtractionSettingsKey(corpus)
		if rev == 0 {
			_, err = kv.Create(ctx, key, b)
		} else {
			_, err = kv.Update(ctx, key, b, rev)
		}
		if errors.Is(err, bus.ErrConflict) {
			continue // saved meanwhile: compare with what was saved
		}
		if err != nil {
			return cur, fmt.Errorf("writing the extraction settings of %s: %w", corpus, err)
		}
		return next, nil
	}
}

// normal is s as JSON reads it back: empty lists are nil.
func normal(s Settings) Settings {
	b, _ := json.Marshal(s)
	var out Settings
	_ = json.Unmarshal(b, &out)
	return out
}
