package milvusstore

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// Field names of the Milvus schema every collection of this driver has.
const (
	fieldID     = "id"
	fieldVector = "vector"
	fieldText   = "text"
	fieldAttrs  = "attrs"
	fieldSparse = "sparse" // BM25 output of the text field, lexical collections only
)

// errNotExpressible: the string cannot be written as a string literal of
// Milvus' expression language.
var errNotExpressible = errors.New("cannot be written in a Milvus filter expression (line breaks and invalid UTF-8 cannot)")

// quoteString returns s as a double-quoted string literal of the Milvus
// boolean expression language. Ids and attribute values come from outside,
// so the two characters that could end the literal or start an escape, '"'
// and '\', are escaped; everything else is written as it is. That is the
// only encoding both parsers agree on: Milvus Lite decodes no escape but \\
// and \" (\n, \t, \uXXXX stay as written, measured), while Milvus proper
// unquotes like Go's strconv.Unquote, which leaves raw characters alone. A
// raw line break is a syntax error in both and has no escape that both read,
// so strings with '\n' or '\r' (and invalid UTF-8, which gRPC refuses) give
// errNotExpressible.
func quoteString(s string) (string, error) {
	if !utf8.ValidString(s) || strings.ContainsAny(s, "\r\n") {
		return "", fmt.Errorf("%w: %q %w", vectorstore.ErrInvalidArgument, s, errNotExpressible)
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\\' || c == '"' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String(), nil
}

// quoteKey quotes a JSON key for `attrs[...]`. Keys with control
// characters are refused as well: the JSON text stores them escaped
// (\u0001) and Milvus' path lookup does not match them (measured on Milvus
// Lite), so such a filter would silently match nothing.
func quoteKey(k string) (string, error) {
	if strings.ContainsFunc(k, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", fmt.Errorf("%w: attribute key %q has control characters, which Milvus cannot filter on", vectorstore.ErrInvalidArgument, k)
	}
	return quoteString(k)
}

// expressible reports whether quoteString accepts s.
func expressible(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsAny(s, "\r\n")
}

// idsExpr returns `id in ["a", "b"]`. Every id must be expressible.
func idsExpr(ids []string) (string, error) {
	var b strings.Builder
	b.WriteString(fieldID)
	b.WriteString(" in [")
	for i, id := range ids {
		q, err := quoteString(id)
		if err != nil {
			return "", err
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(q)
	}
	b.WriteByte(']')
	return b.String(), nil
}

// filterExpr translates a vectorstore.Filter into a Milvus boolean
// expression; "" means no filter. none reports a filter that cannot match
// anything: all its IDs are ones Upsert refuses to store, so no query is
// needed. Attribute conditions are sorted by key so that the same filter
// always gives the same expression. An attribute key or value that cannot be
// expressed is an ErrInvalidArgument: silently matching nothing would hide
// records that do have it.
func filterExpr(f vectorstore.Filter) (expr string, none bool, err error) {
	var parts []string
	if len(f.IDs) > 0 {
		ids := storableIDs(f.IDs)
		if len(ids) == 0 {
			return "", true, nil
		}
		e, err := idsExpr(ids)
		if err != nil {
			return "", false, err
		}
		parts = append(parts, e)
	}
	keys := make([]string, 0, len(f.Attrs))
	for k := range f.Attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		qk, err := quoteKey(k)
		if err != nil {
			return "", false, fmt.Errorf("filter attribute key: %w", err)
		}
		qv, err := quoteString(f.Attrs[k])
		if err != nil {
			return "", false, fmt.Errorf("filter attribute %q: %w", k, err)
		}
		parts = append(parts, fieldAttrs+"["+qk+"] == "+qv)
	}
	if len(parts) <= 1 {
		return strings.Join(parts, ""), false, nil
	}
	for i, p := range parts {
		parts[i] = "(" + p + ")"
	}
	return strings.Join(parts, " and "), false, nil
}

// storableID reports whether Upsert accepts id: non-empty, at most
// MaxIDBytes, expressible in filters (so that Get, Delete and filters can
// always find it again).
func storableID(id string) bool {
	return id != "" && len(id) <= MaxIDBytes && expressible(id)
}

// storableIDs returns the distinct ids that can exist: others cannot have
// been stored, so lookups skip them.
func storableIDs(ids []string) []string {
	seen := make(map[string]struct{}, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if _, dup := seen[id]; dup || !storableID(id) {
			continue
		}
		seen[id] = struct{}{}
		out = append(out, id)
	}
	return out
}
