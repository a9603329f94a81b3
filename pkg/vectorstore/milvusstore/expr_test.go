package milvusstore

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// readLiteral reads a double-quoted literal at the start of s the way Milvus
// Lite does (measured: only \\ and \" are escapes; every other character is
// itself) and returns its value and the rest of s.
func readLiteral(t testing.TB, s string) (string, string) {
	t.Helper()
	if !strings.HasPrefix(s, `"`) {
		t.Fatalf("no literal at %q", s)
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
			if i == len(s) || (s[i] != '\\' && s[i] != '"') {
				t.Fatalf("escape that Milvus Lite would not decode in %q", s)
			}
			b.WriteByte(s[i])
		case '"':
			return b.String(), s[i+1:]
		case '\n', '\r':
			t.Fatalf("raw line break in literal %q (a syntax error)", s)
		default:
			b.WriteByte(s[i])
		}
	}
	t.Fatalf("unterminated literal %q", s)
	return "", ""
}

// splitExpr separates an expression into its literals and its skeleton (the
// expression with each literal replaced by _), so that tests can check that
// no input changed the structure.
func splitExpr(t testing.TB, expr string) (skeleton string, lits []string) {
	t.Helper()
	var b strings.Builder
	for {
		i := strings.IndexByte(expr, '"')
		if i < 0 {
			b.WriteString(expr)
			return b.String(), lits
		}
		b.WriteString(expr[:i])
		b.WriteByte('_')
		var lit string
		lit, expr = readLiteral(t, expr[i:])
		lits = append(lits, lit)
	}
}

func TestQuoteString(t *testing.T) {
	tests := []struct {
		in, want string
		err      bool
	}{
		{"", `""`, false},
		{"plain", `"plain"`, false},
		{`say "hi"`, `"say \"hi\""`, false},
		{`a\b`, `"a\\b"`, false},
		{`trailing\`, `"trailing\\"`, false},
		{`\"`, `"\\\""`, false},
		{`\n stays text`, `"\\n stays text"`, false},
		{"tab\tand \x01 raw", "\"tab\tand \x01 raw\"", false},
		{"漢字 🚀", `"漢字 🚀"`, false},
		{`it's`, `"it's"`, false},
		{"line\nbreak", "", true},
		{"carriage\rreturn", "", true},
		{"bad \xff utf8", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := quoteString(tc.in)
			if tc.err {
				if !errors.Is(err, vectorstore.ErrInvalidArgument) {
					t.Fatalf("quoteString(%q) = %q, %v; want ErrInvalidArgument", tc.in, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("quoteString(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestFilterExpr(t *testing.T) {
	tests := []struct {
		name string
		f    vectorstore.Filter
		want string
		none bool
		err  bool
	}{
		{"zero", vectorstore.Filter{}, "", false, false},
		{"ids", vectorstore.Filter{IDs: []string{"a", `b"`, "a"}}, `id in ["a", "b\""]`, false, false},
		{"attr", vectorstore.Filter{Attrs: map[string]string{"k": "v"}}, `attrs["k"] == "v"`, false, false},
		{"attrs sorted, with ids", vectorstore.Filter{IDs: []string{"x"}, Attrs: map[string]string{"z": "1", "a": `\`}},
			`(id in ["x"]) and (attrs["a"] == "\\") and (attrs["z"] == "1")`, false, false},
		{"only unstorable ids", vectorstore.Filter{IDs: []string{"", "a\nb", strings.Repeat("x", MaxIDBytes+1)}}, "", true, false},
		{"unstorable ids dropped", vectorstore.Filter{IDs: []string{"a\nb", "c"}}, `id in ["c"]`, false, false},
		{"value with a line break", vectorstore.Filter{Attrs: map[string]string{"k": "a\nb"}}, "", false, true},
		{"key with a control character", vectorstore.Filter{Attrs: map[string]string{"k\x01": "v"}}, "", false, true},
		{"value with a control character", vectorstore.Filter{Attrs: map[string]string{"k": "v\x01"}}, "attrs[\"k\"] == \"v\x01\"", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, none, err := filterExpr(tc.f)
			if tc.err {
				if !errors.Is(err, vectorstore.ErrInvalidArgument) {
					t.Fatalf("filterExpr = %q, %v; want ErrInvalidArgument", got, err)
				}
				return
			}
			if err != nil || got != tc.want || none != tc.none {
				t.Fatalf("filterExpr = %q, none=%v, %v; want %q, none=%v", got, none, err, tc.want, tc.none)
			}
		})
	}
}

// FuzzQuoteString: every expressible string round-trips through both
// parsers' reading of the literal (Milvus Lite's, modeled by readLiteral,
// and Milvus' strconv.Unquote); every other string is refused.
func FuzzQuoteString(f *testing.F) {
	for _, s := range []string{"", "a", `"`, `\`, `\"`, `\\"`, "\t\x01", "漢", "a\nb", "\xff", `" or id != "`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := quoteString(s)
		if !expressible(s) {
			if !errors.Is(err, vectorstore.ErrInvalidArgument) {
				t.Fatalf("quoteString(%q) = %q, %v; want ErrInvalidArgument", s, q, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("quoteString(%q): %v", s, err)
		}
		got, rest := readLiteral(t, q)
		if got != s || rest != "" {
			t.Fatalf("Milvus Lite reads %q as %q (rest %q), want %q", q, got, rest, s)
		}
		if u, err := strconv.Unquote(q); err != nil || u != s {
			t.Fatalf("strconv.Unquote(%q) = %q, %v; want %q", q, u, err, s)
		}
	})
}

// FuzzFilterExpr: whatever the ids and attributes, the expression keeps its
// structure and carries them only as literals.
func FuzzFilterExpr(f *testing.F) {
	f.Add("a", "b", "k", "v")
	f.Add(`"] or id != "`, `\`, `k"]`, `" or 1 == 1`)
	f.Fuzz(func(t *testing.T, id1, id2, k, v string) {
		flt := vectorstore.Filter{IDs: []string{id1, id2}, Attrs: map[string]string{k: v}}
		expr, none, err := filterExpr(flt)
		if err != nil {
			if !errors.Is(err, vectorstore.ErrInvalidArgument) {
				t.Fatalf("filterExpr: %v, want ErrInvalidArgument", err)
			}
			if _, kerr := quoteKey(k); kerr == nil && expressible(v) {
				t.Fatalf("filterExpr refused an expressible attribute %q=%q: %v", k, v, err)
			}
			return
		}
		ids := storableIDs(flt.IDs)
		if none {
			if len(ids) != 0 {
				t.Fatalf("filterExpr said none with storable ids %q", ids)
			}
			return
		}
		skeleton, lits := splitExpr(t, expr)
		wantSkel := "(id in [" + strings.TrimSuffix(strings.Repeat("_, ", len(ids)), ", ") + `]) and (attrs[_] == _)`
		if skeleton != wantSkel {
			t.Fatalf("filterExpr(%+v) = %q: skeleton %q, want %q", flt, expr, skeleton, wantSkel)
		}
		want := append(append([]string{}, ids...), k, v)
		if strings.Join(lits, "\x00") != strings.Join(want, "\x00") || len(lits) != len(want) {
			t.Fatalf("filterExpr(%+v) = %q: literals %q, want %q", flt, expr, lits, want)
		}
	})
}
