package milvusstore

import (
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

// quoteString returns s as a double-quoted string literal of the Milvus
// boolean expression language. Ids and attribute values come from outside,
// so everything that could end the literal or change its meaning is escaped:
// backslash and double quote, and control characters, which the grammar does
// not allow raw. Control characters use \uXXXX (exactly four digits) rather
// than \x, whose digit count the grammar leaves open. Other runes pass through
// as UTF-8. s must be valid UTF-8 (checked by callers: the gRPC layer rejects
// anything else).
func quoteString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '"':
			b.WriteString(`\"`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// idsExpr returns `id in ["a", "b"]`.
func idsExpr(ids []string) string {
	var b strings.Builder
	b.WriteString(fieldID)
	b.WriteString(" in [")
	for i, id := range ids {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteString(id))
	}
	b.WriteByte(']')
	return b.String()
}

// filterExpr translates a vectorstore.Filter into a Milvus boolean
// expression; "" means no filter. Attribute conditions are sorted by key so
// that the same filter always gives the same expression.
func filterExpr(f vectorstore.Filter) (string, error) {
	var parts []string
	if len(f.IDs) > 0 {
		for _, id := range f.IDs {
			if !utf8.ValidString(id) {
				return "", fmt.Errorf("%w: filter id %q is not valid UTF-8", vectorstore.ErrInvalidArgument, id)
			}
		}
		parts = append(parts, idsExpr(f.IDs))
	}
	keys := make([]string, 0, len(f.Attrs))
	for k := range f.Attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := f.Attrs[k]
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return "", fmt.Errorf("%w: filter attribute %q=%q is not valid UTF-8", vectorstore.ErrInvalidArgument, k, v)
		}
		parts = append(parts, fieldAttrs+"["+quoteString(k)+"] == "+quoteString(v))
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	for i, p := range parts {
		parts[i] = "(" + p + ")"
	}
	return strings.Join(parts, " and "), nil
}
